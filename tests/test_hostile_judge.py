"""A judge that answers too much, or repeats the key: nothing leaks, nothing blows up.

`dagtui run` with the real litellm client against the stub's hostile modes
(`stub_server.HOSTILE_KINDS`): a judge echoing the key it was sent (in a usable reason and in
an unusable answer) and a key written into `--api-base` reach none of the JSON report,
`results.jsonl`, the traces, the cache's rows or the terminal; a 100 MB answer and a gzip
bomb fail their step as "answer too large" with the child's peak memory bounded (its own
`wait4` rusage); a long reason, a long error body and a server that never answers each end
the step with the right kind. `BoundedTransport` is also tested on its own, on httpx's
mock transport: what it decodes, where it stops, what it refuses.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import sqlite3
import subprocess
import sys
import uuid
import zlib
from pathlib import Path

import httpx
import pytest
from stub_server import Fault, StubServer, prompt_kind

from dagtui.cli import main
from dagtui.judges.bounds import MAX_REASON_CHARS, AnswerTooLarge
from dagtui.judges.transport import BoundedTransport, UnboundedEncoding

ROOT = Path(__file__).resolve().parent.parent
MEETING = ROOT / "graphs" / "meeting_summary.toml"
CASES = ROOT / "graphs" / "meeting_summary.cases.jsonl"
MODEL = "openai/gpt-4.1-mini"


@pytest.fixture(autouse=True)
def _ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CI", "1")
    monkeypatch.chdir(tmp_path)
    for name in ("DAGTUI_API_KEY", "DAGTUI_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def fresh_secret(label: str) -> str:
    """A key no earlier test has shown dagtui (remembered secrets last for the process)."""
    return f"sk-{label}-{uuid.uuid4().hex}"


def run_args(base: str, *extra: str) -> list[str]:
    return ["run", str(MEETING), "--cases", str(CASES), "--model", MODEL, "--api-base", base,
            "--retries", "0", "--timeout", "20", "--json", "out/r.json",
            "--trace-dir", "out/traces", "--cache-dir", "out/cache", *extra]


def everything_written(tmp_path: Path) -> str:
    """Every file the run wrote, as text (the cache's bytes too), plus every cache row."""
    out = tmp_path / "out"
    texts = [p.read_bytes().decode("utf-8", "replace") for p in sorted(out.rglob("*"))
             if p.is_file()]
    for db in (out / "cache").glob("*.sqlite"):
        with sqlite3.connect(db) as conn:
            texts += [repr(row) for row in conn.execute("SELECT * FROM calls")]
    return "\n".join(texts)


def echoing(body: dict) -> Fault:
    """The key echoed in a usable reason, except on the non-binary node, where the answer
    echoing it is unusable (so it ends up as the step's raw error text)."""
    return Fault("echo_key_bad" if prompt_kind(body) == "non_binary" else "echo_key")


# ---------------------------------------------------------------- keys


def test_a_key_echoed_by_the_judge_is_in_no_report_trace_cache_or_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    key = fresh_secret("env")
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with StubServer(echoing) as stub:
        code = main(run_args(stub.base_url))
        seen = [r["body"] for r in stub.requests]
    out, err = capsys.readouterr()
    assert seen  # the stub was asked, and echoed what it was sent
    written = everything_written(tmp_path)
    for text in (out, err, written):
        assert key not in text
    report = json.loads((tmp_path / "out" / "r.json").read_text(encoding="utf-8"))
    assert code == 3  # the unusable answers are judge errors
    steps = [s for r in report["results"] for s in r.get("steps", [])]
    assert any("I was called with [redacted]" in (s.get("reason") or "") for s in steps)
    assert "Sorry, no verdict. I was called with [redacted]" in written  # the raw, masked
    rows = list(sqlite3.connect(tmp_path / "out" / "cache" / "cache.sqlite")
                .execute("SELECT response FROM calls"))
    assert rows and any("[redacted]" in r[0] for r in rows)  # stored, masked


@pytest.mark.parametrize("via", ["auto", "litellm"])
@pytest.mark.parametrize("form", ["query", "userinfo"])
def test_a_key_inside_api_base_is_masked_in_reports_traces_and_the_cache(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str, via: str):
    key = fresh_secret("url")
    with StubServer(echoing) as stub:
        if form == "query":
            base = f"{stub.base_url}?key={key}"
        else:
            base = stub.base_url.replace("http://", f"http://judge:{key}@")
        main(run_args(base, "-q", "--via", via))
    out, err = capsys.readouterr()
    written = everything_written(tmp_path)
    for text in (out, err, written):
        assert key not in text
    report = json.loads((tmp_path / "out" / "r.json").read_text(encoding="utf-8"))
    shown = report["judge"]["api_base"]
    assert f"127.0.0.1:{stub.port}/v1" in shown and "[redacted]" in shown
    trace = json.loads(next((tmp_path / "out" / "traces").iterdir()).read_text("utf-8"))
    assert trace["judge"]["api_base"] == shown
    with sqlite3.connect(tmp_path / "out" / "cache" / "cache.sqlite") as conn:
        bases = {row[0] for row in conn.execute("SELECT api_base FROM calls")}
    # aiohttp under litellm refuses a URL's credentials beside the Authorization header, so
    # with `user:key@` every call fails and nothing is cached; the OpenAI-compatible route
    # sends them as Basic auth (as httpx did), and the answers are cached; masked all the same
    assert bases == ({shown} if form == "query" or via == "auto" else set())


def test_an_unusable_judge_line_masks_a_key_in_the_url(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]):
    key = fresh_secret("halt")
    with StubServer(lambda body: Fault("401")) as stub:
        code = main(run_args(f"{stub.base_url}?api_key={key}"))
    err = capsys.readouterr().err
    assert code == 3 and "judge unusable" in err and f"127.0.0.1:{stub.port}" in err
    assert key not in err and key not in everything_written(tmp_path)


# ---------------------------------------------------------------- sizes


#: `dagtui run` in this child, then its own peak RSS (VmHWM, kB) on the last line of stderr.
#: Not `wait4`'s rusage: a child forked from a pytest process that has grown to hundreds of MB
#: inherits that high-water mark through fork and exec, while VmHWM belongs to the memory
#: map exec made, so it counts the run alone.
PEAK_OF_RUN = """
import re, sys
from dagtui.cli import main
try:
    code = main(sys.argv[1:])
finally:
    status = open("/proc/self/status").read()
    print("VmHWM_KB", re.search(r"VmHWM:\\s+(\\d+)", status).group(1), file=sys.stderr)
sys.exit(code)
"""


def run_child(tmp_path: Path, base: str, *extra: str) -> tuple[int, str, float]:
    """`dagtui run` in a process of its own: (exit code, stdout + stderr, peak RSS in MB of
    that process alone, `PEAK_OF_RUN`)."""
    proc = subprocess.run([sys.executable, "-c", PEAK_OF_RUN, *run_args(base, *extra)],
                          capture_output=True, cwd=tmp_path, timeout=240,
                          env={**os.environ, "CI": "1", "PYTHONIOENCODING": "utf-8"})
    text = proc.stdout.decode() + proc.stderr.decode()
    peak_kb = int(text.rsplit("VmHWM_KB", 1)[1].split()[0])
    return proc.returncode, text, peak_kb / 1024


@pytest.mark.slow
@pytest.mark.parametrize("via", ["auto", "litellm"])
@pytest.mark.parametrize("kind", ["huge", "gzip_bomb"])
def test_a_huge_or_gzip_bombed_answer_fails_the_step_in_bounded_memory(tmp_path: Path,
                                                                       kind: str, via: str):
    """Six cases at once, each answered with 100 MB (or a 1 GB gzip bomb of 1 MB): read
    whole, the answers alone would take 600 MB (6 GB); bounded, each read stops at 8 MiB."""
    with StubServer(lambda body: Fault(kind), huge_bytes=100 << 20,
                    bomb_bytes=1 << 30) as stub:
        code, output, peak_mb = run_child(tmp_path, stub.base_url, "--via", via)
    assert code == 3, output
    assert "answer too large" in output and "Traceback" not in output
    report = json.loads((tmp_path / "out" / "r.json").read_text(encoding="utf-8"))
    assert {r["error_kind"] for r in report["results"]} == {"too_large"}
    assert all("after decompression" in r["error"] for r in report["results"])
    print(f"{kind} via {via}: peak RSS of the run {peak_mb:.0f} MB")
    assert peak_mb < 450, f"peak RSS {peak_mb:.0f} MB"


def test_a_long_reason_fails_the_step_and_is_not_cached(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]):
    with StubServer(lambda body: Fault("huge_reason"), reason_chars=MAX_REASON_CHARS + 1) as stub:
        code = main(run_args(stub.base_url, "-q"))
    out = capsys.readouterr().out
    assert code == 3
    flat = " ".join(out.split())  # the summary wraps long lines at 80 columns
    assert f"answer too large: a reason of {MAX_REASON_CHARS + 1:,} characters" in flat
    report = json.loads((tmp_path / "out" / "r.json").read_text(encoding="utf-8"))
    assert {r["error_kind"] for r in report["results"]} == {"too_large"}
    with sqlite3.connect(tmp_path / "out" / "cache" / "cache.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 0


def test_a_huge_error_body_is_cut_and_the_status_still_decides(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    with StubServer(lambda body: Fault("huge_error"), huge_bytes=50 << 20) as stub:
        code = main(run_args(stub.base_url, "-q"))
    out = capsys.readouterr().out
    assert code == 3 and "Traceback" not in out
    report = json.loads((tmp_path / "out" / "r.json").read_text(encoding="utf-8"))
    assert {r["error_kind"] for r in report["results"]} == {"5xx"}
    assert max(len(r["error"]) for r in report["results"]) < 1000  # one line, not 50 MB


def test_a_judge_that_never_answers_times_out(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]):
    with StubServer(lambda body: Fault("never")) as stub:
        code = main([*run_args(stub.base_url, "-q"), "--timeout", "1"])
    capsys.readouterr()
    report = json.loads((tmp_path / "out" / "r.json").read_text(encoding="utf-8"))
    assert code == 3 and {r["error_kind"] for r in report["results"]} == {"timeout"}


# ---------------------------------------------------------------- the transport alone


def through(body: bytes, *, status: int = 200, headers: dict[str, str] | None = None,
            limit: int = 1 << 20, error_limit: int = 1 << 10) -> bytes:
    """`body` served by httpx's mock transport, read through a BoundedTransport."""
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(status, headers=headers or {}, stream=httpx.ByteStream(body))

    async def go() -> bytes:
        transport = BoundedTransport(httpx.MockTransport(handler), limit=limit,
                                     error_limit=error_limit)
        async with httpx.AsyncClient(transport=transport) as client:
            response = await client.get("http://judge.test/")
            return response.content

    got = asyncio.run(go())
    assert sent[0].headers["accept-encoding"] == "gzip, deflate"
    return got


def test_the_transport_decodes_gzip_and_both_kinds_of_deflate():
    text = json.dumps({"reason": "fine " * 5000, "verdict": True}).encode()
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw_deflate = raw.compress(text) + raw.flush()
    assert through(gzip.compress(text), headers={"content-encoding": "gzip"}) == text
    assert through(zlib.compress(text), headers={"content-encoding": "deflate"}) == text
    assert through(raw_deflate, headers={"content-encoding": "deflate"}) == text
    assert through(text) == text


def test_the_transport_stops_a_bomb_and_a_long_body():
    bomb = gzip.compress(b"A" * (64 << 20), compresslevel=9)  # 64 MiB in about 64 kB
    with pytest.raises(AnswerTooLarge, match="over 1 MiB"):
        through(bomb, headers={"content-encoding": "gzip"})
    with pytest.raises(AnswerTooLarge, match="answer too large"):
        through(b"x" * ((1 << 20) + 1))
    assert len(through(b"x" * (1 << 20))) == 1 << 20  # exactly the cap is fine


def test_the_transport_cuts_error_bodies_and_refuses_encodings_it_cannot_bound():
    assert through(b"e" * 5000, status=500) == b"e" * 1024
    assert through(gzip.compress(b"e" * 5000), status=503,
                   headers={"content-encoding": "gzip"}) == b"e" * 1024
    for coding in ("br", "gzip, gzip", "zstd"):
        with pytest.raises(UnboundedEncoding):
            through(b"whatever", headers={"content-encoding": coding})


# ---------------------------------------------------------------- the terminal

#: a terminal title change (OSC ... BEL), a colour, a bidi override and a zero-width space
OSC, CSI, RLO, ZWSP = "\x1b]0;pwned\x07", "\x1b[31m", "\u202e", "\u200b"
RAW = ("\x1b", "\x07", RLO, ZWSP)
SHOWN = ("\\x1b]0;pwned\\x07", "\\u202e", "\\u200b")


def hostile_graph(tmp_path: Path) -> tuple[Path, Path]:
    """The meeting graph with a title-changing, reordering metric name and a zero-width
    space in a label, and two of its cases renamed likewise."""
    text = MEETING.read_text(encoding="utf-8")
    text = text.replace('name = "Format Correctness"',
                        'name = "Format\\u001b]0;pwned\\u0007 \\u202eCorrectness"')
    text = text.replace('"Correct order"', '"Correct\\u200border"')
    text = text.replace('cases = "meeting_summary.cases.jsonl"\n', "")
    graph = tmp_path / "hostile.toml"
    graph.write_text(text, encoding="utf-8")
    rows = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines()[:2]]
    for row, name in zip(rows, (f"swap{RLO}txt.exe", f"zero{ZWSP}width{CSI}"), strict=True):
        row["name"] = name
        row["expected"].pop("order", None)
    cases = tmp_path / "hostile.jsonl"
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return graph, cases


def assert_escaped(text: str, *shown: str) -> None:
    for ch in RAW:
        assert ch not in text, f"{ch!r} printed raw in {text!r}"
    for piece in shown:
        assert piece in text, f"{piece!r} not in {text!r}"


def test_calibrate_dry_run_prints_the_metric_name_and_model_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    graph, cases = hostile_graph(tmp_path)  # labels that fit the renamed verdict
    code = main(["calibrate", str(graph), "--cases", str(cases), "--dry-run",
                 "--model", f"openai/gpt{CSI}{RLO}"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_escaped(out + err, "\\x1b]0;pwned\\x07", "openai/gpt\\x1b[31m\\u202e")


def test_run_summary_progress_and_judge_errors_print_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    graph, cases = hostile_graph(tmp_path)
    with StubServer() as stub:
        code = main(["run", str(graph), "--cases", str(cases), "--model", MODEL,
                     "--api-base", stub.base_url, "--no-cache", "--retries", "0"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert_escaped(out + err, *SHOWN, "swap\\u202etxt.exe", "Correct\\u200border")
    assert "[1/2]" in out  # the progress lines (CI: one per case) were printed


def test_a_judge_error_body_with_escapes_prints_escaped(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]):
    """A 404 naming the model as sent: a model flag with escapes comes back in the judge's
    own error text, on the "judge unusable" line."""
    graph, cases = hostile_graph(tmp_path)
    with StubServer(lambda body: Fault("404")) as stub:
        code = main(["run", str(graph), "--cases", str(cases), "--model",
                     f"openai/x{OSC}{RLO}", "--api-base", stub.base_url, "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 3 and "judge unusable" in err
    assert_escaped(out + err, "openai/x\\x1b]0;pwned\\x07\\u202e")


def test_suite_summary_and_argparse_errors_print_escaped(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as stop:
        main(["run", f"--x{OSC}", str(MEETING)])
    assert stop.value.code == 2
    assert_escaped(capsys.readouterr().err, "--x\\x1b]0;pwned\\x07")


def test_for_markup_escapes_rich_markup_and_controls():
    from dagtui.text import for_markup, for_terminal

    assert for_markup(f"[red]{CSI}x") == "\\[red]\\x1b[31mx"
    assert for_terminal("a\nb\tc\rd\udc80") == "a\nb\tc\\rd\\udc80"

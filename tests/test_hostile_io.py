"""Hostile inputs and outputs: nothing hangs, nothing crashes after the work is done.

A FIFO, `/dev/zero` or a sparse gigabyte named as a graph or cases file is refused at once
(exit 2, a message naming the file and what it is), never read; deep nesting and 5,000-digit
numbers are one line with the file and line; a lone surrogate, NUL or escape byte in a case
name still gives JSON and JUnit that parse back; a report path that cannot be written fails
before the first judge call (counted at the stub).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from stub_server import StubServer

from dagtui import inputs
from dagtui.cli import main

pytestmark = pytest.mark.timeout(60)  # a regression hangs on a FIFO: fail, do not wait

ROOT = Path(__file__).resolve().parent.parent
MEETING = ROOT / "graphs" / "meeting_summary.toml"
CASES = ROOT / "graphs" / "meeting_summary.cases.jsonl"
SUITE = ROOT / "graphs" / "suites" / "spans.toml"
MODEL = "openai/gpt-4.1-mini"
#: a case name no UTF-8 file can hold (lone surrogate), with a NUL and a terminal escape
HOSTILE = "bad\udc80name\x00\x1b[31m"


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.toml"
    os.mkfifo(path)
    return path


@pytest.fixture
def sparse(tmp_path: Path) -> Path:
    """A 1 GiB file that takes no disk (a hole): reading it whole would take seconds and
    a gigabyte of memory."""
    path = tmp_path / "huge.toml"
    with open(path, "wb") as fh:
        fh.truncate(1 << 30)
    return path


@pytest.fixture
def no_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if dagtui.inputs reads a single byte of a file over 100 MB (the
    other inputs of the command, a graph say, read as usual)."""
    real_read = os.read

    def guarded(fd: int, n: int) -> bytes:
        if os.fstat(fd).st_size > 100_000_000:
            raise AssertionError(f"read {n} bytes of a file that should be refused unread")
        return real_read(fd, n)

    monkeypatch.setattr(inputs.os, "read", guarded)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def graph_with_cases(tmp_path: Path, cases: str) -> Path:
    text = MEETING.read_text(encoding="utf-8")
    path = tmp_path / "g.toml"
    path.write_text(text.replace('cases = "meeting_summary.cases.jsonl"', f'cases = "{cases}"'),
                    encoding="utf-8")
    assert f'cases = "{cases}"' in path.read_text(encoding="utf-8")
    return path


# -- part 2: nothing hangs -------------------------------------------------------------------

GRAPH_COMMANDS = [
    ["validate"], ["run", "--model", MODEL, "--api-base", "http://127.0.0.1:9"], ["test"],
    ["fmt"], ["fmt", "--check"], ["export", "--to", "mermaid"], ["step"], ["import"],
]


@pytest.mark.parametrize("command", GRAPH_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_fifo_or_device_as_the_graph_is_refused_at_once(capsys, fifo: Path, kind: str,
                                                        command: list[str]) -> None:
    target = fifo if kind == "fifo" else Path("/dev/zero")
    code, out = cli(capsys, command[0], target, *command[1:])
    assert code == 2, out
    assert str(target) in out
    assert ("FIFO" if kind == "fifo" else "character device") in out
    assert "Traceback" not in out


@pytest.mark.parametrize("command", [["run", "--model", MODEL], ["test"], ["step"]],
                         ids=lambda c: c[0])
@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "metric_dev_zero"])
def test_fifo_or_device_as_the_cases_file_is_refused(capsys, tmp_path: Path, fifo: Path,
                                                     kind: str, command: list[str]) -> None:
    if kind == "metric_dev_zero":  # `cases = "/dev/zero"` in [metric]
        argv = [command[0], graph_with_cases(tmp_path, "/dev/zero"), *command[1:]]
        shown = "/dev/zero"
    else:
        shown = str(fifo) if kind == "fifo" else "/dev/zero"
        argv = [command[0], MEETING, "--cases", shown, *command[1:]]
    code, out = cli(capsys, *argv, "--api-base", "http://127.0.0.1:9") \
        if command[0] == "run" else cli(capsys, *argv)
    assert code == 2, out
    assert shown in out and ("FIFO" in out or "character device" in out)


def test_a_real_process_on_a_fifo_returns_within_seconds(tmp_path: Path, fifo: Path) -> None:
    for argv in (["run", str(fifo), "--model", MODEL],
                 ["run", str(MEETING), "--cases", str(fifo), "--model", MODEL],
                 ["validate", str(fifo)]):
        proc = subprocess.run([sys.executable, "-m", "dagtui", *argv], capture_output=True,
                              text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "FIFO" in proc.stdout + proc.stderr


def test_a_fifo_or_deep_json_as_a_saved_trace_is_refused(capsys, tmp_path: Path,
                                                          fifo: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"dagtui_trace": 1,\n "steps": ' + "[" * 100_000 + "]" * 100_000 + "}",
                    encoding="utf-8")
    for trace, words in ((fifo, "FIFO"), (deep, "nesting too deep")):
        code, out = cli(capsys, "step", MEETING, "--trace", trace)
        assert code == 2 and str(trace) in out and words in out, out
        assert "Traceback" not in out


@pytest.mark.parametrize("argv", [
    ["validate", "{f}"], ["fmt", "{f}"], ["test", "{f}"], ["import", "{f}"],
    ["run", str(MEETING), "--cases", "{f}", "--model", MODEL],
    ["test", str(MEETING), "--cases", "{f}"],
], ids=lambda a: " ".join(a[:2]).replace(str(MEETING), "GRAPH"))
def test_an_oversized_file_is_refused_without_reading_it(capsys, sparse: Path, no_reads: None,
                                                         argv: list[str]) -> None:
    code, out = cli(capsys, *[a.replace("{f}", str(sparse)) for a in argv])
    assert code == 2, out
    assert str(sparse) in out and "MB" in out and "limited to" in out


def test_a_path_swapped_for_a_fifo_after_the_stat_cannot_block(fifo: Path,
                                                               monkeypatch) -> None:
    """The race: stat saw a regular file, then the path became a FIFO. The non-blocking
    open returns at once and the descriptor's own fstat refuses it."""
    regular = os.stat(MEETING)
    monkeypatch.setattr(inputs.os, "stat", lambda path: regular)
    with pytest.raises(inputs.InputError, match="FIFO"):
        inputs.read_bytes(fifo, limit=inputs.TOML_LIMIT)


def test_a_suite_with_a_device_for_cases_or_graph_is_refused(capsys, tmp_path: Path) -> None:
    code, out = cli(capsys, "run", SUITE, "--cases", "/dev/zero", "--model", MODEL)
    assert code == 2 and "/dev/zero" in out and "character device" in out
    suite = tmp_path / "s.toml"
    suite.write_text('[suite]\nname = "s"\ncases = "/dev/zero"\n\n[rules.r]\n'
                     'graph = "/dev/zero"\n', encoding="utf-8")
    code, out = cli(capsys, "validate", suite)  # the rule's graph file is unreadable input
    assert code == 2 and "character device" in out, out
    code, out = cli(capsys, "test", suite)
    assert code in (1, 2) and "character device" in out, out


def test_read_stops_at_the_limit_even_when_the_size_lies(tmp_path: Path) -> None:
    """A file growing between stat and read (or a /proc file reporting size 0) is read to
    limit + 1 bytes, not to its end."""
    path = tmp_path / "g.toml"
    path.write_bytes(b"x" * 5000)
    with pytest.raises(inputs.InputError, match="limit"):
        inputs.read_bytes(path, limit=4096)
    assert inputs.read_bytes(path, limit=5000) == b"x" * 5000


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"name": "a"}\n{"name": "\xff"}\n')
    with pytest.raises(inputs.InputError) as info:
        inputs.read_text(path, limit=1000, what="cases file")
    assert info.value.line == 2 and "not UTF-8" in str(info.value)


@pytest.mark.parametrize("command", ["validate", "fmt"])
def test_a_directory_walk_reports_a_fifo_and_never_opens_it(capsys, tmp_path: Path,
                                                           command: str) -> None:
    (tmp_path / "g.toml").write_text(MEETING.read_text(encoding="utf-8"), encoding="utf-8")
    os.mkfifo(tmp_path / "stray.toml")
    code, out = cli(capsys, command, tmp_path)
    assert f"{tmp_path / 'stray.toml'}: skipped: is a FIFO" in out
    assert code in (0, 1)  # the graph was checked or formatted; the FIFO is not an error


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "sparse"])
async def test_the_editor_shows_the_error_instead_of_hanging(fifo: Path, sparse: Path,
                                                             kind: str) -> None:
    from dagtui.tui.app import editor_app

    target = {"fifo": fifo, "dev_zero": Path("/dev/zero"), "sparse": sparse}[kind]
    app = editor_app(str(target), poll_interval=0, cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert app.editor.state.read_only
        message = " ".join(d.message for d in app.editor.state.diagnostics)
        assert {"fifo": "FIFO", "dev_zero": "character device", "sparse": "limited to"}[kind] \
            in message
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code in (0, None)


# -- part 3: parse limits, one line each -----------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000
LONG = "1" * 5000


@pytest.mark.parametrize(("name", "content", "line"), [
    ("deep.jsonl", '{"name": "a", "input": "x"}\n{"name": "b", "metadata": ' + DEEP + "}\n", 2),
    ("long.jsonl", '{"name": "a", "input": "x"}\n{"name": "b", "score": ' + LONG + "}\n", 2),
    ("deep.json", '[\n{"name": "a", "input": "x"},\n{"name": "b", "m": ' + DEEP + "}]\n", 3),
    ("long.json", '[\n{"name": "a", "input": "x"},\n{"name": "b", "m": ' + LONG + "}]\n", 3),
    ("long.toml", '[[cases]]\nname = "a"\nscore = ' + LONG + "\n", 3),
    ("deep.toml", '[[cases]]\nname = "a"\nm = ' + DEEP + "\n", 3),
], ids=["deep.jsonl", "long.jsonl", "deep.json", "long.json", "long.toml", "deep.toml"])
def test_deep_nesting_and_long_numbers_in_cases_are_one_line(capsys, tmp_path: Path, name: str,
                                                             content: str, line: int) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    code, out = cli(capsys, "test", MEETING, "--cases", path)
    assert code == 2
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert f"{path}:{line}:" in lines[0]
    assert ("nesting too deep" in lines[0]) == name.startswith("deep")
    assert ("5,000 digits" in lines[0]) == name.startswith("long")


@pytest.mark.parametrize("content", ['[metric]\nname = "x"\nthreshold = ' + LONG + "\n",
                                     '[metric]\nname = "x"\nx = ' + DEEP + "\n"],
                         ids=["long_number", "deep_nesting"])
def test_deep_nesting_and_long_numbers_in_a_graph_are_one_line(capsys, tmp_path: Path,
                                                               content: str) -> None:
    path = tmp_path / "g.toml"
    path.write_text(content, encoding="utf-8")
    for command in ("validate", "test", "run"):
        code, out = cli(capsys, command, path, *(["--model", MODEL] if command == "run" else []))
        assert code == 2, (command, out)
        errors = [ln for ln in out.splitlines() if "DAG001" in ln]
        assert len(errors) == 1 and f"{path}:3:" in errors[0], (command, out)
        assert "Traceback" not in out


@pytest.mark.parametrize("score", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_import_refuses_scores_that_are_not_finite(capsys, tmp_path: Path, score: str) -> None:
    doc = ('{"nodes": {"j": {"type": "BinaryJudgementNode", "criteria": "c", "label": null, '
           '"evaluation_params": ["input"], "children": ["t", "f"]}, '
           f'"t": {{"type": "VerdictNode", "verdict": true, "score": {score}}}, '
           '"f": {"type": "VerdictNode", "verdict": false, "score": 0}}}')
    source = tmp_path / "dag.json"
    source.write_text(doc, encoding="utf-8")
    out_path = tmp_path / "g.toml"
    code, out = cli(capsys, "import", source, "-o", out_path)
    assert code == 2
    assert "not a finite number" in out
    assert "judgement 'j'" in out or "verdict 't'" in out  # names where the score is
    assert len(out.strip().splitlines()) == 1 and not out_path.exists()


# -- part 3: reports always written, outputs checked first -----------------------------------

def hostile_cases(tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines()[:2]]
    rows[0]["name"] = HOSTILE
    path = tmp_path / "hostile.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_surrogate_nul_and_escape_in_case_names_still_give_every_report(tmp_path: Path) -> None:
    """A real process with stdout and stderr on pipes (strict UTF-8, where printing a lone
    surrogate raises): the run finishes, and its JSON, JUnit and traces read back."""
    cases = hostile_cases(tmp_path)
    env = {**os.environ, "CI": "1", "PYTHONIOENCODING": "utf-8"}
    with StubServer() as stub:
        proc = subprocess.run(
            [sys.executable, "-m", "dagtui", "run", str(MEETING), "--cases", str(cases),
             "--model", MODEL, "--api-base", stub.base_url, "--no-cache", "--retries", "0",
             "--json", "out/r.json", "--junit", "out/j.xml", "--trace-dir", "traces"],
            capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "\x1b" not in proc.stdout
    report = json.loads((tmp_path / "out" / "r.json").read_text(encoding="utf-8"))
    names = [r["case"] for r in report["results"]]
    assert "bad\\udc80name\x00\x1b[31m" in names  # the surrogate as visible text
    junit = ET.parse(tmp_path / "out" / "j.xml").getroot()
    shown = [c.get("name") for c in junit.iter("testcase")]
    assert "bad\\udc80name\\x00\\x1b[31m" in shown
    traces = sorted((tmp_path / "traces").iterdir())
    assert len(traces) == 2
    assert all(t.name.isascii() and t.name.isprintable() for t in traces)
    for t in traces:
        assert json.loads(t.read_text(encoding="utf-8"))["dagtui_trace"] == 1


def test_a_lone_surrogate_in_case_text_reaches_the_judge_as_visible_text(capsys,
                                                                        tmp_path: Path) -> None:
    row = json.loads(CASES.read_text(encoding="utf-8").splitlines()[0])
    row["actual_output"] += " \udc80"
    cases = tmp_path / "c.jsonl"
    cases.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with StubServer() as stub:
        code, out = cli(capsys, "run", MEETING, "--cases", cases, "--model", MODEL,
                        "--api-base", stub.base_url, "--no-cache", "--retries", "0")
        prompts = [m["content"] for r in stub.requests for m in r["body"]["messages"]]
    assert code == 0, out
    assert any("\\udc80" in p for p in prompts)


def test_logic_test_prints_hostile_case_names_escaped(tmp_path: Path) -> None:
    """`dagtui test` on pipes (strict UTF-8): the names print escaped, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "dagtui", "test", str(MEETING), "--cases",
         str(hostile_cases(tmp_path)), "-v"],
        capture_output=True, text=True, timeout=60, env={**os.environ,
                                                          "PYTHONIOENCODING": "utf-8"})
    assert proc.returncode in (0, 1), proc.stderr
    assert "bad\\udc80name\\x00\\x1b[31m" in proc.stdout and "\x1b" not in proc.stdout


def test_suite_reports_survive_hostile_case_names(tmp_path: Path, capsys) -> None:
    from dagtui.commands.run import run_suite
    from dagtui.run.spec import RunSpec

    rows = [json.loads(line) for line in
            (SUITE.parent / "spans.cases.jsonl").read_text(encoding="utf-8").splitlines()[:3]]
    rows[0]["name"] = HOSTILE
    cases = tmp_path / "c.jsonl"
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with StubServer() as stub:
        spec = RunSpec(model=MODEL, api_base=stub.base_url, api_key="test", no_cache=True,
                       concurrency=4, json_out=str(tmp_path / "s.json"),
                       junit=str(tmp_path / "s.xml"), trace_dir=str(tmp_path / "traces"),
                       quiet=True)
        code = run_suite(str(SUITE), str(cases), spec)
    capsys.readouterr()
    assert code in (0, 1, 3)
    text = (tmp_path / "s.json").read_text(encoding="utf-8")
    assert "bad\\\\udc80name" in text
    json.loads(text)
    root = ET.parse(tmp_path / "s.xml").getroot()
    assert any(c.get("name") == "bad\\udc80name\\x00\\x1b[31m" for c in root.iter("testcase"))
    assert all(p.name.isascii() for p in (tmp_path / "traces").iterdir())


def bad_targets(tmp_path: Path) -> list[tuple[str, str, str]]:
    """(flag, path, what the message says) for outputs that cannot be written."""
    a_file = tmp_path / "a_file"
    a_file.write_text("x", encoding="utf-8")
    pipe = tmp_path / "out.fifo"
    os.mkfifo(pipe)
    return [
        ("--json", str(tmp_path), "is a directory"),
        ("--junit", str(tmp_path), "is a directory"),
        ("--json", str(a_file / "r.json"), "not a directory"),
        ("--junit", str(a_file / "sub" / "j.xml"), "not a directory"),
        ("--trace-dir", str(a_file), "a directory is expected"),
        ("--trace-dir", str(a_file / "traces"), "not a directory"),
        ("--json", str(pipe), "FIFO"),
        ("--json", "/proc/dagtui-report.json", "cannot write in /proc"),
        ("--trace-dir", "/proc/dagtui-traces", "cannot write in"),
    ]


def test_bad_output_paths_fail_before_any_judge_call(capsys, tmp_path: Path) -> None:
    with StubServer() as stub:
        for flag, path, words in bad_targets(tmp_path):
            code, out = cli(capsys, "run", MEETING, "--model", MODEL, "--api-base",
                            stub.base_url, "--no-cache", flag, path)
            assert code == 2, (flag, path, out)
            assert f"{flag} {path}" in out and words in out, out
            assert stub.calls == 0


def test_bad_suite_output_paths_fail_before_any_judge_call(capsys, tmp_path: Path) -> None:
    with StubServer() as stub:
        for flag, path, words in bad_targets(tmp_path)[:6]:
            code, out = cli(capsys, "run", SUITE, "--model", MODEL, "--api-base",
                            stub.base_url, "--no-cache", flag, path)
            assert code == 2, (flag, path, out)
            assert f"{flag} {path}" in out and words in out, out
            assert stub.calls == 0


def test_bad_calibrate_output_paths_fail_before_any_judge_call(capsys, tmp_path: Path) -> None:
    with StubServer() as stub:
        for flag, path, words in bad_targets(tmp_path)[:4]:
            flag = "--markdown" if flag == "--junit" else flag
            code, out = cli(capsys, "calibrate", MEETING, "--model", MODEL, "--api-base",
                            stub.base_url, "--no-cache", flag, path)
            assert code == 2, (flag, path, out)
            assert f"{flag} {path}" in out and words in out, out
            assert stub.calls == 0

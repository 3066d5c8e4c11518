"""What the judge-answer cache holds and when it is used, end to end against the stub.

Only answers that parsed are stored (keyed on model, endpoint, request and sample), so a judge
that answered badly is asked again once it is fixed; `--no-cache` neither reads nor writes,
`--refresh` asks again and overwrites; `dagtui cache stats|clear` look into and prune the
file; and a damaged or unwritable cache file never stops a run.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from stub_server import Script, StubServer, first_user, prompt_kind, smart_answer

from dagtui.cli import main
from dagtui.graph.loader import load_file
from dagtui.judges import LiteLLMJudge
from dagtui.judges.cache import FILENAME, SCHEMA_VERSION, Cache, request_key
from dagtui.judges.litellm_judge import import_litellm
from dagtui.run.cases import Case, load_cases
from dagtui.run.engine import Engine

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
CASES = str(ROOT / "graphs" / "meeting_summary.cases.jsonl")
MODEL = "openai/stub-judge"
LABELLED = load_cases(CASES)
N_CASES = len(LABELLED)
#: judge steps per case when every answer is usable (extract, present, order)
STEPS = 3
NOBODY = 65534


# ---------------------------------------------------------------- helpers


def distinct(body: dict[str, Any]) -> dict[str, Any]:
    """`smart_answer` (every case passes), but with evidence of its own for each case, so
    no two cases send the same request (identical requests would share one call)."""
    answer = smart_answer(body)
    if prompt_kind(body) == "task":
        tag = hashlib.sha256(first_user(body).encode()).hexdigest()[:8]
        answer["output"] = f"Intro\nBody\nConclusion\n({tag})"
    return answer


class Switchable:
    """`distinct`, but answering `true` to the non-binary node until `fixed` is set."""

    def __init__(self) -> None:
        self.fixed = False
        self.reason = "stub picks the first label"

    def __call__(self, body: dict[str, Any]) -> Any:
        answer = distinct(body)
        if prompt_kind(body) == "non_binary":
            if not self.fixed:
                return {"reason": "looks fine", "verdict": True}
            answer["reason"] = self.reason
        return answer


def labelled(body: dict[str, Any]) -> dict[str, Any]:
    """Answers every node as the meeting cases' labels say, so each case scores its
    `expected_score` (1, 1, 0.4, 0.2, 0, 0): a mixed-up cache would show. The labels are
    read once, at import (the stub's thread answers while the test runs as nobody, who may
    not reach the clone)."""
    cases = LABELLED
    text = first_user(body)
    kind = prompt_kind(body)
    if kind == "task":
        case = next(c for c in cases if c.fields["actual_output"] in text)
        return {"reason": "read it", "output": case.expected["extract"]}
    evidence = re.search(r"Summary headings:\n(.*?)\n\nAnswer", text, re.S)
    assert evidence is not None, text
    case = next(c for c in cases if c.expected["extract"] == evidence.group(1))
    node = "present" if kind == "binary" else "order"
    return {"reason": "as labelled", "verdict": case.expected[node]}


def run_cli(stub: StubServer, cache_dir: Path, *extra: str, json_out: Path | None = None,
            cases: str = CASES, graph: str = MEETING) -> tuple[int, dict[str, Any] | None]:
    args = ["run", graph, "--cases", cases, "--model", MODEL, "--api-base",
            stub.base_url, "--retries", "0", "--cache-dir", str(cache_dir), "-q", *extra]
    if json_out is not None:
        args += ["--json", str(json_out)]
    code = main(args)
    report = json.loads(json_out.read_text()) if json_out is not None else None
    return code, report


def rows(cache_dir: Path) -> list[tuple[str, str]]:
    """(key, response) of every entry, read straight from the file."""
    db = sqlite3.connect(cache_dir / FILENAME)
    try:
        return sorted(db.execute("SELECT key, response FROM calls").fetchall())
    finally:
        db.close()


def scores(report: dict[str, Any]) -> dict[str, float | None]:
    return {r["case"]: r["score"] for r in report["results"]}


def expected_scores() -> dict[str, float | None]:
    return {c.name: c.expected_score for c in load_cases(CASES)}


def cache_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "cache" in line]


@pytest.fixture
def quiet_ci(monkeypatch):
    monkeypatch.setenv("CI", "1")


# ---------------------------------------------------------------- what is stored


def test_unusable_answers_are_not_cached_and_a_fixed_judge_is_asked_again(
        tmp_path, quiet_ci, capsys):
    responder = Switchable()
    with StubServer(responder) as stub:
        code, report = run_cli(stub, tmp_path, json_out=tmp_path / "r1.json")
        assert code == 3 and report["judge_errors"] == {"out_of_set": N_CASES}
        # per case: extract, present, order and its failed correction
        assert stub.calls == 4 * N_CASES
        # the usable answers (extract, present) are kept; the unusable ones are not
        assert len(rows(tmp_path)) == 2 * N_CASES
        responder.fixed = True
        code, report = run_cli(stub, tmp_path, json_out=tmp_path / "r2.json")
        assert code == 0 and report["passed"] == N_CASES
        assert stub.calls == 5 * N_CASES  # only the order node, once per case
        assert report["cached_steps"] == 2 * N_CASES
        assert len(rows(tmp_path)) == 3 * N_CASES
        code, report = run_cli(stub, tmp_path, json_out=tmp_path / "r3.json")
        assert code == 0 and stub.calls == 5 * N_CASES and report["calls"] == 0


def test_rerun_of_a_good_run_is_free_and_the_json_report_marks_cached_steps(
        tmp_path, quiet_ci):
    with StubServer(distinct) as stub:
        code, first = run_cli(stub, tmp_path, json_out=tmp_path / "r1.json")
        assert code == 0 and stub.calls == STEPS * N_CASES
        assert first["cached_steps"] == 0
        assert all(s["cached"] is False for r in first["results"] for s in r["steps"])
        code, again = run_cli(stub, tmp_path, json_out=tmp_path / "r2.json")
        assert code == 0 and stub.calls == STEPS * N_CASES
        assert again["calls"] == 0 and again["cached_steps"] == STEPS * N_CASES
        for result in again["results"]:
            assert result["cached_steps"] == STEPS
            assert all(s["cached"] is True for s in result["steps"])
        assert scores(again) == scores(first)


def test_no_cache_neither_reads_nor_writes(tmp_path, quiet_ci):
    responder = Switchable()
    responder.fixed = True
    with StubServer(responder) as stub:
        run_cli(stub, tmp_path)
        before = rows(tmp_path)
        calls = stub.calls
        responder.reason = "a different day"
        code, report = run_cli(stub, tmp_path, "--no-cache", json_out=tmp_path / "r.json")
        assert code == 0 and stub.calls == 2 * calls  # everything asked again
        assert report["cached_steps"] == 0
        assert rows(tmp_path) == before  # and nothing written
    fresh = tmp_path / "fresh"
    with StubServer(distinct) as stub:
        assert run_cli(stub, fresh, "--no-cache")[0] == 0
    assert not (fresh / FILENAME).exists()


def test_refresh_asks_again_and_overwrites(tmp_path, quiet_ci):
    responder = Switchable()
    responder.fixed = True
    with StubServer(responder) as stub:
        run_cli(stub, tmp_path)
        count = len(rows(tmp_path))
        responder.reason = "second opinion"
        code, report = run_cli(stub, tmp_path, "--refresh", json_out=tmp_path / "r.json")
        assert code == 0 and report["calls"] == STEPS * N_CASES
        assert report["cached_steps"] == 0
        stored = rows(tmp_path)
        assert len(stored) == count
        assert sum("second opinion" in response for _, response in stored) == N_CASES
        calls = stub.calls
        code, report = run_cli(stub, tmp_path, json_out=tmp_path / "r2.json")
        assert stub.calls == calls  # the refreshed answers are served now
        assert {r["reason"] for r in report["results"]} == {"second opinion"}


def test_no_cache_and_refresh_exclude_each_other(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", MEETING, "--no-cache", "--refresh"])
    assert exc.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_the_endpoint_is_part_of_the_key(tmp_path, quiet_ci):
    req = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    assert request_key("m", req, api_base="http://a/v1") != request_key("m", req,
                                                                        api_base="http://b/v1")
    assert request_key("m", req, api_base="http://a/v1/") == request_key("m", req,
                                                                         api_base="http://a/v1")
    assert request_key("m", req) != request_key("m", req, api_base="http://a/v1")
    with StubServer(distinct) as one, StubServer(distinct) as two:
        run_cli(one, tmp_path)
        code, report = run_cli(two, tmp_path, json_out=tmp_path / "r.json")
        assert code == 0 and two.calls == STEPS * N_CASES and report["cached_steps"] == 0
        assert len(rows(tmp_path)) == 2 * STEPS * N_CASES


# ---------------------------------------------------------------- corrections


CASE = Case("swapped", {"actual_output": "Body\n..\nIntro\n..\nConclusion"})


def meeting():
    return load_file(MEETING).graph


def judge(stub: StubServer, cache_dir: Path) -> LiteLLMJudge:
    return LiteLLMJudge(MODEL, api_base=stub.base_url, api_key="test", backoff=0.01,
                        cache=Cache(cache_dir))


def test_a_corrected_answer_replays_both_turns_with_no_call(tmp_path):
    answers = iter([{"reason": "hmm", "verdict": "Mostly fine"},
                    {"reason": "fixed", "verdict": "Two headings swapped"}])
    responder = Script([("Choose exactly one", lambda body: next(answers))])
    with StubServer(responder) as stub:
        first = Engine(meeting(), judge(stub, tmp_path)).run_sync(CASE)
        assert first.score == 0.4 and stub.calls == 4
        again = Engine(meeting(), judge(stub, tmp_path)).run_sync(CASE)
        assert stub.calls == 4 and again.calls == 0 and again.score == 0.4
        step = again.step("order")
        assert [c.purpose for c in step.calls] == ["answer", "correction"]
        assert step.cache_hit and all(c.cache_hit for c in step.calls)


def test_a_cached_first_turn_without_its_correction_is_asked_afresh(tmp_path):
    answers = iter([{"reason": "hmm", "verdict": "Mostly fine"},
                    {"reason": "fixed", "verdict": "Two headings swapped"},
                    {"reason": "right away", "verdict": "Two headings swapped"}])
    responder = Script([("Choose exactly one", lambda body: next(answers))])
    with StubServer(responder) as stub:
        Engine(meeting(), judge(stub, tmp_path)).run_sync(CASE)
        db = sqlite3.connect(tmp_path / FILENAME)
        with db:  # the correction is pruned away; the unusable first turn stays
            assert db.execute("DELETE FROM calls WHERE response LIKE '%fixed%'").rowcount == 1
        db.close()
        again = Engine(meeting(), judge(stub, tmp_path)).run_sync(CASE)
        assert again.error is None and again.score == 0.4
        assert stub.calls == 5 and again.calls == 1  # the order node asked once, afresh
        step = again.step("order")
        assert [(c.purpose, c.cache_hit) for c in step.calls] == [("answer", False)]
        assert step.reason == "right away"


def test_workers_open_the_cache_as_the_parent_does(tmp_path):
    parent = LiteLLMJudge(MODEL, cache=Cache(tmp_path, refresh=True))
    config = parent.worker_config(2)
    assert config["cache"] == {"directory": str(tmp_path), "refresh": True,
                               "read_only": False}
    worker = LiteLLMJudge.from_worker_config(config)
    assert worker.cache.refresh and worker.cache.writable
    assert LiteLLMJudge(MODEL).worker_config()["cache"] is None
    # a parent that could only read: its workers open the file read-only, silently
    said: list[str] = []
    reader = Cache(tmp_path, read_only=True, warn=said.append)
    assert reader.readable and not reader.writable and said == []
    reader.put("k", "m", {"raw": "x"})
    assert reader.get("k") is None and said == []


# ---------------------------------------------------------------- dagtui cache


def fill(cache_dir: Path) -> None:
    cache = Cache(cache_dir)
    for i in range(3):
        cache.put(f"a{i}", "openai/one", {"raw": "x" * 100})
    for i in range(2):
        cache.put(f"b{i}", "ollama/two", {"raw": "y"})
    cache.close()
    db = sqlite3.connect(cache_dir / FILENAME)
    with db:  # one entry of each model is ten days old
        db.execute("UPDATE calls SET created = ? WHERE key IN ('a0', 'b0')",
                   (time.time() - 10 * 86400,))
    db.close()


def test_cache_stats(tmp_path, capsys):
    fill(tmp_path)
    assert main(["cache", "stats", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{tmp_path / FILENAME}: 5 entries" in out and "KB" in out
    assert re.search(r"openai/one\s+3", out) and re.search(r"ollama/two\s+2", out)
    assert re.search(r"oldest \d{4}-\d\d-\d\d .* UTC, newest", out)


def test_cache_clear_by_model_by_age_and_all(tmp_path, capsys):
    fill(tmp_path)
    assert main(["cache", "clear", "--model", "ollama/two", "--cache-dir", str(tmp_path)]) == 0
    assert "removed 2 entries" in capsys.readouterr().out
    assert main(["cache", "clear", "--older-than", "1", "--cache-dir", str(tmp_path)]) == 0
    assert "removed 1 entry" in capsys.readouterr().out
    assert [k for k, _ in rows(tmp_path)] == ["a1", "a2"]
    assert main(["cache", "clear", "--cache-dir", str(tmp_path)]) == 0
    assert "removed 2 entries" in capsys.readouterr().out and rows(tmp_path) == []
    missing = tmp_path / "none"
    assert main(["cache", "stats", "--cache-dir", str(missing)]) == 0
    assert "no cache at" in capsys.readouterr().out and not missing.exists()


# ---------------------------------------------------------------- damaged caches


def good_cache_bytes(tmp_path: Path) -> bytes:
    """A real cache file big enough that a cut loses pages (WAL folded in)."""
    where = tmp_path / "good"
    cache = Cache(where)
    for i in range(300):
        cache.put(f"k{i}", "m", {"raw": "z" * 400})
    cache.close()
    db = sqlite3.connect(where / FILENAME)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return (where / FILENAME).read_bytes()


def damage(kind: str, cache_dir: Path, tmp_path: Path) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / FILENAME
    if kind == "truncated":
        data = good_cache_bytes(tmp_path)
        path.write_bytes(data[: len(data) // 2])
    elif kind == "foreign bytes":
        path.write_bytes(os.urandom(9000))
    elif kind == "text file":
        path.write_text("these are my notes, not a database\n" * 50)
    elif kind == "fifo":  # sqlite would wait on it forever
        os.mkfifo(path)
    elif kind == "wrong schema":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE calls (id INTEGER PRIMARY KEY, body BLOB)")
        db.execute("INSERT INTO calls (body) VALUES (x'00')")
        db.commit()
        db.close()


@pytest.mark.parametrize("kind", ["truncated", "foreign bytes", "text file", "wrong schema",
                                  "fifo"])
def test_an_unreadable_cache_is_set_aside_and_rebuilt(kind, tmp_path, quiet_ci, capsys):
    cache_dir = tmp_path / "c"
    damage(kind, cache_dir, tmp_path)
    with StubServer(labelled) as stub:
        code, report = run_cli(stub, cache_dir, json_out=tmp_path / "r.json")
        err = capsys.readouterr().err
        assert "Traceback" not in err and code == 1  # two cases score below 0.5
        assert scores(report) == expected_scores() and report["errors"] == 0
        assert len(cache_lines(err)) == 1 and "set aside" in cache_lines(err)[0]
        aside = list(cache_dir.glob(f"{FILENAME}.broken-*"))
        assert len(aside) == 1 and aside[0].name in err
        calls = stub.calls
        code, report = run_cli(stub, cache_dir, json_out=tmp_path / "r2.json")
        assert stub.calls == calls and report["calls"] == 0  # the new cache works
        assert scores(report) == expected_scores()
        assert cache_lines(capsys.readouterr().err) == []


def test_an_old_cache_without_the_endpoint_in_its_keys_is_emptied(tmp_path, quiet_ci, capsys):
    db = sqlite3.connect(tmp_path / FILENAME)
    db.execute("CREATE TABLE calls (key TEXT PRIMARY KEY, model TEXT, created REAL, "
               "response TEXT)")
    db.execute("INSERT INTO calls VALUES ('k', 'm', 1.0, '{\"raw\": \"true\"}')")
    db.commit()
    db.close()
    with StubServer() as stub:
        code, _ = run_cli(stub, tmp_path)
    assert code == 0
    err = capsys.readouterr().err
    assert "older dagtui" in err and "1 entries were dropped" in err
    db = sqlite3.connect(tmp_path / FILENAME)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("SELECT COUNT(*) FROM calls WHERE key = 'k'").fetchone()[0] == 0
    db.close()


@contextlib.contextmanager
def unprivileged() -> Iterator[None]:
    """File permissions do not bind root: run the block as nobody (effective uid only, so
    root comes back after). litellm and every dagtui module a run imports lazily are
    imported first, while every file is readable: the clone (dagtui's own source, for an
    editable install) may sit in a folder nobody cannot enter."""
    import_litellm()
    if os.geteuid() != 0:
        yield
        return
    preload_dagtui()
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)


def preload_dagtui() -> None:
    """Import every module of dagtui's core and commands (not the TUI: a run never opens
    it), so nothing is read from the clone while the test runs as nobody."""
    import pkgutil

    import dagtui

    for info in pkgutil.walk_packages(dagtui.__path__, "dagtui."):
        if info.name.startswith(("dagtui.tui", "dagtui.integrations", "dagtui.run.dask_worker",
                                 "dagtui.__main__")):
            continue
        with contextlib.suppress(ImportError):
            importlib.import_module(info.name)


@pytest.fixture
def open_dir(monkeypatch) -> Iterator[Path]:
    """A directory anyone may use (pytest's tmp_path is root's alone), as the cwd, holding
    a copy of the graph and its cases: the unprivileged part of a test reads only what is
    here, so it does not matter whether nobody may reach the clone (a checkout inside a
    0700 home or a `mktemp -d` folder)."""
    path = Path(tempfile.mkdtemp(prefix="dagtui-cache-"))
    path.chmod(0o777)
    for source in (MEETING, CASES):
        shutil.copy(source, path / Path(source).name)
        (path / Path(source).name).chmod(0o644)
    monkeypatch.chdir(path)
    yield path
    for sub in path.rglob("*"):
        with contextlib.suppress(OSError):
            sub.chmod(0o777)
    shutil.rmtree(path, ignore_errors=True)


def copies(open_dir: Path) -> dict[str, str]:
    """`run_cli`'s graph and cases: the copies `open_dir` holds."""
    return {"graph": str(open_dir / Path(MEETING).name),
            "cases": str(open_dir / Path(CASES).name)}


def settle(cache_dir: Path) -> None:
    """Close the cache as a finished run leaves it: the last connection gone, so sqlite has
    folded its WAL back in and removed the -wal and -shm files."""
    gc.collect()
    db = sqlite3.connect(cache_dir / FILENAME)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    assert not (cache_dir / f"{FILENAME}-wal").exists()


@pytest.mark.parametrize("what", ["file", "directory", "file and directory"])
def test_a_read_only_cache_is_read_but_not_written(what, open_dir, quiet_ci, capsys):
    cache_dir = open_dir / "c"
    half = open_dir / "half.jsonl"
    half.write_text("".join(Path(CASES).read_text().splitlines(keepends=True)[:3]))
    out = open_dir / "out"
    out.mkdir()
    out.chmod(0o777)
    with StubServer(labelled) as stub:
        run_cli(stub, cache_dir, cases=str(half))  # the first three cases are cached
        settle(cache_dir)
        stored = rows(cache_dir)
        calls = stub.calls
        if "file" in what:
            (cache_dir / FILENAME).chmod(0o444)
        if "directory" in what:  # sqlite cannot create its -wal/-shm/-journal files here
            cache_dir.chmod(0o555)
        capsys.readouterr()
        with unprivileged():  # the copies in open_dir: nobody may not reach the clone
            code, report = run_cli(stub, cache_dir, json_out=out / "r.json",
                                   **copies(open_dir))
        err = capsys.readouterr().err
        assert "Traceback" not in err and code == 1
        assert scores(report) == expected_scores() and report["errors"] == 0
        assert report["cached_steps"] > 0  # the cached half was read ...
        assert stub.calls - calls == report["calls"] > 0  # ... the rest asked
        lines = cache_lines(err)
        assert len(lines) == 1 and "cannot write" in lines[0], err
        assert rows(cache_dir) == stored  # ... and nothing written


def test_an_unusable_cache_directory_turns_caching_off_with_one_warning(
        open_dir, quiet_ci, capsys):
    locked = open_dir / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    with StubServer(labelled) as stub, unprivileged():
        code, report = run_cli(stub, locked / "c", json_out=open_dir / "r.json",
                               **copies(open_dir))
    err = capsys.readouterr().err
    assert "Traceback" not in err and code == 1 and scores(report) == expected_scores()
    lines = cache_lines(err)
    assert len(lines) == 1 and "caching is off" in lines[0]


def test_a_suite_run_uses_the_cache_and_refresh_asks_again(tmp_path, quiet_ci):
    correctness = ROOT / "graphs" / "suites" / "correctness.toml"
    suite = tmp_path / "s.toml"
    suite.write_text('[suite]\nname = "s"\n[rules.correct]\n'
                     f'graph = {json.dumps(str(correctness))}\n')
    cases = tmp_path / "c.jsonl"
    cases.write_text(json.dumps({"name": "a", "input": "Capital of France?",
                                 "expected_output": "Paris.", "actual_output": "Paris."}) + "\n")
    with StubServer() as stub:
        args = ["run", str(suite), "--cases", str(cases), "--model", MODEL, "--api-base",
                stub.base_url, "--cache-dir", str(tmp_path / "c"), "-q"]
        main(args)
        first = stub.calls
        assert first > 0 and len(rows(tmp_path / "c")) == first
        main(args)
        assert stub.calls == first  # served from the cache
        main([*args, "--refresh"])
        assert stub.calls == 2 * first and len(rows(tmp_path / "c")) == first

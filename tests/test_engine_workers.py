"""Cases spread over worker processes (`dagtui run --workers N`, `dagtui.workers`).

The worker path must be invisible in the results: same scores, paths, JUnit, exit code and
number of provider calls as the in-process run; a faulty endpoint or a dying worker ends
every case with a score or a reported judge error, never a hang. The workers share one
fork server (litellm preloaded once per test session), so these tests stay quick.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest
from stub_server import Fault, Script, StubServer

from dagtui.cases import Case, load_cases
from dagtui.cli import main
from dagtui.engine import Engine
from dagtui.judges import LiteLLMJudge
from dagtui.judges.labels import LabelsJudge
from dagtui.loader import load_file
from dagtui.workers import WORKER_ERROR, WorkerPool, resolve_workers, split

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
CASES = str(ROOT / "graphs" / "meeting_summary.cases.jsonl")


def run_args(stub, workers, out, *extra):
    return ["run", MEETING, "--cases", CASES, "--model", "openai/gpt-4.1-mini",
            "--api-base", stub.base_url, "--retries", "1", "--concurrency", "4",
            "--workers", str(workers), "--junit", str(out / f"j{workers}.xml"),
            "--json", str(out / f"r{workers}.json"), *extra]


def without_times(junit: str) -> str:
    return re.sub(r' time="[^"]*"', "", junit)


def outcome(report: dict) -> list[tuple]:
    return [(r["case"], r["score"], r["status"], json.dumps(r["path"]), r["error_kind"])
            for r in report["results"]]


def test_two_workers_give_the_in_process_results_and_calls(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    # the first case's headings are judged missing: one failing case among passing ones
    responder = Script([("NO-HEADINGS", {"reason": "a heading is missing", "verdict": False}),
                        ("Staging database is blocking Tom",
                         {"reason": "none found", "output": "NO-HEADINGS"})])
    results = {}
    with StubServer(responder) as stub:
        for workers in (1, 2):
            before = stub.calls
            code = main(run_args(stub, workers, tmp_path, "--no-cache"))
            report = json.loads((tmp_path / f"r{workers}.json").read_text())
            junit = without_times((tmp_path / f"j{workers}.xml").read_text())
            results[workers] = (code, outcome(report), junit, stub.calls - before,
                                report["calls"])
    out = capsys.readouterr().out
    n = len(load_cases(CASES))
    assert f"[{n}/{n}]" in out
    assert results[1] == results[2]
    code, rows, _, sent, counted = results[2]
    assert sent == counted > 0 and len(rows) == n
    assert code == 1 and [status for _, _, status, _, _ in rows].count("fail") == 1


def test_workers_share_the_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    with StubServer() as stub:
        assert main(run_args(stub, 2, tmp_path, "-q")) == 0
        first = stub.calls
        assert main(run_args(stub, 2, tmp_path, "-q")) == 0
        assert stub.calls == first > 0  # the second run is served from the shared file
    report = json.loads((tmp_path / "r2.json").read_text())
    assert report["calls"] == 0 and report["cache_hits"] >= first


def test_faults_through_workers_end_every_case(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    with StubServer(Script([("true or false", Fault("500"))])) as stub:
        start = time.monotonic()
        code = main(run_args(stub, 2, tmp_path, "--no-cache", "-q"))
        elapsed = time.monotonic() - start
    report = json.loads((tmp_path / "r2.json").read_text())
    assert code == 3 and elapsed < 30
    assert all(r["status"] == "error" and r["error_kind"] == "5xx" for r in report["results"])
    assert "judge errors (cases without a verdict, not failures): 5xx:" in capsys.readouterr().out


def test_a_killed_worker_becomes_judge_errors_not_a_hang():
    graph = load_file(MEETING).graph
    cases = [Case(f"case {i}", {"actual_output": f"Intro\nBody {i}\nConclusion"})
             for i in range(6)]
    with StubServer(latency=0.1) as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test",
                             concurrency=2, retries=0)
        pool = WorkerPool(Engine(graph, judge), cases, workers=2, concurrency=2,
                          stall_timeout=10)
        try:
            pool.start()
            victim = pool.processes[1]

            def kill_once(result):
                if victim.is_alive():
                    os.kill(victim.pid, signal.SIGKILL)

            start = time.monotonic()
            results = pool.run(kill_once)
            elapsed = time.monotonic() - start
        finally:
            pool.close()
    assert elapsed < 15 and len(results) == len(cases)
    assert [r.case for r in results] == [c.name for c in cases]
    lost = [r for r in results if r.status == "error"]
    assert lost and all(r.error_kind == WORKER_ERROR and "worker process 1" in r.error
                        for r in lost)
    assert all(r.status == "pass" for r in results[0::2])  # worker 0's share is untouched


def test_a_hung_worker_is_stopped_after_the_stall_timeout():
    graph = load_file(MEETING).graph
    cases = [Case(f"case {i}", {"actual_output": f"Intro\nBody {i}\nConclusion"})
             for i in range(4)]
    with StubServer(latency=0.1) as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test",
                             concurrency=2, retries=0)
        pool = WorkerPool(Engine(graph, judge), cases, workers=2, concurrency=2,
                          stall_timeout=1.0)
        try:
            pool.start()
            os.kill(pool.processes[1].pid, signal.SIGSTOP)  # alive, silent: a hang
            start = time.monotonic()
            results = pool.run()
            elapsed = time.monotonic() - start
        finally:
            pool.close()
    assert elapsed < 8
    assert [r.status for r in results[0::2]] == ["pass", "pass"]
    assert all(r.error_kind == WORKER_ERROR and "hung" in r.error for r in results[1::2])


def test_worker_count_resolution():
    graph = load_file(MEETING).graph
    judge = LiteLLMJudge("openai/gpt-4.1-mini")
    assert resolve_workers("auto", 5, judge) == 1
    assert resolve_workers("auto", 500, judge) == min(os.cpu_count() or 1, 4)
    assert resolve_workers(3, 5, judge) == 3
    assert resolve_workers(3, 500, LabelsJudge()) == 1  # nothing to spread
    with pytest.raises(ValueError):
        resolve_workers(0, 5, judge)
    assert split(20, 3) == [7, 7, 6] and sum(split(5, 2)) == 5
    assert graph.metric.name


def test_bad_workers_flag_is_a_usage_error(capsys):
    assert main(["run", MEETING, "--cases", CASES, "--workers", "two"]) == 2
    assert "--workers" in capsys.readouterr().err


def test_api_evaluate_with_workers_matches_in_process():
    import dagtui

    with StubServer() as stub:
        opts = {"judge": "openai/gpt-4.1-mini", "api_base": stub.base_url, "api_key": "test",
                "cache": False, "concurrency": 4}
        one = dagtui.evaluate(MEETING, CASES, workers=1, **opts)
        two = dagtui.evaluate(MEETING, CASES, workers=2, **opts)
    assert [(r.case, r.score, r.describe_path()) for r in two.results] == \
        [(r.case, r.score, r.describe_path()) for r in one.results]
    assert two.calls == one.calls > 0 and two.exit_code() == one.exit_code() == 0

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
import threading
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
from dagtui.workers import (
    AUTO_MIN_CASES,
    AUTO_MIN_CONCURRENCY,
    WORKER_ERROR,
    WarmPool,
    evaluate_in_workers,
    resolve_workers,
    split,
)

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
CASES = str(ROOT / "graphs" / "meeting_summary.cases.jsonl")
CORRECTNESS = str(ROOT / "graphs" / "suites" / "correctness.toml")
SPANS = str(ROOT / "graphs" / "suites" / "spans.cases.jsonl")


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
        with WarmPool(stall_timeout=10) as pool:
            batch = pool.batch(Engine(graph, judge), cases, workers=2, concurrency=2)
            victim = batch.processes[1]

            def kill_once(result):
                if victim.is_alive():
                    os.kill(victim.pid, signal.SIGKILL)

            start = time.monotonic()
            results = batch.run(kill_once)
            elapsed = time.monotonic() - start
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
        with WarmPool(stall_timeout=1.0) as pool:
            batch = pool.batch(Engine(graph, judge), cases, workers=2, concurrency=2)
            os.kill(batch.processes[1].pid, signal.SIGSTOP)  # alive, silent: a hang
            start = time.monotonic()
            results = batch.run()
            elapsed = time.monotonic() - start
    assert elapsed < 8
    assert [r.status for r in results[0::2]] == ["pass", "pass"]
    assert all(r.error_kind == WORKER_ERROR and "hung" in r.error for r in results[1::2])


def test_worker_count_resolution():
    graph = load_file(MEETING).graph
    judge = LiteLLMJudge("openai/gpt-4.1-mini", concurrency=AUTO_MIN_CONCURRENCY)
    # few calls in flight: one process (with its lanes) is as fast at any size
    assert resolve_workers("auto", 10_000, LiteLLMJudge("openai/gpt-4.1-mini",
                                                        concurrency=8)) == 1
    assert resolve_workers("auto", 5, judge) == 1
    assert resolve_workers("auto", 500, judge) == min(os.cpu_count() or 1, 4)
    assert resolve_workers("auto", AUTO_MIN_CASES - 1, judge) == 1
    assert resolve_workers("auto", AUTO_MIN_CASES, judge) == min(os.cpu_count() or 1, 4)
    assert resolve_workers(3, 5, judge) == 3
    assert resolve_workers(3, 500, LabelsJudge()) == 1  # nothing to spread
    with pytest.raises(ValueError):
        resolve_workers(0, 5, judge)
    assert split(20, 3) == [7, 7, 6] and sum(split(5, 2)) == 5
    assert graph.metric.name


def test_bad_workers_flag_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:  # the parser refuses it, naming flag and value
        main(["run", MEETING, "--cases", CASES, "--workers", "two"])
    assert exited.value.code == 2
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


def _judge(stub: StubServer, concurrency: int = 4) -> LiteLLMJudge:
    return LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test",
                        concurrency=concurrency, retries=0)


def _rows(results) -> list[tuple]:
    return [(r.case, r.score, r.status, r.describe_path(), r.calls) for r in results]


def test_a_warm_pool_runs_two_graphs_in_a_row_with_the_same_processes():
    """Two batches, each with its own graph, judge and cases, on one pool: the results equal
    the in-process ones and no process is started for the second batch."""
    import asyncio

    from dagtui.batch import evaluate_cases

    batches = [(MEETING, load_cases(CASES)), (CORRECTNESS, load_cases(SPANS)[:8])]
    with StubServer() as stub:
        engines = [(Engine(load_file(g).graph, _judge(stub)), c) for g, c in batches]
        alone = [asyncio.run(evaluate_cases(e, c, concurrency=4)) for e, c in engines]
        with WarmPool() as pool:
            pooled, pids = [], []
            for engine, cases in engines:
                pooled.append(evaluate_in_workers(engine, cases, workers=2, concurrency=4,
                                                  pool=pool))
                pids.append([p.pid for p in pool.processes])
            started = pool.started
    assert [_rows(r.results) for r in pooled] == [_rows(r.results) for r in alone]
    assert [r.calls for r in pooled] == [r.calls for r in alone] and all(r.calls for r in alone)
    assert started == 2 and pids[0] == pids[1]
    assert not pool.processes  # closed: nothing left running


def test_a_pool_replaces_a_lost_worker_for_the_next_batch():
    graph = load_file(MEETING).graph
    cases = [Case(f"case {i}", {"actual_output": f"Intro\nBody {i}\nConclusion"})
             for i in range(4)]
    with StubServer() as stub, WarmPool() as pool:
        engine = Engine(graph, _judge(stub, 2))
        first = pool.batch(engine, cases, workers=2, concurrency=2)
        os.kill(first.processes[1].pid, signal.SIGKILL)
        lost = first.run()
        second = pool.batch(engine, cases, workers=2, concurrency=2).run()
        idle = pool.processes[0]
        os.kill(idle.pid, signal.SIGKILL)  # dies between batches
        idle.join(5)
        third = pool.batch(engine, cases, workers=2, concurrency=2).run()
        started = pool.started
    assert all(r.error_kind == WORKER_ERROR for r in lost[1::2])
    assert [r.status for r in second + third] == ["pass"] * 8 and started == 4


def test_closing_a_pool_ends_a_running_batch_with_worker_errors():
    """What a cancelled suite run does (Ctrl+C): close from another thread; the batch
    returns promptly, its unfinished cases as worker errors, and every process is reaped."""
    graph = load_file(MEETING).graph
    cases = [Case(f"case {i}", {"actual_output": f"Intro\nBody {i}\nConclusion"})
             for i in range(6)]
    with StubServer(latency=5) as stub:
        pool = WarmPool()
        batch = pool.batch(Engine(graph, _judge(stub, 2)), cases, workers=2, concurrency=2)
        procs = list(batch.processes)
        threading.Timer(0.5, pool.close).start()
        start = time.monotonic()
        results = batch.run()
        elapsed = time.monotonic() - start
        pool.close()
    assert elapsed < 4 and len(results) == len(cases)
    assert all(r.error_kind == WORKER_ERROR and "interrupted" in r.error for r in results)
    assert not any(p.is_alive() for p in procs)
    with pytest.raises(RuntimeError):
        pool.batch(Engine(graph, _judge(stub, 2)), cases, workers=2, concurrency=2)

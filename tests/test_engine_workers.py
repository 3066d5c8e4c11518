"""Cases spread over Dask workers (`dagtui run --workers N`, `--scheduler`, `dagtui.run.cluster`).

The Dask path must be invisible in the results: same scores, paths, JUnit, exit code and
number of provider calls as the in-process run; a faulty endpoint or a lost worker ends
every case with a score or a reported `worker` error, never a hang or a silently lost case;
the cache has one writer (the client), so a rerun makes no call and starts no worker. The
API-level tests share one `LocalCluster` (its start is the slow part); the last tests run a
scheduler and two workers started with Dask's own command-line tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the Dask tests need dagtui[dask]")

from stub_server import Fault, Script, StubServer  # noqa: E402

from dagtui.cli import main  # noqa: E402
from dagtui.graph.loader import load_file  # noqa: E402
from dagtui.judges import LiteLLMJudge  # noqa: E402
from dagtui.judges.cache import Cache  # noqa: E402
from dagtui.judges.labels import LabelsJudge  # noqa: E402
from dagtui.run.batch import evaluate_cases  # noqa: E402
from dagtui.run.cases import Case, load_cases  # noqa: E402
from dagtui.run.cluster import (  # noqa: E402
    AUTO_MIN_CASES,
    AUTO_MIN_CONCURRENCY,
    WORKER_ERROR,
    Cluster,
    evaluate_in_workers,
    resolve_workers,
    split,
)
from dagtui.run.engine import Engine  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
CASES = str(ROOT / "graphs" / "meeting_summary.cases.jsonl")
CORRECTNESS = str(ROOT / "graphs" / "suites" / "correctness.toml")
SPANS = str(ROOT / "graphs" / "suites" / "spans.cases.jsonl")
DASK = Path(sys.executable).with_name("dask")


@pytest.fixture(scope="module")
def cluster():
    """One LocalCluster of two processes for the API-level tests of this module."""
    with Cluster(2) as c:
        c.connect()
        yield c


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


def _judge(stub: StubServer, concurrency: int = 4, **kw) -> LiteLLMJudge:
    return LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test",
                        concurrency=concurrency, retries=0, **kw)


def _rows(results) -> list[tuple]:
    return [(r.case, r.score, r.status, r.describe_path(), r.calls) for r in results]


def _cases(n: int) -> list[Case]:
    return [Case(f"case {i}", {"actual_output": f"Intro\nBody {i}\nConclusion"})
            for i in range(n)]


def test_two_workers_give_the_in_process_results_calls_and_a_free_rerun(tmp_path, monkeypatch,
                                                                       capsys):
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
        # with the cache: the client stores what the workers learnt; the rerun on the
        # cluster is answered by the client's cache: no call, no worker even started
        main(run_args(stub, 2, tmp_path, "--cache-dir", "c2"))
        before = stub.calls
        start = time.monotonic()
        rerun = main(run_args(stub, 2, tmp_path, "--cache-dir", "c2"))
        rerun_time = time.monotonic() - start
        rerun_calls = stub.calls - before
    out = capsys.readouterr().out
    n = len(load_cases(CASES))
    assert f"[{n}/{n}]" in out
    assert results[1] == results[2]
    code, rows, _, sent, counted = results[2]
    assert sent == counted > 0 and len(rows) == n
    assert code == 1 and [status for _, _, status, _, _ in rows].count("fail") == 1
    again = json.loads((tmp_path / "r2.json").read_text())
    assert rerun == 1 and rerun_calls == 0 and again["calls"] == 0
    assert outcome(again) == rows and rerun_time < 10
    assert len(Cache(tmp_path / "c2")) > 0  # written by the client, its one writer


def test_cases_partly_cached_ship_their_answers_and_store_the_new_ones(tmp_path, cluster):
    """Half the cases cached: those never leave the client; the others go out with the
    answers the client found for them, and the workers' new answers are stored here."""
    graph = load_file(MEETING).graph
    cases = _cases(8)
    with StubServer() as stub:
        cache = Cache(tmp_path)
        first = asyncio.run(evaluate_cases(Engine(graph, _judge(stub, cache=cache)),
                                           cases[:4], concurrency=4))
        before = stub.calls
        mixed = evaluate_in_workers(Engine(graph, _judge(stub, cache=cache)), cases,
                                    concurrency=4, cluster=cluster)
        sent = stub.calls - before
        before = stub.calls
        rerun = evaluate_in_workers(Engine(graph, _judge(stub, cache=cache)), cases,
                                    concurrency=4, cluster=cluster)
        assert stub.calls == before  # zero calls: all answered from the client's cache
    assert first.calls > 0 and [r.calls for r in mixed.results[:4]] == [0] * 4
    assert sent == mixed.calls == sum(r.calls for r in mixed.results[4:]) > 0
    assert rerun.calls == 0 and [r.status for r in rerun.results] == ["pass"] * 8
    assert [(r.case, r.score) for r in rerun.results] == [(r.case, r.score)
                                                          for r in mixed.results]


def test_faults_through_workers_end_every_case(cluster):
    graph = load_file(MEETING).graph
    with StubServer(Script([("true or false", Fault("500"))])) as stub:
        start = time.monotonic()
        report = evaluate_in_workers(Engine(graph, _judge(stub)), load_cases(CASES),
                                     concurrency=4, cluster=cluster)
        elapsed = time.monotonic() - start
    assert report.exit_code() == 3 and elapsed < 30
    assert all(r.status == "error" and r.error_kind == "5xx" for r in report.results)


def test_two_graphs_in_a_row_on_the_same_warm_workers(cluster):
    """Two batches, each with its own graph, judge and cases, on one cluster: the results
    equal the in-process ones and the same worker processes serve both."""
    batches = [(MEETING, load_cases(CASES)), (CORRECTNESS, load_cases(SPANS)[:8])]
    with StubServer() as stub:
        engines = [(Engine(load_file(g).graph, _judge(stub)), c) for g, c in batches]
        alone = [asyncio.run(evaluate_cases(e, c, concurrency=4)) for e, c in engines]
        pooled, pids = [], []
        for engine, cases in engines:
            pooled.append(evaluate_in_workers(engine, cases, concurrency=4, cluster=cluster))
            pids.append(sorted(cluster.client.run(os.getpid).values()))
    assert [_rows(r.results) for r in pooled] == [_rows(r.results) for r in alone]
    assert [r.calls for r in pooled] == [r.calls for r in alone] and all(r.calls for r in alone)
    assert pids[0] == pids[1] and len(pids[0]) == 2


def _kill_one_worker_soon(client, delay: float) -> threading.Timer:
    pid = sorted(client.run(os.getpid).values())[-1]
    timer = threading.Timer(delay, os.kill, (pid, signal.SIGKILL))
    timer.start()
    return timer


def _none_lost(results, cases) -> None:
    assert [r.case for r in results] == [c.name for c in cases]
    for r in results:  # re-run elsewhere by Dask, or said to be a worker error
        assert r.status == "pass" or r.error_kind == WORKER_ERROR, (r.case, r.error)


def test_a_worker_killed_mid_run_has_its_cases_run_elsewhere():
    graph = load_file(MEETING).graph
    cases = _cases(12)
    with StubServer(latency=0.3) as stub, Cluster(2) as local:
        timer = _kill_one_worker_soon(local.connect(), 1.0)
        start = time.monotonic()
        report = evaluate_in_workers(Engine(graph, _judge(stub, 4)), cases, concurrency=4,
                                     cluster=local)
        elapsed = time.monotonic() - start
        timer.join()
    assert elapsed < 60
    _none_lost(report.results, cases)
    assert report.passed  # Dask re-ran the lost chunk on the worker left (or its restart)


def test_closing_the_cluster_ends_a_running_batch_with_worker_errors():
    """What a cancelled suite run does (Ctrl+C): close from another thread; the batch
    returns promptly, its unfinished cases as worker errors."""
    graph = load_file(MEETING).graph
    cases = _cases(6)
    with StubServer(latency=5) as stub:
        local = Cluster(2)
        local.connect()
        threading.Timer(0.5, local.close).start()
        start = time.monotonic()
        report = evaluate_in_workers(Engine(graph, _judge(stub, 2)), cases, concurrency=2,
                                     cluster=local)
        elapsed = time.monotonic() - start
        local.close()
    assert elapsed < 15 and len(report.results) == len(cases)
    assert all(r.error_kind == WORKER_ERROR and "interrupted" in r.error
               for r in report.results)


def test_worker_count_resolution():
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


def test_bad_workers_flag_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:  # the parser refuses it, naming flag and value
        main(["run", MEETING, "--cases", CASES, "--workers", "two"])
    assert exited.value.code == 2
    assert "--workers" in capsys.readouterr().err


def test_without_dask_workers_say_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    code = main(["run", MEETING, "--cases", CASES, "--model", "openai/gpt-4.1-mini",
                 "--api-base", "http://127.0.0.1:9", "--workers", "2"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "dagtui: --workers needs dask: pip install 'dagtui[dask]'")
    # "auto" never fails for want of Dask: it stays in process
    assert resolve_workers("auto", 10_000, LiteLLMJudge("m", concurrency=64)) == 1


def test_an_unreachable_scheduler_is_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    address = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    base = ["--model", "openai/gpt-4.1-mini", "--api-base", "http://127.0.0.1:9",
            "--scheduler", address, "-q"]
    assert main(["run", MEETING, "--cases", CASES, *base]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dagtui: cannot reach the Dask scheduler at {address}")
    assert "Traceback" not in err
    # a suite: every LLM pair says so as a `worker` error (exit 3), the code rules still run
    suite = ROOT / "graphs" / "suites" / "spans.toml"
    code = main(["run", str(suite), "--cases", SPANS, *base, "--json", "s.json"])
    report = json.loads((tmp_path / "s.json").read_text())
    assert code in (1, 3) and report["totals"]["judge_errors"].get(WORKER_ERROR)
    assert "Traceback" not in capsys.readouterr().err


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


# ------------------------------------------------------------------ Dask's own CLI


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dask_cli_cluster(tmp_path):
    """`dask scheduler` and `dask worker --nworkers 2 --nthreads 1` on 127.0.0.1."""
    if not DASK.exists():
        pytest.skip("the dask command is not installed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    with contextlib.ExitStack() as stack:
        logs = [stack.enter_context(open(tmp_path / name, "w"))
                for name in ("scheduler.log", "worker.log")]
        commands = [["scheduler", "--host", "127.0.0.1", "--port", str(port)],
                    ["worker", address, "--nworkers", "2", "--nthreads", "1",
                     "--host", "127.0.0.1"]]
        procs = [subprocess.Popen([str(DASK), *cmd, "--no-dashboard"], stdout=log,
                                  stderr=subprocess.STDOUT, cwd=tmp_path)
                 for cmd, log in zip(commands, logs, strict=True)]
        try:
            import distributed

            with distributed.Client(address, timeout="60s", set_as_default=False) as client:
                client.wait_for_workers(2, timeout=120)
            yield address
        finally:
            for proc in reversed(procs):
                proc.send_signal(signal.SIGINT)
            for proc in reversed(procs):
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def test_a_cluster_started_with_dasks_own_tools(tmp_path, monkeypatch, capsys,
                                                dask_cli_cluster):
    """`--scheduler tcp://127.0.0.1:P` on `dask scheduler` + `dask worker --nworkers 2`: the
    in-process scores and calls; a rerun makes zero calls; a worker killed mid-run loses
    no case."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    with StubServer() as stub:
        base = ["run", MEETING, "--cases", CASES, "--model", "openai/gpt-4.1-mini",
                "--api-base", stub.base_url, "--concurrency", "4", "-q"]
        assert main([*base, "--json", "in.json", "--no-cache"]) == 0
        in_calls = stub.calls
        monkeypatch.setenv("DAGTUI_SCHEDULER", dask_cli_cluster)  # the flag's environment twin
        assert main([*base, "--json", "d.json", "--no-cache"]) == 0
        dask_calls = stub.calls - in_calls
        monkeypatch.delenv("DAGTUI_SCHEDULER")
        flag = ["--scheduler", dask_cli_cluster, "--cache-dir", "b"]
        assert main([*base, *flag, "--json", "first.json"]) == 0
        before = stub.calls
        assert main([*base, *flag, "--json", "again.json"]) == 0
        assert stub.calls == before  # the rerun: zero calls
    one, two, again = (json.loads((tmp_path / f).read_text())
                       for f in ("in.json", "d.json", "again.json"))
    assert outcome(one) == outcome(two) == outcome(again)
    assert dask_calls == in_calls == two["calls"] > 0 and again["calls"] == 0
    assert json.loads((tmp_path / "first.json").read_text())["calls"] > 0

    graph = load_file(MEETING).graph
    cases = _cases(12)
    with StubServer(latency=0.3) as stub, Cluster(scheduler=dask_cli_cluster) as remote:
        timer = _kill_one_worker_soon(remote.connect(), 1.0)
        report = evaluate_in_workers(Engine(graph, _judge(stub, 4)), cases, concurrency=4,
                                     cluster=remote)
        timer.join()
    _none_lost(report.results, cases)
    assert report.passed

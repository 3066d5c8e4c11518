"""Fault soak (small, quick version): a faulty judge endpoint never hangs a batch.

30 cases, 20 ms latency, 20% of requests failing with 429 / 500 / timeout / malformed body /
non-JSON content / labels outside the set. Every case must end with a score or a reported
judge error, retries stay within their bound, and the report counts each kind. The full
100-case, 200 ms version is `tests/benchmarks/bench_engine.py --soak`.
"""

from __future__ import annotations

import asyncio
import time

from stub_server import StubServer

from dagtui.graph.loader import load_file
from dagtui.judges import LiteLLMJudge
from dagtui.run.batch import evaluate_cases
from dagtui.run.cases import Case
from dagtui.run.engine import Engine

RETRIES = 2


def test_fault_soak_every_case_ends_and_kinds_are_counted():
    graph = load_file("graphs/meeting_summary.toml").graph
    cases = [Case(f"case {i}", {"actual_output": f"Intro\nBody {i}\nConclusion"})
             for i in range(30)]
    faults = ("429", "500", "timeout", "malformed", "bad_json", "out_of_set")
    with StubServer(latency=0.02, fault_rate=0.2, faults=faults, seed=11, hang=3) as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test",
                             retries=RETRIES, timeout=0.5, backoff=0.01, max_backoff=0.05,
                             concurrency=10)
        engine = Engine(graph, judge)
        start = time.perf_counter()
        report = asyncio.run(asyncio.wait_for(
            evaluate_cases(engine, cases, concurrency=10), timeout=60))
        elapsed = time.perf_counter() - start
        sent = dict(stub.faults_sent)
    assert elapsed < 60
    assert len(report.results) == 30
    for r in report.results:
        assert (r.score is not None) != (r.error is not None), r.case
        assert r.status in ("pass", "fail", "error")
        for step in r.steps:
            for call in step.calls:
                assert call.retries <= RETRIES
                assert len(call.retry_kinds) == call.retries
    # the stub really injected a mix of faults
    assert sum(sent.values()) >= 10 and len(sent) >= 4
    retried = report.retried_kinds()
    assert set(retried) <= {"429", "5xx", "timeout", "malformed", "connection"}
    assert sum(retried.values()) > 0
    # every error kind a case ended in is counted, and nothing is lumped as "other"
    kinds = report.error_kinds()
    assert sum(kinds.values()) == len(report.errored)
    assert "other" not in kinds
    summary = report.to_dict()
    assert summary["judge_errors"] == dict(kinds)
    assert summary["retried"] == dict(retried)
    assert report.corrections() > 0  # non-JSON and out-of-set answers got their correction
    assert report.exit_code() in (0, 3)

"""A Dask worker that stops answering mid-run (SIGSTOP: alive, connected, silent) must not
hang the run: the scheduler drops it when its heartbeats stop (`dagtui.run.cluster.WORKER_TTL`,
shortened here so the test takes seconds), its chunk is run on the worker left, and every
case ends with a verdict or a `worker` error."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the Dask tests need dagtui[dask]")

sys.path.insert(0, str(Path(__file__).parent))
from stub_server import StubServer  # noqa: E402

from dagtui.graph.loader import load_file  # noqa: E402
from dagtui.judges import LiteLLMJudge  # noqa: E402
from dagtui.run import cluster as cluster_module  # noqa: E402
from dagtui.run.cases import Case  # noqa: E402
from dagtui.run.cluster import WORKER_ERROR, Cluster, evaluate_in_workers  # noqa: E402
from dagtui.run.engine import Engine  # noqa: E402

pytestmark = pytest.mark.slow

MEETING = Path(__file__).resolve().parents[1] / "graphs" / "meeting_summary.toml"


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP")
def test_a_worker_that_stops_answering_has_its_cases_run_elsewhere(monkeypatch) -> None:
    monkeypatch.setattr(cluster_module, "WORKER_TTL", "3s")
    graph = load_file(MEETING).graph
    cases = [Case(f"case {i}", {"actual_output": f"Intro\nBody {i}\nConclusion"})
             for i in range(16)]
    with StubServer(latency=0.3) as stub, Cluster(2) as local:
        client = local.connect()
        pid = sorted(client.run(os.getpid).values())[-1]
        timer = threading.Timer(1.0, os.kill, (pid, signal.SIGSTOP))
        timer.start()
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test",
                             concurrency=4, retries=0)
        try:
            start = time.monotonic()
            report = evaluate_in_workers(Engine(graph, judge), cases, concurrency=4,
                                         cluster=local)
            elapsed = time.monotonic() - start
        finally:
            timer.join()
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # a stopped process takes no SIGTERM
    assert elapsed < 45
    assert [r.case for r in report.results] == [c.name for c in cases]
    for r in report.results:
        assert r.status == "pass" or r.error_kind == WORKER_ERROR, (r.case, r.error)
    assert report.count("pass") > 0

"""`dagtui.evaluate` has what `dagtui run` has: streamed results, traces, shards, sinks.

The API and the command line run through one pipeline (`dagtui.run.execute`), so what a
run writes is the same file, whichever started it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stub_server import StubServer

import dagtui
from dagtui.cli import main
from dagtui.report.trace import Trace
from dagtui.run.sinks import BaseSink, Done

MEETING = "graphs/meeting_summary.toml"
CASES = "graphs/meeting_summary.cases.jsonl"
MODEL = "openai/gpt-4.1-mini"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_evaluate_streams_each_result_and_writes_a_trace_per_case(tmp_path: Path) -> None:
    stream = tmp_path / "out.results.jsonl"
    with StubServer() as stub:
        report = dagtui.evaluate(MEETING, CASES, judge=MODEL, api_base=stub.base_url,
                                 api_key="test", cache=False, stream=stream,
                                 trace_dir=tmp_path / "traces", concurrency=4)
        sent = stub.calls
    rows = _lines(stream)
    assert sorted(r["case"] for r in rows) == sorted(r.case for r in report.results)
    assert sum(r["calls"] for r in rows) == report.calls == sent > 0
    # the streamed line holds the requests; the report in memory has dropped them
    assert any(s["request"] for r in rows for s in r["steps"])
    assert all(s.request is None for r in report.results for s in r.steps)
    traces = sorted((tmp_path / "traces").iterdir())
    assert len(traces) == len(report.results)
    loaded = {Trace.load(p).case["name"] for p in traces}
    assert loaded == {r.case for r in report.results}


def test_the_api_stream_is_the_command_lines(tmp_path: Path, monkeypatch) -> None:
    """The same cases through `evaluate(stream=...)` and `dagtui run --json`: the same
    cases, in the same record shape."""
    monkeypatch.setenv("CI", "1")
    api = tmp_path / "api.results.jsonl"
    dagtui.evaluate(MEETING, CASES, judge="labels", stream=api, calibration=False)
    cli_json = tmp_path / "cli.json"
    cli = tmp_path / "cli.results.jsonl"
    with StubServer() as stub:  # the CLI's judge is a model: the stub answers it
        main(["run", MEETING, "--api-base", stub.base_url, "--model", MODEL, "--no-cache",
              "-q", "--json", str(cli_json)])
    assert {r["case"] for r in _lines(api)} == {r["case"] for r in _lines(cli)}
    assert set(_lines(api)[0]) == set(_lines(cli)[0])  # one record shape


def test_evaluate_runs_one_shard_and_says_which(tmp_path: Path) -> None:
    whole = dagtui.evaluate(MEETING, CASES, judge="labels", calibration=False)
    parts = [dagtui.evaluate(MEETING, CASES, judge="labels", shard=f"{i}/2",
                             calibration=False) for i in (1, 2)]
    names = [sorted(r.case for r in p.results) for p in parts]
    assert sorted(names[0] + names[1]) == sorted(r.case for r in whole.results)
    assert not set(names[0]) & set(names[1])
    for part in parts:
        assert part.shard is not None and part.shard["count"] == 2
        assert len(part.shard["positions"]) == len(part.results)


def test_evaluate_tells_the_callers_sinks_each_finished_case() -> None:
    class Seen(BaseSink):
        def __init__(self) -> None:
            self.done: list[Done] = []
            self.closed = False

        def finished(self, done: Done) -> bool:
            self.done.append(done)
            return False

        def close(self) -> None:
            self.closed = True

    seen = Seen()
    report = dagtui.evaluate(MEETING, CASES, judge="labels", sinks=[seen], calibration=False)
    assert sorted(d.position for d in seen.done if d.position is not None) == list(
        range(len(report.results)))
    assert {d.result.case for d in seen.done} == {r.case for r in report.results}
    assert seen.closed and all(d.graph.metric.name == "Format Correctness" for d in seen.done)

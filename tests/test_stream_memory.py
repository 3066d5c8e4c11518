"""Flat memory for large datasets: cases read lazily from JSONL (`dagtui.run.case_stream`), run in
a bounded window (`batch.run_stream`), results kept on disk with the aggregates added up as
cases finish (`stream.ResultLog`, `dagtui.run.tally`). Each must say and write exactly what the
in-memory path says and writes: the same errors for a bad cases file, the same reports."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from dagtui.calibration.summary import Agreement, agreement_lines
from dagtui.cli import main
from dagtui.graph.loader import load_file
from dagtui.judges.base import CallRecord
from dagtui.judges.labels import LabelsJudge
from dagtui.report.stream import ResultLog
from dagtui.report.trace import PathStep, RunResult, StepRecord
from dagtui.run.batch import BatchResult, evaluate_cases, run_stream
from dagtui.run.case_stream import CaseStream, open_cases
from dagtui.run.cases import Case, CaseError, load_cases
from dagtui.run.engine import Engine
from dagtui.run.shard import Shard

ROOT = Path(__file__).resolve().parents[1]
GRAPHS = ROOT / "graphs"
MEETING = GRAPHS / "meeting_summary.toml"


def _shape(cases: list[Case]) -> list[tuple]:
    return [(c.name, c.fields, c.expected, c.expected_score, c.file, c.line) for c in cases]


@pytest.mark.parametrize("path", sorted(GRAPHS.rglob("*.cases.jsonl")), ids=lambda p: p.name)
def test_a_streamed_file_yields_what_load_cases_gives(path: Path) -> None:
    stream = open_cases(path)
    assert _shape(list(stream)) == _shape(load_cases(path))
    assert len(stream) == stream.total == len(load_cases(path))
    assert _shape(list(stream)) == _shape(list(stream))  # read again on each pass


def test_a_shard_of_a_stream_is_the_shard_of_the_list(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"name": f"c{i}", "actual_output": "x"}) + "\n"
                            for i in range(50)), encoding="utf-8")
    whole = load_cases(path)
    for index in (1, 2, 3):
        shard = Shard(index, 3)
        part = open_cases(path).sharded(shard)
        expected = [i for i, c in enumerate(whole) if shard.holds(c.name)]
        assert part.positions == expected
        assert [c.name for c in part] == [whole[i].name for i in expected]
        assert len(part) == len(expected) and part.total == 50


@pytest.mark.parametrize("body", [
    b'{"name": "a"}\n{"name": \n',                       # a line that is not JSON
    b'{"name": "a"}\n\n// note\n{"name": "a"}\n',        # a repeated name (after a comment)
    b'{"name": "a"}\n{"name": "b", "expected": 3}\n',    # a bad shape
    b'{"name": "a"}\n{"name": oops}\n{"name": "\xff"}\n',  # bad JSON, then a non-UTF-8 byte
    b'{"name": "a"}\r\n{"name": "a"}\r\n',               # CRLF lines, a repeated name
    b'{"name": "a"}\r{"name": "b"}\r{"name": }\r',       # old Mac line ends
    b'\xef\xbb\xbf{"name": "a"}\n',                      # a BOM
    b'{"name": "1"}\n{"x": 2}\n{"name": "case 2"}\n',    # an unnamed case meets its name
], ids=["json", "duplicate", "shape", "utf8-wins", "crlf", "cr", "bom", "unnamed"])
def test_a_bad_file_fails_as_load_cases_fails(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(body)
    with pytest.raises(CaseError) as whole:
        load_cases(path)
    with pytest.raises(CaseError) as streamed:
        open_cases(path)
    assert str(streamed.value) == str(whole.value)
    assert streamed.value.line == whole.value.line


def test_missing_and_special_files_fail_as_load_cases_fails(tmp_path: Path) -> None:
    for path in (tmp_path / "none.jsonl", tmp_path):
        with pytest.raises(CaseError) as whole:
            load_cases(path)
        with pytest.raises(CaseError) as streamed:
            CaseStream(path).check()
        assert str(streamed.value) == str(whole.value)


def _result(i: int) -> RunResult:
    """A result with every figure a report adds up, and text a report must escape."""
    kinds = ["pass", "fail", "error", "not_run"]
    kind = kinds[i % 4]
    calls = [CallRecord({}, purpose="answer", cache_hit=i % 3 == 0,
                        retry_kinds=["429"] * (i % 2) + ["timeout"] * (i % 3 == 2)),
             CallRecord({}, purpose="correction" if i % 5 == 0 else "answer")]
    steps = [StepRecord("gate", "binary", answer=i % 2 == 0, reason="r \udc80", calls=calls,
                        prompt_tokens=i, completion_tokens=2, cost=0.1 * (i % 3) or None,
                        latency=0.01 * i, cache_hit=i % 6 == 0),
             StepRecord("leaf", "non_binary", answer=f"label {i % 3}", calls=calls[:1],
                        cost=0.7, latency=0.2,
                        error="judge 5xx" if kind == "error" else None,
                        error_kind="5xx" if kind == "error" else None)]
    return RunResult(
        case=f"case {i} \x1b<&>", score=None if kind in ("error", "not_run") else (i % 10) / 9,
        success=kind == "pass", reason="because\n2", path=[PathStep("gate", True, "leaf")],
        steps=steps, error=f"node gate: run stopped early: 5xx at case {i}" if kind == "not_run" else
        ("5xx" if kind == "error" else None),
        error_kind={"error": "5xx", "not_run": "not_run"}.get(kind), wall_time=0.5,
        expected_score=0.5 if i % 2 else None)


def test_a_report_from_the_log_is_the_report_from_the_list() -> None:
    results = [_result(i) for i in range(40)]
    listed = BatchResult("m", 0.5, results=results, node_order=["gate", "leaf"], wall_time=2)
    log = ResultLog()
    order = list(range(40))
    random.Random(7).shuffle(order)  # cases finish in any order
    for i in order:
        log.add(i, results[i])
    logged = BatchResult("m", 0.5, results=log, node_order=["gate", "leaf"], wall_time=2)
    for steps in (True, False):
        assert logged.to_json(steps=steps) == listed.to_json(steps=steps)
        assert logged.to_dict(steps=steps) == listed.to_dict(steps=steps)
    assert logged.to_junit() == listed.to_junit()
    assert "".join(logged.json_parts(steps=True)) == listed.to_json(steps=True)
    assert [r.case for r in logged.first("fail")] == [r.case for r in listed.failed[:10]]
    assert [r.case for r in logged.first("error")] == [r.case for r in listed.errored[:10]]
    assert logged.halt == listed.halt is not None
    assert list(logged.to_dict()["judge_errors"]) == ["5xx"]
    assert logged.exit_code() == listed.exit_code()
    json.loads(logged.to_json(steps=True))
    log.close()


def test_cases_are_pulled_only_as_slots_free() -> None:
    """The run reads the next case only when one in flight ends: a lazy dataset of 200
    cases never has more than `concurrency` of them out of the file at once."""
    graph = load_file(MEETING).graph
    case = load_cases(GRAPHS / "meeting_summary.cases.jsonl")[0]
    engine = Engine(graph, LabelsJudge())
    pulled = 0
    done = 0
    most = 0

    def cases():
        nonlocal pulled, most
        for i in range(200):
            pulled += 1
            most = max(most, pulled - done)
            yield Case(f"c{i}", case.fields, case.expected)

    def on_case(_i: int, _case: Case, _result: RunResult) -> None:
        nonlocal done
        done += 1

    asyncio.run(run_stream(engine, cases(), concurrency=4, on_case=on_case))
    assert done == 200 and most <= 5


def test_the_run_is_the_same_streamed_or_listed(tmp_path: Path, capsys,
                                                monkeypatch) -> None:
    """`dagtui run` over a streamed file writes the JSON, JUnit and summary the in-memory
    path writes (labels judge: no calls), agreement lines included."""
    monkeypatch.setenv("CI", "1")
    cases = load_cases(GRAPHS / "meeting_summary.cases.jsonl")
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps({**c.to_dict(), "name": f"{c.name} {k}"}) + "\n"
                            for k in range(30) for c in cases), encoding="utf-8")
    code = main(["run", str(MEETING), "--cases", str(path), "--model", "labels", "-q",
                 "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml")])
    out = capsys.readouterr().out
    graph = load_file(MEETING).graph
    listed = asyncio.run(evaluate_cases(Engine(graph, LabelsJudge()), load_cases(path)))
    assert code == listed.exit_code()
    streamed = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    expected = json.loads(listed.to_json(steps=True))
    for report in (streamed, expected):  # the summary leaves the prompts to the stream
        report.pop("wall_time")
        for r in report["results"]:
            r.pop("wall_time")
            for s in r["steps"]:
                s.update(prompt=None, request=None, raw=None, latency=0)
        for node in report["nodes"].values():
            node.update(latency_p50=None, latency_p95=None)
    assert streamed == expected
    assert f"{len(cases) * 30} cases" in out
    lines = agreement_lines(graph, load_cases(path), listed.results)
    assert " ".join(" ".join(lines).split()) in " ".join(out.split())  # wrapped at 80 columns


def test_agreement_counted_in_any_order_says_the_same() -> None:
    graph = load_file(MEETING).graph
    cases = load_cases(GRAPHS / "meeting_summary.cases.jsonl") * 3
    cases = [Case(f"{c.name} {i}", c.fields, c.expected, 1.0 - (c.expected_score or 0), c.file,
                  c.line) for i, c in enumerate(cases)]  # every score differs: 18 listed
    report = asyncio.run(evaluate_cases(Engine(graph, LabelsJudge()), cases))
    whole = agreement_lines(graph, cases, report.results)
    agreement = Agreement(graph)
    order = list(range(len(cases)))
    random.Random(3).shuffle(order)
    for i in order:
        agreement.add(i, cases[i], report.results[i])
    assert agreement.lines() == whole
    assert any("… and" in line for line in whole)


def test_a_suite_streams_each_pair_beside_its_json(tmp_path: Path, monkeypatch,
                                                   capsys) -> None:
    """`dagtui run SUITE --json out.json` writes `out.results.jsonl`: one line per evaluated
    (rule, case) pair, its rule first, as it ends; the summary keeps each pair's result
    without the prompts the stream holds."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from stub_server import StubServer

    monkeypatch.setenv("CI", "1")
    suite = GRAPHS / "suites" / "spans.toml"
    with StubServer() as stub:
        code = main(["run", str(suite), "--model", "openai/gpt-4.1-mini", "--api-base",
                     stub.base_url, "--no-cache", "-q", "--json", str(tmp_path / "s.json")])
    capsys.readouterr()
    assert code in (0, 1)
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    lines = (tmp_path / "s.results.jsonl").read_text(encoding="utf-8").splitlines()
    streamed = {(row["rule"], row["case"]): row for row in map(json.loads, lines)}
    evaluated = {(rule["rule"], rec["case"]): rec for rule in summary["rules"]
                 for rec in rule["cases"] if rec["state"] == "evaluated"}
    assert set(evaluated) == set(streamed)  # inline checks too, as their traces show them
    assert list(json.loads(lines[0]))[0] == "rule"
    pairs = {key: rec["result"] for key, rec in evaluated.items() if "result" in rec}
    assert pairs
    for key, kept in pairs.items():
        row = {k: v for k, v in streamed[key].items() if k != "rule"}
        for s in row["steps"] + kept["steps"]:
            s.update(prompt=None, request=None, raw=None,
                     calls=[{**c, "request": {}, "raw": None} for c in s["calls"]])
        assert row == kept


def test_dask_chunks_go_out_in_a_bounded_window(monkeypatch) -> None:
    """On Dask, the cases are read a window at a time and at most IN_FLIGHT chunks per
    worker are out at once, not a future for every chunk of the dataset (a fake client:
    each chunk "runs" after a few looks at its future)."""
    pytest.importorskip("distributed")
    from dagtui.judges import LiteLLMJudge
    from dagtui.run import cluster as cluster_module

    monkeypatch.setattr(cluster_module, "POLL", 0)
    monkeypatch.setattr(cluster_module, "PROBE_WINDOW", 50)
    out: set[int] = set()
    most = 0

    class Future:
        def __init__(self, chunk: list) -> None:
            self.chunk, self.looks = chunk, 0
            out.add(id(self))

        def done(self) -> bool:
            self.looks += 1
            return self.looks > 3

        def result(self) -> tuple:
            out.discard(id(self))
            return [(i, RunResult(case=case.name, score=1.0, success=True))
                    for i, case, _ in self.chunk], [], 0.0

        def cancel(self) -> None:
            pass

    class Client:
        def scatter(self, spec, **_kw):
            return spec

        def submit(self, _fn, _spec, chunk, **_kw) -> Future:
            nonlocal most
            future = Future(chunk)
            most = max(most, len(out))
            return future

    class FakeCluster:
        closing = False

        def connect(self) -> Client:
            return Client()

        def size(self) -> int:
            return 2

    judge = LiteLLMJudge("openai/gpt-4.1-mini", api_key="test", concurrency=4)
    engine = Engine(load_file(MEETING).graph, judge)
    pulled = 0

    def cases():
        nonlocal pulled
        for i in range(1000):
            pulled += 1
            yield Case(f"c{i}", {"actual_output": "Intro\nBody\nConclusion"})

    batch = cluster_module.Batch(engine, cases(), FakeCluster(), 4)
    log = ResultLog()
    assert batch.run(log=log) == []
    assert pulled == 1000 and len(log) == 1000
    assert [r.case for r in log] == [f"c{i}" for i in range(1000)]
    assert most <= cluster_module.IN_FLIGHT * 2  # 2 workers; 125 chunks of 8 in all

"""The Python API (`dagtui.api`, README "Python")."""

from __future__ import annotations

import subprocess
import sys

import pytest
from stub_server import StubServer

import dagtui
from dagtui.graph.loader import GraphError
from dagtui.judges import CallbackJudge, LabelsJudge

MEETING = "graphs/meeting_summary.toml"


def test_import_is_light():
    code = ("import sys, dagtui; dagtui.load; "
            "print('litellm' in sys.modules, 'textual' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_load_raises_with_diagnostics(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[nodes.a]\ntype = "binary"\ncriteria = "x"\nverdicts = []\n')
    with pytest.raises(GraphError) as info:
        dagtui.load(bad)
    assert info.value.diagnostics and all(d.file for d in info.value.diagnostics)


def test_measure_with_a_model_string_against_the_stub(tmp_path):
    graph = dagtui.load(MEETING)
    assert graph.graph.metric.name == "Format Correctness"
    with StubServer() as stub:
        result = graph.measure({"name": "one", "actual_output": "Intro\nBody\nConclusion"},
                               judge="openai/gpt-4.1-mini", api_base=stub.base_url,
                               api_key="test", cache=tmp_path)
        assert stub.calls == 3
    assert result.score == 1.0 and result.success is True
    assert result.reason and [p.node for p in result.path] == ["extract", "present", "order"]
    assert len(result.steps) == 3 and result.steps[0].request["model"] == "openai/gpt-4.1-mini"


async def test_a_measure_with_a_judge_instance():
    graph = dagtui.load(MEETING)
    judge = CallbackJudge(lambda ask: {"task": "Intro", "binary": False}.get(ask.kind, "x"))
    result = await graph.a_measure({"actual_output": "Intro"}, judge=judge)
    assert result.score == 0.0 and result.success is False
    assert result.path[-1].describe() == "present=false → score 0"


def test_evaluate_defaults_to_the_graphs_cases_file():
    report = dagtui.evaluate(MEETING, judge="labels")
    assert report.results and report.calls == 0
    assert all(r.status in ("pass", "fail") for r in report.results)
    by_name = {r.case: r for r in report.results}
    assert by_name["all headings in order"].score == 1.0
    assert report.exit_code() in (0, 1)


def test_evaluate_list_of_dicts_with_concurrency():
    graph = dagtui.load(MEETING)
    # "order" labelled only where the labels reach it (present true): elsewhere it would be
    # a label off the case's own path, refused by dagtui.labels.check
    cases = [{"name": f"c{i}", "actual_output": "x",
              "expected": {"present": True, "order": "Correct order"} if i % 2 == 0
              else {"present": False}} for i in range(10)]
    report = dagtui.evaluate(graph, cases, judge=LabelsJudge(), concurrency=4)
    assert len(report.passed) == 5 and len(report.failed) == 5
    assert report.pass_rate == 0.5 and report.exit_code() == 1
    assert report.node_stats()["order"].reached == 5

"""The example graphs in graphs/ are real, clean, and agree with their labelled cases.

Each example must validate with no error and no warning, name its cases file, and each case's
human labels must drive the graph (through the real engine with the labels judge, zero LLM
calls) to exactly the `expected_score` written beside them. Check nodes are not taken on
trust: the engine computes them in code, and the label must say the same. Across its cases,
every leaf of every graph is reached at least once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagtui.diagnostics import Severity
from dagtui.graph.loader import load_file
from dagtui.graph.model import CheckNode, GEvalNode, Graph, TaskNode
from dagtui.graph.tomlio import format_text, render
from dagtui.graph.validate import check_file
from dagtui.judges.labels import LabelsJudge
from dagtui.run.cases import load_cases
from dagtui.run.engine import Engine

GRAPHS = Path(__file__).resolve().parent.parent / "graphs"
EXAMPLES = ("meeting_summary", "refund_policy", "code_review", "tool_selection")


def _graph(name: str) -> Graph:
    result = load_file(GRAPHS / f"{name}.toml")
    assert result.graph is not None and result.diagnostics == []
    return result.graph


def _leaves(graph: Graph) -> set[tuple[str, object]]:
    """Every way a path can end: (judgement node, verdict) with a score, or a geval node."""
    out: set[tuple[str, object]] = set()
    for nid, node in graph.nodes.items():
        if isinstance(node, GEvalNode):
            out.add((nid, None))
        for v in getattr(node, "verdicts", []):
            if v.score is not None:
                out.add((nid, v.verdict))
    return out


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_validates_clean(name: str) -> None:
    report = check_file(GRAPHS / f"{name}.toml")
    problems = [d.format() for d in report.diagnostics
                if d.severity in (Severity.ERROR, Severity.WARNING)]
    assert problems == []
    assert report.graph is not None and report.graph.metric.model  # judge pinned


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_is_commented_and_canonical(name: str) -> None:
    text = (GRAPHS / f"{name}.toml").read_text(encoding="utf-8")
    graph = _graph(name)
    comment_lines = [ln for ln in text.splitlines() if ln.lstrip().startswith("#")]
    assert len(comment_lines) >= len(graph.nodes) + 1  # a word on the file and on each node
    assert format_text(text) == text  # `dagtui fmt --check graphs/...` passes
    assert render(graph, text) == text  # saving an unchanged graph changes no byte


@pytest.mark.parametrize("name", EXAMPLES)
def test_cases_file_is_named_and_well_formed(name: str) -> None:
    graph = _graph(name)
    assert graph.metric.cases == f"{name}.cases.jsonl"
    path = GRAPHS / graph.metric.cases
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert 5 <= len(lines) <= 8
    names = [json.loads(ln)["name"] for ln in lines]
    assert len(set(names)) == len(names)
    for case in load_cases(path):
        assert case.expected, case.name
        assert case.expected_score is not None and 0 <= case.expected_score <= 1, case.name
        assert case.get("actual_output") is not None or case.get("tools_called") is not None


@pytest.mark.parametrize("name", EXAMPLES)
def test_labels_drive_the_graph_to_the_expected_score(name: str) -> None:
    graph = _graph(name)
    engine = Engine(graph, LabelsJudge())
    reached: set[tuple[str, object]] = set()
    for case in load_cases(GRAPHS / f"{name}.cases.jsonl"):
        result = engine.run_sync(case)
        assert result.error is None, f"{case.name}: {result.error}"
        assert result.score == pytest.approx(case.expected_score), case.name
        on_path = [step.node for step in result.steps]
        # a label for every node on the path, and none for nodes the path never reaches
        assert sorted(case.expected) == sorted(on_path), case.name
        for step in result.steps:
            node = graph.nodes[step.node]
            label = case.expected[step.node]
            if isinstance(node, TaskNode):
                assert isinstance(label, str) and label.strip(), case.name
            elif isinstance(node, GEvalNode):
                assert isinstance(label, int) and 0 <= label <= 10, case.name
            else:
                # for check nodes this compares the human label with what the code computed
                assert step.verdict == label, (case.name, step.node)
            if isinstance(node, CheckNode):
                assert step.calls_made == 0
        last = result.steps[-1]
        reached.add((last.node, None if isinstance(graph.nodes[last.node], GEvalNode)
                     else last.verdict))
    assert reached == _leaves(graph), "every leaf should be covered by some case"


def test_every_example_is_present() -> None:
    tomls = sorted(p.stem for p in GRAPHS.glob("*.toml"))
    for name in EXAMPLES:
        assert name in tomls
        assert (GRAPHS / f"{name}.cases.jsonl").is_file()

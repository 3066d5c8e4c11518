"""Fractional leaf scores (7.5, 6.66, 3.33): kept exactly from TOML to every output.

DeepEval's `VerdictNode(score=7.5)` is accepted there, so dagtui accepts any number in
0..10 too: the loader, the validator, the path table, the engine's result, the TOML writer,
both DeepEval exports and the importer all keep the number as written (an integer stays an
integer), and every refusal names the judgement node and the verdict label.
"""

from __future__ import annotations

import io
import json
import textwrap
import tomllib

import pytest
from rich.console import Console

from dagtui.export import export_graph, import_deepeval_json, render_graph
from dagtui.export.refusals import deepeval_refusals
from dagtui.graph.loader import load_text
from dagtui.graph.model import BinaryNode, NonBinaryNode
from dagtui.graph.paths import analyze, render_table
from dagtui.graph.tomlio import render
from dagtui.graph.validate import check_text
from dagtui.judges.base import CallbackJudge
from dagtui.run.engine import Engine

GRAPH = textwrap.dedent("""\
    [metric]
    name = "Fractions"
    threshold = 0.7
    model = "openai/gpt-4.1-mini"

    [nodes.gate]
    type = "binary"
    criteria = "Is the answer on topic?"
    params = ["actual_output"]
    verdicts = [
      { verdict = false, score = 3.33 },
      { verdict = true, then = "grade" },
    ]

    [nodes.grade]
    type = "non_binary"
    criteria = "How complete is the answer?"
    params = ["actual_output"]
    verdicts = [
      { verdict = "Complete", score = 10 },
      { verdict = "Mostly", score = 7.5 },
      { verdict = "Partly", score = 6.66 },
      { verdict = "Third", score = 3.3333333333333335 },
    ]
    """)


def _graph(text: str = GRAPH):
    result = load_text(text, "g.toml")
    assert result.graph is not None
    return result.graph


def _scores(graph) -> list:
    return [v.score for n in graph.nodes.values()
            if isinstance(n, BinaryNode | NonBinaryNode) for v in n.verdicts]


def test_fractional_scores_validate_clean() -> None:
    codes = [d.code for d in check_text(GRAPH, "g.toml").diagnostics]
    assert "DAG013" not in codes and not [c for c in codes if c.startswith("DAG0")]


@pytest.mark.parametrize("score", ["10.5", "-0.5", "nan", "inf"])
def test_scores_outside_0_10_are_dag013(score: str) -> None:
    text = GRAPH.replace("score = 7.5", f"score = {score}")
    d13 = [d for d in check_text(text, "g.toml").diagnostics if d.code == "DAG013"]
    assert d13 and "verdict 'Mostly'" in d13[0].message and "number from 0 to 10" in d13[0].message


def test_toml_round_trip_is_exact() -> None:
    graph = _graph()
    assert _scores(graph) == [3.33, None, 10, 7.5, 6.66, 3.3333333333333335]
    for text in (render(graph), render(graph, GRAPH), render_graph(graph)):
        assert "score = 7.5 " in text or "score = 7.5}" in text or "score = 7.5 }" in text
        assert "7.50" not in text and "7.4999" not in text
        again = _graph(text)
        scores = _scores(again)
        assert scores == _scores(graph)
        assert [type(s) for s in scores] == [type(s) for s in _scores(graph)]  # ints stay ints
    # an edited score is written as typed, the rest of the file untouched
    grade = graph.nodes["grade"]
    assert isinstance(grade, NonBinaryNode)
    grade.verdicts[1] = grade.verdicts[1].replace(score=8.25)
    saved = render(graph, GRAPH)
    assert saved == GRAPH.replace("score = 7.5", "score = 8.25")


def test_paths_table_and_reachable_scores_keep_the_fraction() -> None:
    graph = _graph()
    report = analyze(graph)
    assert sorted(report.reachable_scores) == pytest.approx([0.333, 0.33333333333333337, 0.666,
                                                             0.75, 1.0])
    assert 0.666 in report.reachable_scores and 0.333 in report.reachable_scores
    out = io.StringIO()
    Console(file=out, width=200, highlight=False).print(render_table(report, graph))
    table = out.getvalue()
    assert "score 6.66" in table and "0.666" in table and "0.67" not in table
    assert "score 3.33" in table and "score 7.5" in table and "0.75" in table
    assert "score 3.3333333333333335" in table


def test_engine_result_is_the_fraction() -> None:
    graph = _graph()
    answers = {"gate": True, "grade": "Partly"}
    engine = Engine(graph, CallbackJudge(lambda ask: answers[ask.node.id]))
    result = engine.run_sync({"name": "c", "actual_output": "x"})
    assert result.error is None
    assert result.score == 0.666 and result.success is False


def test_deepeval_exports_write_the_fraction_exactly() -> None:
    graph = _graph()
    assert deepeval_refusals(graph) == []
    doc = json.loads(export_graph(graph, "deepeval-json"))
    scores = [s.get("score") for s in doc["nodes"].values() if s["type"] == "VerdictNode"]
    assert scores == [3.33, None, 10, 7.5, 6.66, 3.3333333333333335]
    assert isinstance(scores[2], int)
    module = export_graph(graph, "deepeval-python")
    for text in ("score=3.33)", "score=10)", "score=7.5)", "score=6.66)",
                 "score=3.3333333333333335)"):
        assert text in module


def test_export_refusal_names_node_and_verdict() -> None:
    graph = _graph(GRAPH.replace("score = 6.66", "score = 12.5"))
    refusals = deepeval_refusals(graph)
    assert [r.nodes for r in refusals] == [("grade",)]
    assert "verdict 'Partly': score 12.5 is not a number from 0 to 10" in refusals[0].message


def test_import_keeps_fractions_and_writes_them_as_typed() -> None:
    doc = json.loads(export_graph(_graph(), "deepeval-json"))
    graph = import_deepeval_json(json.dumps(doc))
    assert _scores(graph) == _scores(_graph())
    text = render_graph(graph)
    parsed = tomllib.loads(text)
    grade = parsed["nodes"]["grade"]["verdicts"]
    assert [v["score"] for v in grade] == [10, 7.5, 6.66, 3.3333333333333335]
    assert isinstance(grade[0]["score"], int)


def test_import_refusal_names_judgement_and_label_not_uuid() -> None:
    uuid_j = "3f1c6c1e-4f0e-4a55-9a8e-2c1d1f0e9b11"
    uuid_v = "0b7e1a52-6f7d-4d0e-8a1b-5f3c2e1d0a99"
    doc = {"nodes": {
        uuid_j: {"type": "NonBinaryJudgementNode", "criteria": "How complete is it?",
                 "label": None, "evaluation_params": ["actual_output"],
                 "children": [uuid_v, "v2"]},
        uuid_v: {"type": "VerdictNode", "verdict": "Mostly", "score": 10.5},
        "v2": {"type": "VerdictNode", "verdict": "Fully", "score": 7.5},
    }}
    with pytest.raises(Exception) as info:
        import_deepeval_json(json.dumps(doc))
    message = str(info.value)
    assert "judgement 'how_complete', verdict 'Mostly': score 10.5 is outside 0..10" in message
    assert uuid_v not in message

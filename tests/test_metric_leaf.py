"""The `metric` leaf: a DeepEval metric by class name, scored at run time like a G-Eval leaf.

Without DeepEval (this environment): it loads, validates with a DAG116 warning, appears in
the path table, is answered by labels / people / callbacks like a G-Eval leaf, exports to
both DeepEval formats, imports from DeepEval's `{"type": "metric"}` child, is edited in the
form, and with a model judge its step fails saying DeepEval is needed. Running it through
DeepEval itself is tests/test_export_metric_leaf.py (interop environment).
"""

from __future__ import annotations

import io
import json
import textwrap

import pytest
from rich.console import Console
from stub_server import Script, StubServer

from dagtui.export import export_graph, import_deepeval_json, render_graph
from dagtui.export.refusals import deepeval_refusals
from dagtui.graph.loader import load_text
from dagtui.graph.model import MetricNode
from dagtui.graph.paths import analyze, render_table
from dagtui.graph.tomlio import render
from dagtui.graph.validate import check_text
from dagtui.graph.validate import environment as validate_module  # where DAG116 asks
from dagtui.judges.base import CallbackJudge
from dagtui.judges.litellm_judge import LiteLLMJudge
from dagtui.run.engine import Engine
from dagtui.tui.fields import FieldError, from_text, node_fields, to_text

GRAPH = textwrap.dedent("""\
    [metric]
    name = "Relevant answer"
    threshold = 0.5
    model = "openai/stub-model"

    [nodes.on_topic]
    type = "binary"
    criteria = "Does the reply stay on the subject of the question?"
    params = ["input", "actual_output"]
    verdicts = [
      { verdict = false, score = 0 },
      { verdict = true, then = "relevancy" },
    ]

    [nodes.relevancy]
    type = "metric"
    metric = "AnswerRelevancyMetric"
    args = { threshold = 0.7, include_reason = false }
    """)
CASE = {"name": "c", "input": "Capital of France?", "actual_output": "Paris."}


def _graph(text: str = GRAPH):
    loaded = load_text(text, "g.toml")
    assert loaded.graph is not None, loaded.diagnostics
    return loaded.graph


def test_loads_and_round_trips_through_toml() -> None:
    graph = _graph()
    leaf = graph.nodes["relevancy"]
    assert isinstance(leaf, MetricNode) and leaf.is_scored_leaf
    assert leaf.args == {"threshold": 0.7, "include_reason": False}
    assert render(graph, GRAPH) == GRAPH
    assert _graph(render(graph)).nodes["relevancy"] == leaf


def test_validate_warns_when_deepeval_is_missing(monkeypatch) -> None:
    monkeypatch.setattr(validate_module, "deepeval_installed", lambda: False)
    diags = check_text(GRAPH, "g.toml").diagnostics
    assert [d.code for d in diags] == ["DAG116"]
    assert "DeepEval is not installed" in diags[0].message and "relevancy" in diags[0].message
    assert diags[0].line == 17  # at `metric = ...`
    monkeypatch.setattr(validate_module, "deepeval_installed", lambda: True)
    assert check_text(GRAPH, "g.toml").diagnostics == []


@pytest.mark.parametrize(("change", "code", "words"), [
    ('metric = "AnswerRelevancyMetric"', "DAG003", "'metric'"),
    ('metric = "os.system; x"', "DAG004", "not a class name"),
    ('args = { "bad key" = 1 }', "DAG004", "cannot be passed"),
    ('args = { model = "gpt-4.1" }', "DAG004", "node's `model`"),
])
def test_bad_metric_fields_are_errors(monkeypatch, change: str, code: str, words: str) -> None:
    monkeypatch.setattr(validate_module, "deepeval_installed", lambda: True)
    if change.startswith("metric"):
        text = GRAPH.replace('metric = "AnswerRelevancyMetric"',
                             "" if code == "DAG003" else change)
    else:
        text = GRAPH.replace("args = { threshold = 0.7, include_reason = false }", change)
    diags = [d for d in check_text(text, "g.toml").diagnostics if d.code == code]
    assert diags and words in diags[0].message


def test_a_task_cannot_feed_a_metric_leaf(monkeypatch) -> None:
    monkeypatch.setattr(validate_module, "deepeval_installed", lambda: True)
    text = GRAPH + textwrap.dedent("""
        [nodes.extract]
        type = "task"
        instructions = "Quote the answer."
        output_label = "Answer"
        params = ["actual_output"]
        children = ["relevancy"]
        """)
    diags = [d for d in check_text(text, "g.toml").diagnostics if d.code == "DAG019"]
    assert diags and "metric leaf" in diags[0].message


def test_paths_table_treats_it_like_a_geval_leaf() -> None:
    graph = _graph()
    report = analyze(graph)
    assert report.geval_leaves == ["relevancy"]
    assert [p.outcome() for p in report.paths] == ["score 0", "relevancy (metric)"]
    out = io.StringIO()
    Console(file=out, width=200, highlight=False).print(render_table(report, graph))
    assert "relevancy (metric)" in out.getvalue() and "run time" in out.getvalue()


@pytest.mark.parametrize(("score", "passes"), [(7.5, True), (3, False)])
def test_answered_like_a_geval_leaf(score: float, passes: bool) -> None:
    graph = _graph()
    asked: list[str] = []

    def answer(ask):
        asked.append(ask.kind)
        return (True, "on topic") if ask.node.id == "on_topic" else (score, "relevant enough")

    result = Engine(graph, CallbackJudge(answer)).run_sync(CASE)
    assert asked == ["binary", "metric"]
    assert result.error is None and result.leaf == "relevancy"
    assert result.score == pytest.approx(score / 10) and result.success is passes
    leaf = result.steps[-1]
    assert leaf.node_type == "metric" and leaf.leaf_score == score and leaf.verdict is None


def test_the_prompt_names_the_metric_and_shows_the_case() -> None:
    graph = _graph()
    seen = {}

    def answer(ask):
        seen[ask.node.id] = ask.prompt.messages[-1]["content"]
        return True if ask.node.id == "on_topic" else 8

    Engine(graph, CallbackJudge(answer)).run_sync(CASE)
    text = seen["relevancy"]
    assert "DeepEval metric: AnswerRelevancyMetric(threshold=0.7, include_reason=False)" in text
    assert "Capital of France?" in text and "Paris." in text


def test_a_model_judge_without_deepeval_fails_the_step_plainly() -> None:
    pytest.importorskip("litellm")
    try:
        import deepeval  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("DeepEval is installed here: the interop tests run it")
    graph = _graph()
    script = Script([(graph.nodes["on_topic"].criteria, {"reason": "r", "verdict": True})])
    with StubServer(script) as stub:
        judge = LiteLLMJudge("openai/stub-model", api_base=stub.base_url, api_key="test",
                             logprobs=False, retries=0)
        result = Engine(graph, judge).run_sync(CASE)
        assert stub.calls == 1  # the gate only
    assert result.error is not None
    step = result.steps[-1]
    assert step.node == "relevancy" and step.error_kind == "graph"
    assert "DeepEval is not installed" in step.error and "AnswerRelevancyMetric" in step.error


def test_exports_write_deepeval_shapes() -> None:
    graph = _graph()
    assert deepeval_refusals(graph) == []
    doc = json.loads(export_graph(graph, "deepeval-json"))
    assert "relevancy" not in doc["nodes"]  # it lives inside the verdict, as in DeepEval
    assert doc["nodes"]["on_topic.true"]["child"] == {
        "type": "metric", "metric_class": "AnswerRelevancyMetric",
        "kwargs": {"threshold": 0.7, "include_reason": False}}
    module = export_graph(graph, "deepeval-python")
    assert "from deepeval.metrics import AnswerRelevancyMetric, DAGMetric" in module
    assert ("relevancy = AnswerRelevancyMetric(\n        threshold=0.7,\n"
            "        include_reason=False,\n        model=judge,\n    )") in module
    assert "on_topic.add_verdict(True, then=relevancy)" in module
    compile(module, "exported.py", "exec")


@pytest.mark.parametrize(("change", "words"), [
    ('args = { "not-a-name" = 1 }', "cannot be keyword arguments"),
    ('args = { when = 1979-05-27 }', "cannot carry"),
    ('args = { threshold = nan }', "cannot carry"),
    ('model = "other"', "pins model"),
])
def test_export_refuses_what_cannot_be_written(change: str, words: str) -> None:
    if change.startswith("args"):
        text = GRAPH.replace("args = { threshold = 0.7, include_reason = false }", change)
    else:
        text = GRAPH + change + "\n"
    refusals = deepeval_refusals(_graph(text))
    assert refusals and refusals[0].nodes == ("relevancy",) and words in refusals[0].message


def test_imports_deepeval_metric_child() -> None:
    doc = {"nodes": {
        "3f1c6c1e-4f0e-4a55-9a8e-2c1d1f0e9b11": {
            "type": "BinaryJudgementNode", "criteria": "On topic?", "label": None,
            "evaluation_params": ["input", "actual_output"], "children": ["v1", "v2"]},
        "v1": {"type": "VerdictNode", "verdict": False, "score": 0},
        "v2": {"type": "VerdictNode", "verdict": True, "child": {
            "type": "metric", "metric_class": "AnswerRelevancyMetric",
            "kwargs": {"threshold": 0.7, "include_reason": True, "async_mode": True,
                       "evaluation_template": None}}},
    }}
    graph = import_deepeval_json(json.dumps(doc))
    leaf = graph.nodes["answer_relevancy"]
    assert isinstance(leaf, MetricNode) and leaf.metric == "AnswerRelevancyMetric"
    assert leaf.args == {"threshold": 0.7, "include_reason": True, "async_mode": True}
    text = render_graph(graph)
    assert 'type = "metric"' in text and 'then = "answer_relevancy"' in text
    assert _graph(text).nodes["answer_relevancy"] == leaf


def test_editor_form_fields() -> None:
    leaf = _graph().nodes["relevancy"]
    assert node_fields(leaf) == ["type", "label", "metric", "args", "params", "turn_window",
                                 "model"]
    text = to_text("args", leaf.args)
    assert text == "threshold = 0.7, include_reason = false"
    assert from_text("args", text) == leaf.args
    assert from_text("args", "{ threshold = 0.5 }") == {"threshold": 0.5}
    assert from_text("args", "") == {}
    with pytest.raises(FieldError, match="key = value"):
        from_text("args", "threshold =")


def test_a_multi_turn_graph_fails_the_metric_step_before_importing_deepeval() -> None:
    import asyncio

    from dagtui.judges.base import Ask, JudgeError
    from dagtui.judges.deepeval_metric import run_metric
    from dagtui.judges.prompts import build_prompt
    from dagtui.run.cases import case_from_dict

    graph = _graph()
    graph.metric = graph.metric.replace(multi_turn=True)
    node = graph.nodes["relevancy"]
    case = case_from_dict(CASE)
    ask = Ask(graph, node, build_prompt(graph, node, case.fields, {}), case)
    with pytest.raises(JudgeError, match="single-turn graphs") as info:
        asyncio.run(run_metric(ask, "openai/gpt-4.1-mini"))
    assert info.value.kind == "graph"


def test_calibrate_measures_a_metric_leaf_like_a_geval_leaf() -> None:
    import dagtui

    cases = [
        {**CASE, "name": "near", "expected": {"on_topic": True, "relevancy": 8}},
        {**CASE, "name": "far", "expected": {"on_topic": True, "relevancy": 5}},
    ]
    judge = CallbackJudge(lambda ask: True if ask.kind == "binary" else 7.5)
    cal = dagtui.calibrate(_graph(), cases, judge=judge)
    leaf = cal.nodes["relevancy"]
    assert (leaf.reached, leaf.cases) == (2, 2)
    assert leaf.mae == pytest.approx((0.5 + 2.5) / 2)
    assert [d["case"] for d in leaf.disagreements] == ["far"]


def test_export_notes_metric_params_are_not_exported() -> None:
    from dagtui.export.refusals import deepeval_notes

    graph = _graph(GRAPH.replace('metric = "AnswerRelevancyMetric"',
                                 'metric = "AnswerRelevancyMetric"\nparams = ["input"]'))
    notes = deepeval_notes(graph, "deepeval-python")
    assert any("params of metric leaves" in n and "relevancy" in n for n in notes)

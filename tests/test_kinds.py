"""Node kinds: a new node type is one dataclass plus one registered `NodeKind`.

The toy `question` type below (a yes/no question worded as `question`, scored by its
verdicts) is registered in a fixture and nothing else is changed: the loader reads it, fmt
orders its keys, the validator checks it, the engine asks it and follows its verdicts, the
cost estimate counts it, the editor form and the debugger edit it, the debugger's panes and
the human judge's dialog show it, the labels and replay judges answer it, traces and a
batch's summary count its verdicts, DOT and Mermaid draw its box and the tree its icon; the
DeepEval exports refuse it (they are written per built-in type).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import pytest

from dagtui.export.deepeval_json import to_json
from dagtui.export.deepeval_python import to_python
from dagtui.export.dot import to_dot
from dagtui.export.mermaid import to_mermaid
from dagtui.export.refusals import ExportRefused, deepeval_refusals
from dagtui.graph.loader import load_text
from dagtui.graph.model import (
    NODE_CLASSES,
    NODE_TYPES,
    REQUIRED_FIELD,
    BinaryNode,
    CheckNode,
    GEvalNode,
    Judgement,
    MetricNode,
    NodeBase,
    NonBinaryNode,
    TaskNode,
    Verdict,
    node_to_raw,
)
from dagtui.graph.paths import judge_calls
from dagtui.graph.tomlio import format_text
from dagtui.graph.validate import validate
from dagtui.judges import CallbackJudge, LabelsJudge, ReplayJudge
from dagtui.judges.base import Ask
from dagtui.judges.prompts import build_prompt, corrective_message, parse_answer
from dagtui.kinds import (
    NodeKind,
    Request,
    decides,
    extracts,
    find_kind,
    icon,
    kind_of,
    register,
    scores,
    unregister,
)
from dagtui.kinds.answers import BOOLEAN
from dagtui.kinds.builtin import BINARY, CHECK, GEVAL, METRIC, NON_BINARY, TASK
from dagtui.report.trace import Trace
from dagtui.run.batch import evaluate_cases
from dagtui.run.cases import case_from_dict
from dagtui.run.engine import Engine
from dagtui.tui.debugger.panes_text import evidence_text, usage_text, verdict_text
from dagtui.tui.debugger.run_model import answer_summary, editable_field
from dagtui.tui.fields import node_fields
from dagtui.tui.screens.dialogs import HumanAnswerScreen


@dataclass(kw_only=True)
class QuestionNode(Judgement, NodeBase):
    """A yes/no question; `true` and `false` verdicts, as a binary node's."""

    type: Literal["question"] = "question"
    question: str = field(default="", metadata=REQUIRED_FIELD)
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None
    verdicts: list[Verdict] = field(default_factory=list, metadata=REQUIRED_FIELD)


def _ask(node: QuestionNode, case_fields: dict, steps: list[str] | None) -> Request:
    return Request([f"Yes or no: {node.question.strip()}"])


def _validate(checks, nid: str, node: QuestionNode) -> None:
    checks.require(nid, node, "question", "it is what the judge answers")
    checks.check_verdicts(nid, node, binary=True)


QUESTION = NodeKind(QuestionNode, "?", BOOLEAN, _ask, editable=lambda node: "question",
                    validate=_validate)

GRAPH = """\
[metric]
name = "Toy"

[nodes.polite]
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 2 }]
params = ["actual_output"]
question = "Is the answer polite?"
type = "question"
"""


@pytest.fixture
def question() -> Iterator[NodeKind]:
    register(QUESTION)
    try:
        yield QUESTION
    finally:
        unregister("question")


def test_the_builtin_kinds_are_looked_up_by_type() -> None:
    for kind, cls in ((TASK, TaskNode), (BINARY, BinaryNode), (NON_BINARY, NonBinaryNode),
                      (CHECK, CheckNode), (GEVAL, GEvalNode), (METRIC, MetricNode)):
        assert kind.cls is cls and find_kind(kind.type) is kind
        assert NODE_CLASSES[kind.type] is cls
    assert find_kind("question") is None and "question" not in NODE_TYPES
    assert icon("nope") == "•" and icon("geval") == "★"


def test_field_lists_come_from_the_dataclass_fields() -> None:
    assert TaskNode.FIELDS == ("type", "label", "instructions", "output_label", "params",
                               "turn_window", "children", "examples")
    assert GEvalNode.FIELDS == ("type", "label", "name", "params", "turn_window",
                                "evaluation_steps", "criteria", "model")
    assert GEvalNode.REQUIRED == ("name", "params")
    assert CheckNode.REQUIRED == ("check", "verdicts")
    assert "params" not in CheckNode.FIELDS  # a check reads one `param`


def test_a_registered_kind_is_loaded_formatted_and_validated(question: NodeKind) -> None:
    assert "question" in NODE_TYPES
    load = load_text(GRAPH)
    assert not load.diagnostics
    node = load.graph.nodes["polite"]
    assert isinstance(node, QuestionNode) and kind_of(node) is question
    assert QuestionNode.FIELDS == ("type", "label", "question", "params", "turn_window",
                                   "verdicts")
    assert list(node_to_raw(node)) == ["type", "question", "params", "verdicts"]
    formatted = format_text(GRAPH)
    assert formatted.index('type = "question"') < formatted.index("question =") \
        < formatted.index("params =") < formatted.index("verdicts =")
    assert not [d for d in validate(load.graph) if d.is_error]
    empty = load.graph.replace(nodes={"polite": node.replace(question="", verdicts=[])})
    codes = {d.code for d in validate(empty) if d.is_error}
    assert "DAG003" in codes  # the kind's own checks ran: no question
    assert "DAG014" in codes  # ... and no verdicts


def test_a_registered_kind_is_asked_and_its_verdict_followed(question: NodeKind) -> None:
    graph = load_text(GRAPH).graph
    node = graph.nodes["polite"]
    prompt = build_prompt(graph, node, {"actual_output": "Thanks!"}, {})
    text = prompt.messages[1]["content"]
    assert "Yes or no: Is the answer polite?" in text and "Thanks!" in text
    assert text.endswith('{"reason": "<why>", "verdict": true or false}')
    assert prompt.schema["properties"]["verdict"] == {"type": "boolean"}
    assert parse_answer(prompt, '{"reason": "r", "verdict": "yes"}').value is True
    assert "true or false" in corrective_message(prompt, "bad")["content"]
    assert judge_calls(node) == 1

    engine = Engine(graph, CallbackJudge(lambda ask: (False, "rude")))
    result = engine.run_sync({"actual_output": "Go away."})
    assert result.score == pytest.approx(0.2) and result.reason == "rude"
    overridden = engine.run_sync({"actual_output": "x"}, overrides={"polite": "true"})
    assert overridden.score == 1.0


def test_a_registered_kind_is_edited_and_drawn(question: NodeKind) -> None:
    node = load_text(GRAPH).graph.nodes["polite"]
    assert node_fields(node) == ["type", "label", "question", "params", "turn_window"]
    assert editable_field(node) == "question"
    assert icon("question") == "?"


def test_deepeval_exports_refuse_a_registered_kind(question: NodeKind) -> None:
    graph = load_text(GRAPH).graph
    assert [r.format() for r in deepeval_refusals(graph)] == [
        "'polite': DeepEval's DAG has no node for the type question"]
    for export in (to_json, to_python):
        with pytest.raises(ExportRefused) as refused:
            export(graph)
        assert [r.format() for r in refused.value.refusals] == [
            "'polite': DeepEval's DAG has no node for the type question"]


def test_a_registered_kind_is_drawn_in_dot_and_mermaid(question: NodeKind) -> None:
    graph = load_text(GRAPH).graph
    dot = to_dot(graph)  # a plain box (the default shape), titled and described
    assert 'n_polite [label="polite\\nIs the answer polite?", shape=box' in dot
    assert "n_polite -> " in dot
    assert 'n_polite["polite<br/>Is the answer polite?"]' in to_mermaid(graph)
    diamond = NodeKind(QuestionNode, "?", BOOLEAN, _ask, shape="diamond",
                       drawn=lambda node: ("Q", node.question))
    register(diamond)
    assert 'n_polite{"Q<br/>Is the answer polite?"}' in to_mermaid(graph)
    assert 'label="Q\\nIs the answer polite?", shape=diamond' in to_dot(graph)


def test_a_registered_kind_in_traces_labels_replay_and_a_batch(question: NodeKind) -> None:
    graph = load_text(GRAPH).graph
    assert decides("question") and not scores("question") and not extracts("question")
    case = case_from_dict({"name": "c1", "actual_output": "Thanks!",
                           "expected": {"polite": "false"}})
    result = Engine(graph, LabelsJudge()).run_sync(case)  # "false" read as the verdict false
    assert result.score == pytest.approx(0.2)
    (step,) = result.steps
    assert step.verdict is False and step.evidence is None and step.method is None
    assert [p.verdict for p in result.path] == [False]

    trace = Trace.of(graph, case, LabelsJudge(), result)
    replayed = Engine(graph, ReplayJudge(trace, strict=True)).run_sync(case)
    assert replayed.score == pytest.approx(0.2) and replayed.steps[0].answer is False

    cases = [case, case_from_dict({"name": "c2", "actual_output": "Go away.",
                                   "expected": {"polite": True}})]
    report = asyncio.run(evaluate_cases(Engine(graph, LabelsJudge()), cases))
    assert [r.score for r in report.results] == [pytest.approx(0.2), pytest.approx(1.0)]
    stats = report.node_stats()["polite"]
    assert stats.reached == 2 and stats.verdicts == {False: 1, True: 1}


def test_a_registered_kind_gets_a_new_node_and_boolean_verdicts(question: NodeKind) -> None:
    node = question.new_node("q1")
    assert isinstance(node, QuestionNode) and node.id == "q1" and node.question == ""
    assert question.boolean_verdicts(node)  # answered true or false
    assert not NON_BINARY.boolean_verdicts(NON_BINARY.new_node("n"))
    check = CHECK.new_node("c")
    assert CHECK.boolean_verdicts(check)
    assert not CHECK.boolean_verdicts(check.replace(check="python"))


def test_an_unregistered_kind_is_unknown_again(question: NodeKind) -> None:
    unregister("question")
    load = load_text(GRAPH)
    assert [d.code for d in load.diagnostics] == ["DAG005"]
    register(question)


def test_a_registered_kind_in_the_debugger_and_the_human_judge(question: NodeKind) -> None:
    graph = load_text(GRAPH).graph
    case = case_from_dict({"name": "c1", "actual_output": "Hi", "expected": {"polite": True}})
    (step,) = Engine(graph, LabelsJudge()).run_sync(case).steps
    assert "verdict   true" in verdict_text(step, "question")
    assert answer_summary(step) == "true"
    assert "scoring method" not in usage_text(step)
    assert evidence_text(step, {}) == "(this node produced no evidence and received none)"
    node = graph.nodes["polite"]
    prompt = build_prompt(graph, node, case.fields, {})
    screen = HumanAnswerScreen(Ask(graph, node, prompt, case))
    assert screen.choices == [True, False]  # picked from a list, as a binary node's

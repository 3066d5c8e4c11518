"""Node kinds: a new node type is one dataclass plus one registered `NodeKind`.

The toy `question` type below (a yes/no question worded as `question`, scored by its
verdicts) is registered in a fixture and nothing else is changed: the loader reads it, fmt
orders its keys, the validator checks it, the engine asks it and follows its verdicts, the
cost estimate counts it, the editor form and the debugger edit it, and drawings show its
icon; the DeepEval exports refuse it (they are written per built-in type).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import pytest

from dagtui.engine import Engine
from dagtui.export.deepeval_json import to_json
from dagtui.export.deepeval_python import to_python
from dagtui.export.refusals import ExportRefused
from dagtui.judges import CallbackJudge
from dagtui.kinds import NodeKind, Request, find_kind, icon, kind_of, register, unregister
from dagtui.kinds.answers import BOOLEAN
from dagtui.kinds.builtin import BINARY, CHECK, GEVAL, METRIC, NON_BINARY, TASK
from dagtui.loader import load_text
from dagtui.model import (
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
from dagtui.paths import judge_calls
from dagtui.prompts import build_prompt, corrective_message, parse_answer
from dagtui.tomlio import format_text
from dagtui.tui.debugger.run_model import editable_field
from dagtui.tui.fields import node_fields
from dagtui.validate import validate


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
                               "turn_window", "children")
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
    for export in (to_json, to_python):
        with pytest.raises(ExportRefused) as refused:
            export(graph)
        assert [r.format() for r in refused.value.refusals] == [
            "'polite': DeepEval's DAG has no node for the type question"]


def test_an_unregistered_kind_is_unknown_again(question: NodeKind) -> None:
    unregister("question")
    load = load_text(GRAPH)
    assert [d.code for d in load.diagnostics] == ["DAG005"]
    register(question)

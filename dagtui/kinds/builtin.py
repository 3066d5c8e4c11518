"""The six built-in node kinds: task, binary, non_binary, check, geval and metric."""

from __future__ import annotations

from typing import Any

from ..model import (
    SINGLE_TURN_PARAMS,
    BinaryNode,
    CheckNode,
    GEvalNode,
    MetricNode,
    NonBinaryNode,
    TaskNode,
)
from .answers import BOOLEAN, INT_SCORE, LABEL, METRIC_SCORE, TEXT
from .kind import NodeKind, Request, own_form_fields, register


def _task_request(node: TaskNode, case_fields: dict[str, Any],
                  steps: list[str] | None) -> Request:
    return Request([f"Instructions:\n{node.instructions.strip()}"])


def _binary_request(node: BinaryNode, case_fields: dict[str, Any],
                    steps: list[str] | None) -> Request:
    return Request([f"Question (answer true or false):\n{node.criteria.strip()}"])


def _non_binary_request(node: NonBinaryNode, case_fields: dict[str, Any],
                        steps: list[str] | None) -> Request:
    labels = node.labels
    listing = "\n".join(f"- {label}" for label in labels)
    return Request([f"Criteria:\n{node.criteria.strip()}",
                    f"Choose exactly one of these labels:\n{listing}"], labels)


def _geval_request(node: GEvalNode, case_fields: dict[str, Any],
                   steps: list[str] | None) -> Request:
    parts = [f"Evaluate the test case for: {node.name or node.id}"]
    if node.criteria:
        parts.append(f"Criteria:\n{node.criteria.strip()}")
    numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(steps or [], start=1))
    parts.append(f"Evaluation steps:\n{numbered}")
    return Request(parts)


def _metric_request(node: MetricNode, case_fields: dict[str, Any],
                    steps: list[str] | None) -> Request:
    """DeepEval runs the metric with its own prompts (a model judge never sends this); this
    request is what a person, the labels or a replay answer, and what the debugger shows:
    the metric, its arguments and the case fields it is given."""
    shown = ", ".join(f"{k}={v!r}" for k, v in node.args.items())
    parts = [f"DeepEval metric: {node.metric}({shown})\n"
             "Score the test case as this metric would (0..10)."]
    if node.params:
        return Request(parts)
    # the metric reads what it needs: show every field given
    return Request(parts, params=[p for p in SINGLE_TURN_PARAMS
                                  if case_fields.get(p) not in (None, "", [])])


def _geval_calls(node: GEvalNode) -> int:
    """One call, plus one to generate the evaluation steps when the leaf only has
    `criteria` (which is also why those steps may differ from run to run)."""
    return 1 + (1 if node.criteria and not node.evaluation_steps else 0)


def _geval_editable(node: GEvalNode) -> str:
    return "evaluation_steps" if node.evaluation_steps else "criteria"


#: a check's form shows these whatever its kind
_CHECK_COMMON = frozenset({"type", "label", "check", "param", "evidence"})


def _check_form_fields(node: CheckNode) -> list[str]:
    """The check kind's own settings, plus any other setting that has a value so nothing
    is hidden."""
    own = set(CheckNode.KIND_FIELDS.get(node.check, ()))
    return [f for f in own_form_fields(node)
            if f in _CHECK_COMMON or f in own or getattr(node, node.attr_for(f), None) is not None]


# the validators are `dagtui.validate.nodes.NodeChecks` methods, reached through the object
# the validator passes in (this core module cannot import the validator: it needs the kinds)
TASK = register(NodeKind(
    TaskNode, "◆", TEXT, _task_request,
    editable=lambda node: "instructions", deepeval="TaskNode",
    validate=lambda checks, nid, node: checks.check_task(nid, node),
))
BINARY = register(NodeKind(
    BinaryNode, "◇", BOOLEAN, _binary_request,
    editable=lambda node: "criteria", deepeval="BinaryJudgementNode",
    validate=lambda checks, nid, node: checks.check_judgement(nid, node),
))
NON_BINARY = register(NodeKind(
    NonBinaryNode, "◈", LABEL, _non_binary_request,
    editable=lambda node: "criteria", deepeval="NonBinaryJudgementNode",
    validate=lambda checks, nid, node: checks.check_judgement(nid, node),
))
#: a deterministic check run in code (`dagtui.checks`): no judge, no call
CHECK = register(NodeKind(
    CheckNode, "☑", calls=lambda node: 0, form_fields=_check_form_fields,
    validate=lambda checks, nid, node: checks.check_check(nid, node),
))
GEVAL = register(NodeKind(
    GEvalNode, "★", INT_SCORE, _geval_request,
    calls=_geval_calls, editable=_geval_editable, deepeval="GEval",
    validate=lambda checks, nid, node: checks.check_geval(nid, node),
))
#: a DeepEval metric leaf: counted as one step, though the metric makes its own calls
#: (AnswerRelevancyMetric three), which dagtui does not see in advance; exported as the
#: metric's own class
METRIC = register(NodeKind(
    MetricNode, "✪", METRIC_SCORE, _metric_request,
    validate=lambda checks, nid, node: checks.check_metric_leaf(nid, node),
))

#: the built-in kinds, in `NODE_TYPES` order
BUILTIN = (TASK, BINARY, NON_BINARY, CHECK, GEVAL, METRIC)

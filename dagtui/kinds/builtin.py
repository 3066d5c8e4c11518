"""The seven built-in node kinds: task, binary, non_binary, check, geval, metric and map."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dagtui.graph.model import (
    SINGLE_TURN_PARAMS,
    BinaryNode,
    CheckNode,
    GEvalNode,
    Graph,
    MapNode,
    MetricNode,
    NonBinaryNode,
    TaskNode,
    Verdict,
    check_settings,
)
from dagtui.kinds.answers import BOOLEAN, INT_SCORE, LABEL, METRIC_SCORE, TEXT
from dagtui.kinds.kind import NodeKind, Request, label_or_id, own_form_fields, register

if TYPE_CHECKING:
    from dagtui.graph.checks import CheckResult, PythonConsent

# `..checks` (the check kinds, the safe regex engine, the schema checker) is imported by the
# functions below, when a check is first run or asked about: the editor's first frame and
# every command that only loads a graph do without it.


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


def _map_request(node: MapNode, case_fields: dict[str, Any],
                 steps: list[str] | None) -> Request:
    """Asked of one item at a time: the item is the only evidence the prompt holds (under
    its task's output label; `dagtui.run.map_run`)."""
    return Request([f"Question about one item (answer true or false):\n{node.criteria.strip()}"])


def _map_drawn(node: MapNode) -> tuple[str, str]:
    aggregate = node.aggregate
    how = (f"at least {aggregate.get('at_least')}" if isinstance(aggregate, dict)
           else str(aggregate))
    return f"map ({how}): {label_or_id(node)}", node.criteria


def _geval_calls(node: GEvalNode) -> int:
    """One call, plus one to generate the evaluation steps when the leaf only has
    `criteria` (which is also why those steps may differ from run to run)."""
    return 1 + (1 if node.criteria and not node.evaluation_steps else 0)


def _geval_editable(node: GEvalNode) -> str:
    return "evaluation_steps" if node.evaluation_steps else "criteria"


def _geval_drawn(node: GEvalNode) -> tuple[str, str]:
    return (f"G-Eval: {node.name or label_or_id(node)}",
            node.criteria or "; ".join(node.evaluation_steps or []))


def _metric_drawn(node: MetricNode) -> tuple[str, str]:
    """Drawn like a G-Eval leaf (scored when it runs): the metric and its arguments."""
    return f"metric: {node.metric}", ", ".join(f"{k}={v!r}" for k, v in node.args.items())


async def _run_check(node: CheckNode, graph: Graph, case_fields: dict[str, Any],
                     evidence: dict[str, Any], python: PythonConsent) -> CheckResult:
    from dagtui.graph.checks import find_check, run_check

    kind = find_check(node.check)
    if kind is not None and kind.runs_code:  # refused (or asked) before anything is imported
        await python.admit(node, graph)
    return run_check(node, graph, case_fields, evidence, python=python)


def _check_inputs(node: CheckNode) -> list[str]:
    """The case fields a check reads: its input and what its kind compares it with (the
    expected output an `equals` compares with, the expected tools of a `tools` check without
    `allowed`)."""
    from dagtui.graph.checks import find_check, input_param

    needed = [p for p in (input_param(node),) if p]
    kind = find_check(node.check)
    if kind is not None:
        needed += kind.compares(node)
    return needed


def _check_boolean(node: CheckNode) -> bool:
    """True and false, unless the kind may answer with a label (python)."""
    from dagtui.graph.checks import find_check

    kind = find_check(node.check)
    return kind is None or not kind.labels


def _pass_fail() -> list[Verdict]:
    return [Verdict(verdict=True, score=10), Verdict(verdict=False, score=0)]


#: a check's form shows these whatever its kind
_CHECK_COMMON = frozenset({"type", "label", "check", "param", "evidence"})


def _check_form_fields(node: CheckNode) -> list[str]:
    """The check kind's own settings, plus any other setting that has a value so nothing
    is hidden."""
    own = set(check_settings(node.check).fields)
    return [f for f in own_form_fields(node)
            if f in _CHECK_COMMON or f in own or getattr(node, node.attr_for(f), None) is not None]


# the validators are `dagtui.graph.validate.nodes.NodeChecks` methods, reached through the object
# the validator passes in (this core module cannot import the validator: it needs the kinds)
TASK = register(NodeKind(
    TaskNode, "◆", TEXT, _task_request,
    editable=lambda node: "instructions", deepeval="TaskNode", deepeval_refusal=None,
    validate=lambda checks, nid, node: checks.check_task(nid, node),
    blank=lambda nid: TaskNode(instructions="", output_label=""),
))
BINARY = register(NodeKind(
    BinaryNode, "◇", BOOLEAN, _binary_request, shape="diamond",
    editable=lambda node: "criteria", deepeval="BinaryJudgementNode", deepeval_refusal=None,
    chooses=True,
    validate=lambda checks, nid, node: checks.check_judgement(nid, node),
    blank=lambda nid: BinaryNode(criteria="", verdicts=_pass_fail()),
))
NON_BINARY = register(NodeKind(
    NonBinaryNode, "◈", LABEL, _non_binary_request, shape="hexagon",
    editable=lambda node: "criteria", deepeval="NonBinaryJudgementNode",
    deepeval_refusal=None, chooses=True, options=lambda node: node.labels,
    validate=lambda checks, nid, node: checks.check_judgement(nid, node),
    blank=lambda nid: NonBinaryNode(criteria="", verdicts=[Verdict(verdict="Good", score=10),
                                                           Verdict(verdict="Bad", score=0)]),
))
#: a deterministic check run in code (`dagtui.graph.checks`): no judge, no call; its verdicts
#: are true and false but for a `python` check's (which may return a label)
CHECK = register(NodeKind(
    CheckNode, "☑", calls=lambda node: 0, form_fields=_check_form_fields,
    validate=lambda checks, nid, node: checks.check_check(nid, node),
    shape="parallelogram", drawn=lambda node: (label_or_id(node), f"check: {node.check}"),
    deepeval_refusal="check nodes run in code, and DeepEval's DAG has no deterministic node "
                     "type; replace them with judgement nodes or keep the graph in dagtui",
    run=_run_check, inputs=_check_inputs, boolean=_check_boolean,
    variant=lambda node: node.check,
    blank=lambda nid: CheckNode(check="json", param="actual_output", verdicts=_pass_fail()),
))
GEVAL = register(NodeKind(
    GEvalNode, "★", INT_SCORE, _geval_request, shape="leaf", drawn=_geval_drawn,
    calls=_geval_calls, editable=_geval_editable, deepeval="GEval", deepeval_refusal=None,
    validate=lambda checks, nid, node: checks.check_geval(nid, node), steps=True,
    blank=lambda nid: GEvalNode(name=nid, params=["actual_output"]),
))
#: a DeepEval metric leaf: counted as one step, though the metric makes its own calls
#: (AnswerRelevancyMetric three), which dagtui does not see in advance; exported as the
#: metric's own class
METRIC = register(NodeKind(
    MetricNode, "✪", METRIC_SCORE, _metric_request, shape="leaf", drawn=_metric_drawn,
    deepeval_refusal=None, measured=True, leaf_word="metric",
    validate=lambda checks, nid, node: checks.check_metric_leaf(nid, node),
    blank=lambda nid: MetricNode(metric="AnswerRelevancyMetric", args={"threshold": 0.5}),
))

#: judges each item of a task's list with a call of its own and aggregates the answers
#: (`dagtui.graph.mapping`); DeepEval has no loop node, so both exports refuse it
MAP = register(NodeKind(
    MapNode, "▤", BOOLEAN, _map_request, shape="stack", drawn=_map_drawn,
    calls=lambda node: 0, per_item=True, item_cap=lambda node: node.max_items,
    leaf_word="map", editable=lambda node: "criteria", boolean=lambda node: True,
    variant=lambda node: (f"at_least {node.aggregate.get('at_least')}"
                          if isinstance(node.aggregate, dict) else str(node.aggregate)),
    deepeval_refusal="DeepEval's DAG has no node that judges each item of a list (a map "
                     "node); keep the graph in dagtui",
    validate=lambda checks, nid, node: checks.check_map(nid, node),
    blank=lambda nid: MapNode(criteria="", aggregate="fraction"),
))

#: the built-in kinds, in `NODE_TYPES` order
BUILTIN = (TASK, BINARY, NON_BINARY, CHECK, GEVAL, METRIC, MAP)

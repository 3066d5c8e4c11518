"""Export to DeepEval's own DAG serialization (`deepeval.metrics.dag.serialization`).

The document has the shape `dag_to_json` writes and `dag_from_json` reads, but instead of
random uuids the ids are the graph's node ids, and each verdict (a node of its own in this
format) is `<judgement id>.<verdict>`, e.g. `present.true`, `order.Correct_order`. The same
graph always gives the same bytes, so the file diffs well in review.

Roots are not stored: DeepEval takes every id that nothing references, in document order,
so roots are written first.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from dagtui.export.naming import unique, verdict_key
from dagtui.export.refusals import ExportRefused, deepeval_refusals
from dagtui.graph.model import (
    BinaryNode,
    GEvalNode,
    Graph,
    MetricNode,
    NonBinaryNode,
    TaskNode,
    Verdict,
)
from dagtui.judges.prompts import examples_block
from dagtui.kinds import kind_of
from dagtui.kinds.kind import verdicts_of


def to_dict(graph: Graph) -> dict[str, Any]:
    """The DeepEval document as a dict; raises `ExportRefused` for what DeepEval cannot hold."""
    refusals = deepeval_refusals(graph)
    if refusals:
        raise ExportRefused("deepeval-json", refusals)
    order = document_order(graph)
    verdict_ids = verdict_node_ids(graph)
    nodes: dict[str, Any] = {}
    for nid in order:
        node = graph.nodes[nid]
        if node.is_scored_leaf:
            continue  # a G-Eval or metric lives inside the verdict that leads to it
        spec: dict[str, Any] = {"type": kind_of(node).deepeval,
                                **_NODE_SPECS[node.type](node, verdict_ids)}
        if graph.metric.multi_turn and node.turn_window is not None:
            spec["turn_window"] = list(node.turn_window)
        nodes[nid] = spec
        for i, verdict in enumerate(verdicts_of(node)):
            nodes[verdict_ids[(nid, i)]] = _verdict_spec(graph, verdict)
    return {"nodes": nodes}


def _task_spec(node: TaskNode, verdict_ids: dict[tuple[str, int], str]) -> dict[str, Any]:
    return {
        "instructions": with_examples(node.instructions, node),
        "output_label": node.output_label,
        "label": node.label,
        "evaluation_params": list(node.params) or None,
        "children": list(node.children),
    }


def _judgement_spec(node: BinaryNode | NonBinaryNode,
                    verdict_ids: dict[tuple[str, int], str]) -> dict[str, Any]:
    return {
        "criteria": with_examples(node.criteria, node),
        "label": node.label,
        "evaluation_params": list(node.params) or None,
        "children": [verdict_ids[(node.id, i)] for i in range(len(node.verdicts))],
    }


def to_json(graph: Graph) -> str:
    """Pretty, deterministic JSON text (UTF-8 kept readable, trailing newline)."""
    return json.dumps(to_dict(graph), indent=2, ensure_ascii=False) + "\n"


def with_examples(text: str, node: Any) -> str:
    """A node's criteria or instructions with its worked examples folded in after a blank
    line (`dagtui.judges.prompts.examples_block`): DeepEval has no examples field, and this way its
    judge still sees them. The text alone when the node has none."""
    block = examples_block(node)
    return text if block is None else f"{text.rstrip()}\n\n{block}"


def document_order(graph: Graph) -> list[str]:
    """Roots first (DeepEval reads roots in document order), then the rest in file order."""
    roots = graph.roots()
    return roots + [nid for nid in graph.nodes if nid not in roots]


def verdict_node_ids(graph: Graph) -> dict[tuple[str, int], str]:
    """(judgement id, verdict index) -> a readable id that collides with nothing."""
    taken = set(graph.nodes)
    out: dict[tuple[str, int], str] = {}
    for nid, node in graph.nodes.items():
        for i, v in enumerate(verdicts_of(node)):
            out[(nid, i)] = unique(f"{nid}.{verdict_key(v.verdict)}", taken, sep="~")
    return out


def _verdict_spec(graph: Graph, verdict: Verdict) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "VerdictNode", "verdict": verdict.verdict}
    if verdict.score is not None:
        spec["score"] = verdict.score
        return spec
    assert verdict.then is not None
    target = graph.nodes[verdict.then]
    leaf = _LEAF_CHILDREN.get(target.type)
    spec["child"] = leaf(target) if leaf is not None else {"type": "node", "ref": verdict.then}
    return spec


def geval_child(node: GEvalNode) -> dict[str, Any]:
    """A G-Eval leaf in DeepEval's `{"type": "geval", ...GEval kwargs}` form."""
    child: dict[str, Any] = {
        "type": "geval",
        "name": node.name,
        "evaluation_params": list(node.params),
    }
    if node.criteria:
        child["criteria"] = node.criteria
    else:
        child["evaluation_steps"] = list(node.evaluation_steps or [])
    if node.model is not None:
        child["model"] = node.model
    return child


def metric_child(node: MetricNode) -> dict[str, Any]:
    """A metric leaf in DeepEval's `{"type": "metric", "metric_class", "kwargs"}` form (what
    `dag_to_json` writes for a BaseMetric child, and `dag_from_json` rebuilds from
    `deepeval.metrics`)."""
    return {"type": "metric", "metric_class": node.metric, "kwargs": dict(node.args)}


#: node type -> its fields in the document, after DeepEval's class (`type`); a scored leaf
#: (geval, metric) is no entry of its own but the `child` of the verdict leading to it
#: (`_LEAF_CHILDREN`). The refusals (`dagtui.export.refusals`) let no other type through.
_NODE_SPECS: dict[str, Callable[[Any, dict[tuple[str, int], str]], dict[str, Any]]] = {
    "task": _task_spec,
    "binary": _judgement_spec,
    "non_binary": _judgement_spec,
}
#: scored-leaf type -> its `child` form inside the verdict that leads to it
_LEAF_CHILDREN: dict[str, Callable[[Any], dict[str, Any]]] = {
    "geval": geval_child,
    "metric": metric_child,
}

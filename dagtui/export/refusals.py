"""What DeepEval's DAG cannot express, found before anything is written.

An export that silently changes meaning is worse than no export, so both DeepEval formats
(JSON and Python) first ask `deepeval_refusals(graph)`. Each `Refusal` names the nodes and
says why; the command prints them and exits 1. The rules mirror what DeepEval 4.3.1 refuses
at construction (`DeepAcyclicGraph`, the node `_validate` methods, `VerdictNode`, `GEval`)
plus the places where it would accept the graph but run it differently from dagtui
(a node behind verdicts of two judgements, a G-Eval leaf's own model, criteria *and* steps).
"""

from __future__ import annotations

from dataclasses import dataclass

from dagtui.graph.compiled import CompiledGraph
from dagtui.graph.cycles import find_cycle
from dagtui.graph.model import (
    MULTI_TURN_PARAMS,
    SINGLE_TURN_PARAMS,
    BinaryNode,
    GEvalNode,
    Graph,
    MetricNode,
    NonBinaryNode,
    TaskNode,
)
from dagtui.kinds import kind_of
from dagtui.text import verdict_text


@dataclass(frozen=True)
class Refusal:
    """One reason the graph cannot be exported, with the nodes it concerns."""

    nodes: tuple[str, ...]
    message: str

    def format(self) -> str:
        where = ", ".join(repr(n) for n in self.nodes)
        return f"{where}: {self.message}" if where else self.message


class ExportRefused(Exception):
    """Raised by an exporter when the graph holds something the target cannot express."""

    def __init__(self, fmt: str, refusals: list[Refusal]) -> None:
        self.fmt = fmt
        self.refusals = refusals
        lines = "\n".join(f"  {r.format()}" for r in refusals)
        super().__init__(f"cannot export to {fmt}:\n{lines}")


def deepeval_refusals(graph: Graph) -> list[Refusal]:
    """Everything in `graph` that DeepEval's DAG would reject or run differently."""
    out: list[Refusal] = []
    if not graph.nodes:
        return [Refusal((), "the graph has no nodes; DeepEval needs at least one")]
    out += _no_deepeval_node(graph)
    out += _unsure(graph)
    out += _judgement_models(graph)
    out += _params(graph)
    out += _verdicts(graph)
    out += _edges(graph)
    out += _gevals(graph)
    out += _metrics(graph)
    if not any(r.message.startswith("refers to") for r in out):
        out += _structure(graph)
    return out


def deepeval_notes(graph: Graph, fmt: str) -> list[str]:
    """What the export leaves out without changing how the graph scores (shown as notes)."""
    notes: list[str] = []
    if fmt == "deepeval-json":
        notes.append(
            "DeepEval's JSON stores structure only: metric name, threshold, model, "
            "include_reason and strict are not in the file (the Python export keeps them)"
        )
    if any(isinstance(n, NonBinaryNode) for n in graph.nodes.values()):
        notes.append(
            "DeepEval lists non-binary labels to the judge in set order, which changes from "
            "process to process; dagtui keeps the declared order (same scores, different "
            "prompts)"
        )
    with_params = [nid for nid, n in graph.nodes.items()
                   if isinstance(n, MetricNode) and n.params]
    if with_params:
        notes.append(
            "a DeepEval metric reads the test-case fields it needs itself, so the params of "
            f"metric leaves (checked by dagtui before a run) are not exported: "
            f"{', '.join(with_params)}"
        )
    with_examples = [nid for nid, n in graph.nodes.items() if getattr(n, "examples", None)]
    if with_examples:
        notes.append(
            "DeepEval has no field for worked examples: they are folded into the criteria or "
            f"instructions text of: {', '.join(with_examples)}"
        )
    labelled = [nid for nid, n in graph.nodes.items() if n.is_scored_leaf and n.label]
    if labelled:
        notes.append(
            f"G-Eval and metric leaves have no label in DeepEval; dropped for: "
            f"{', '.join(labelled)}"
        )
    return notes


def _no_deepeval_node(graph: Graph) -> list[Refusal]:
    """The nodes of each type DeepEval has no form for (its kind's `deepeval_refusal`: a
    check, a type registered beyond the built-in ones), one refusal per type."""
    by_type: dict[str, list[str]] = {}
    for nid, node in graph.nodes.items():
        if kind_of(node).deepeval_refusal is not None:
            by_type.setdefault(node.type, []).append(nid)
    out: list[Refusal] = []
    for type_name, nids in by_type.items():
        refusal = str(kind_of(graph.nodes[nids[0]]).deepeval_refusal)
        out.append(Refusal(tuple(nids), refusal.format(type=type_name)))
    return out


def _unsure(graph: Graph) -> list[Refusal]:
    """Judgements declaring `unsure` (`dagtui.graph.unsure`): DeepEval's judge must pick a
    verdict, so the "cannot tell" answer and where it leads would be lost. A map node is
    refused as a whole (`_no_deepeval_node`)."""
    nids = tuple(nid for nid, node in graph.nodes.items()
                 if kind_of(node).deepeval_refusal is None
                 and getattr(node, "unsure", None) is not None)
    if not nids:
        return []
    return [Refusal(nids, "declares unsure (a \"cannot tell\" answer), which DeepEval's "
                          "judgement nodes cannot offer; remove unsure to export")]


def _judgement_models(graph: Graph) -> list[Refusal]:
    """Judgements with a model of their own: DeepEval asks every judgement node with the
    DAGMetric's model."""
    return [Refusal((nid,), f"pins model {node.model!r}, but DeepEval's DAG asks every "
                            "judgement node with the DAGMetric's own model; remove it or make "
                            "it the metric's model")
            for nid, node in graph.nodes.items()
            if isinstance(node, BinaryNode | NonBinaryNode) and node.model is not None
            and node.model != graph.metric.model]


def _params(graph: Graph) -> list[Refusal]:
    allowed = MULTI_TURN_PARAMS if graph.metric.multi_turn else SINGLE_TURN_PARAMS
    kind = "multi-turn" if graph.metric.multi_turn else "single-turn"
    out: list[Refusal] = []
    for nid, node in graph.nodes.items():
        bad = [p for p in node.params if p not in allowed]
        if bad:
            out.append(Refusal((nid,), f"param(s) {', '.join(map(repr, bad))} are not "
                               f"{kind} params DeepEval knows ({', '.join(allowed)})"))
        if node.turn_window is not None and not graph.metric.multi_turn:
            out.append(Refusal((nid,), "turn_window only exists in multi-turn graphs "
                               "(set multi_turn = true in [metric])"))
    return out


def _verdicts(graph: Graph) -> list[Refusal]:
    out: list[Refusal] = []
    for nid, node in graph.nodes.items():
        if not isinstance(node, BinaryNode | NonBinaryNode):
            continue
        values = [v.verdict for v in node.verdicts]
        if isinstance(node, BinaryNode):
            bools = [v for v in values if isinstance(v, bool)]
            if len(values) != 2 or len(bools) != 2 or bools.count(True) != 1:
                out.append(Refusal((nid,), "a binary node needs exactly two verdicts, one "
                                   "true and one false (DeepEval refuses anything else)"))
        else:
            if not values:
                out.append(Refusal((nid,), "a non-binary node needs at least one verdict"))
            if any(not isinstance(v, str) for v in values):
                out.append(Refusal((nid,), "non-binary verdicts must be label strings"))
            dupes = sorted({str(v) for v in values if values.count(v) > 1})
            if dupes:
                out.append(Refusal((nid,), f"duplicate verdict label(s): {', '.join(dupes)}"))
        for v in node.verdicts:
            shown = verdict_text(v.verdict, quote=True)
            if (v.score is None) == (v.then is None):
                out.append(Refusal((nid,), f"verdict {shown} needs exactly one of score / then"))
            if v.score is not None and (
                isinstance(v.score, bool) or not isinstance(v.score, int | float)
                or not 0 <= v.score <= 10  # NaN fails this too
            ):
                out.append(Refusal((nid,), f"verdict {shown}: score {v.score!r} is not a "
                                   "number from 0 to 10 (DeepEval refuses it)"))
    return out


def _edges(graph: Graph) -> list[Refusal]:
    out: list[Refusal] = []
    for nid, node in graph.nodes.items():
        missing = [t for t in node.targets() if t not in graph.nodes]
        if missing:
            out.append(Refusal((nid,), f"refers to unknown node(s) {', '.join(map(repr, missing))}"))
        if isinstance(node, TaskNode):
            gevals = [c for c in node.children
                      if (child := graph.nodes.get(c)) is not None and child.is_scored_leaf]
            if gevals:
                out.append(Refusal((nid, *gevals), "a G-Eval or metric leaf can only follow a "
                                   "verdict (then = ...); DeepEval has no data edge into one"))
    return out


def _gevals(graph: Graph) -> list[Refusal]:
    out: list[Refusal] = []
    for nid, node in graph.nodes.items():
        if not isinstance(node, GEvalNode):
            continue
        if not node.params:
            out.append(Refusal((nid,), "a G-Eval leaf needs params (DeepEval refuses an "
                               "empty evaluation_params list)"))
        has_criteria = node.criteria is not None and node.criteria.strip() != ""
        has_steps = bool(node.evaluation_steps)
        if has_criteria and has_steps:
            out.append(Refusal((nid,), "criteria and evaluation_steps are both set; "
                               "DeepEval's DAG runs a G-Eval leaf with its criteria and drops "
                               "the steps, so keep only one"))
        elif not has_criteria and not has_steps:
            out.append(Refusal((nid,), "a G-Eval leaf needs non-empty criteria or "
                               "evaluation_steps"))
        if graph.metric.multi_turn and node.turn_window is not None:
            out.append(Refusal((nid,), "turn_window on a G-Eval leaf: DeepEval's "
                               "conversational G-Eval always reads the whole conversation"))
        missing = [p for p in ("content", "role") if p not in node.params]
        if graph.metric.multi_turn and node.params and missing:
            out.append(Refusal((nid,), f"DeepEval's conversational G-Eval always adds "
                               f"{' and '.join(missing)} to its params, so it would judge "
                               f"more than this leaf does; add {', '.join(map(repr, missing))} "
                               "to params"))
        if node.model is not None and node.model != graph.metric.model:
            out.append(Refusal((nid,), f"pins model {node.model!r}, but DeepEval's DAG runs "
                               "every G-Eval leaf with the DAGMetric's own model; remove it or "
                               "make it the metric's model"))
    return out


def _metrics(graph: Graph) -> list[Refusal]:
    """A metric leaf is written as `Class(key=value, model=judge)` (Python) and as
    `{"metric_class": ..., "kwargs": ...}` (JSON): only names and plain values fit."""
    out: list[Refusal] = []
    for nid, node in graph.nodes.items():
        if not isinstance(node, MetricNode):
            continue
        if not node.metric.isidentifier():
            out.append(Refusal((nid,), f"metric {node.metric!r} is not a DeepEval metric "
                               "class name"))
        bad = [k for k in node.args if not k.isidentifier() or k in ("model", "self")]
        if bad:
            out.append(Refusal((nid,), f"args {', '.join(map(repr, bad))} cannot be keyword "
                               "arguments of the metric (the judge model is passed as model)"))
        odd = [k for k, v in node.args.items() if not _plain_value(v)]
        if odd:
            out.append(Refusal((nid,), f"args {', '.join(map(repr, odd))} hold values JSON and "
                               "Python literals cannot carry (dates, NaN, infinity)"))
        if graph.metric.multi_turn:
            out.append(Refusal((nid,), "a metric leaf in a multi-turn graph: dagtui runs "
                               "metric leaves on single-turn cases only"))
        if node.model is not None and node.model != graph.metric.model:
            out.append(Refusal((nid,), f"pins model {node.model!r}; the export gives every "
                               "metric leaf the DAGMetric's judge, so remove it or make it "
                               "the metric's model"))
    return out


def _plain_value(value: object) -> bool:
    """A value JSON and a Python literal both carry exactly (what TOML parsed)."""
    if value is None or isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list | tuple):
        return all(_plain_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_value(v) for k, v in value.items())
    return False


def _structure(graph: Graph) -> list[Refusal]:
    """Roots, reachability, cycles and shared nodes: how DeepEval wires the graph."""
    out: list[Refusal] = []
    parents = graph.parents()
    cycle = find_cycle(parents)
    if cycle:
        on_it = set(cycle)
        return [Refusal(tuple(n for n in graph.nodes if n in on_it), "these nodes form a cycle")]
    roots = graph.roots(parents)
    if graph.metric.roots is not None:
        declared_with_parents = [r for r in roots if parents[r]]
        if declared_with_parents:
            out.append(Refusal(tuple(declared_with_parents), "declared as roots but also "
                               "reached from other nodes; DeepEval refuses a root that another "
                               "root reaches"))
    if not roots:
        return out + [Refusal((), "the graph has no root")]
    judgement_roots = [r for r in roots if isinstance(graph.nodes[r], BinaryNode | NonBinaryNode)]
    if len(roots) > 1 and judgement_roots:
        out.append(Refusal(tuple(roots), "several roots while one of them is a judgement "
                           "node; DeepEval allows several roots only when all are task nodes"))
    geval_roots = tuple(r for r in roots if graph.nodes[r].is_scored_leaf)
    if geval_roots:
        out.append(Refusal(geval_roots, "a G-Eval or metric leaf cannot be a root in DeepEval; "
                           "it must follow a verdict"))
    unreachable = _unreachable(CompiledGraph.of(graph, parents))
    if unreachable:
        out.append(Refusal(tuple(unreachable), "not reachable from the roots; DeepEval would "
                           "run them as extra roots"))
    for nid, node_parents in parents.items():
        judges = [p for p in node_parents if graph.nodes[p].is_judgement]
        if len(judges) > 1:
            out.append(Refusal((nid, *judges), "reached by verdicts of different judgement "
                               "nodes; DeepEval waits for all of them, only one can fire, so "
                               "it never runs this node (and G-Eval leaves would run "
                               "differently than in dagtui)"))
    for nid in roots:
        node = graph.nodes[nid]
        if isinstance(node, TaskNode) and not node.params:
            out.append(Refusal((nid,), "a root task node with no params reads nothing; "
                               "DeepEval raises at run time"))
    return out


def _unreachable(compiled: CompiledGraph) -> list[str]:
    reached = set(compiled.reachable(compiled.roots))
    return [nid for i, nid in enumerate(compiled.ids) if i not in reached]

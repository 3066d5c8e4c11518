"""Saving over another program's change: a node-by-node three-way merge (no Textual here).

The editor read the file (*base*), the person edited it (*ours*), and meanwhile another
program wrote the file again (*theirs*). Each node, and the `[metric]` table, is taken
from the side that changed it; when both changed the same one differently it is a
conflict, and nothing is merged (the editor then offers to overwrite or reload instead).
The merged graph is saved into *their* text, so their comments and layout are kept as the
save keeps the person's own (`tomlio.render`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dagtui.graph.model import Graph, Metric, NodeBase


@dataclass
class Merge:
    """The merged `[metric]` and nodes (theirs' order, then the nodes only ours has), or
    the conflicts: the ids (and `[metric]`) both sides changed differently."""

    metric: Metric | None = None
    nodes: dict[str, NodeBase] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    #: what came from the other program, for the message (`[metric]`, node ids)
    theirs: list[str] = field(default_factory=list)


def _raw(graph: Graph) -> tuple[Any, dict[str, Any]]:
    raw = graph.to_raw()
    return raw.get("metric"), raw.get("nodes", {})


def merge(base: Graph, ours: Graph, theirs: Graph) -> Merge:
    """`ours`' changes since `base`, applied on top of `theirs` (see the module's doc)."""
    base_metric, base_nodes = _raw(base)
    our_metric, our_nodes = _raw(ours)
    their_metric, their_nodes = _raw(theirs)
    out = Merge()
    if our_metric == base_metric:
        out.metric = theirs.metric
        if their_metric != base_metric:
            out.theirs.append("[metric]")
    elif their_metric in (base_metric, our_metric):
        out.metric = ours.metric
    else:
        out.conflicts.append("[metric]")
    order = list(theirs.nodes) + [n for n in ours.nodes if n not in theirs.nodes]
    for nid in dict.fromkeys([*order, *base.nodes]):
        b, o, t = base_nodes.get(nid), our_nodes.get(nid), their_nodes.get(nid)
        if o == b:  # untouched here: theirs, whatever it is (changed, added, deleted)
            if t is not None:
                out.nodes[nid] = theirs.nodes[nid]
            if t != b:
                out.theirs.append(nid)
        elif t in (b, o):  # changed here only (or the same way there)
            if o is not None:
                out.nodes[nid] = ours.nodes[nid]
        else:
            out.conflicts.append(nid)
    out.nodes = {nid: out.nodes[nid] for nid in order if nid in out.nodes}
    return out

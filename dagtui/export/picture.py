"""What Mermaid and DOT pictures share: the nodes, edges and score leaves to draw.

Both formats draw the same picture, so the walk over the graph lives here and the two
writers only differ in syntax and escaping. Data edges (a task feeding its children) and
control edges (a verdict leading on) are kept apart so each writer can style them.
A verdict with a score is drawn as its own small score box, so every path visibly ends.
A node's box takes its shape and text from the node's kind (`NodeKind.shape`, `drawn`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dagtui.export.naming import slug, unique
from dagtui.graph.model import Graph, NodeBase, TaskNode, branches_of
from dagtui.graph.paths import show_number
from dagtui.kinds import kind_of
from dagtui.text import shorten, verdict_text

#: criteria/instructions longer than this are shortened in pictures
MAX_TEXT = 60


@dataclass(frozen=True)
class Box:
    key: str  # the graph node id, or `score:<judgement>:<index>` for a score leaf
    #: a node's `NodeKind.shape` (`dagtui.kinds.kind.SHAPES`), or `score` (a verdict's
    #: score) or `missing` (a node pointed at that does not exist)
    shape: str
    title: str
    detail: str = ""


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: str  # data | control
    label: str = ""


@dataclass
class Picture:
    boxes: list[Box]
    edges: list[Edge]


def box_ids(picture: Picture) -> dict[str, str]:
    """Safe, unique ids for the boxes (`n_<slug>`, score boxes `score_<judgement>_<i>`).

    Never the raw node id: it may hold characters a format gives meaning to, or control
    characters that two ids could share after cleaning. Node ids show up in labels instead.
    """
    taken: set[str] = set()
    ids: dict[str, str] = {}
    for box in picture.boxes:
        base = slug(box.key) if box.shape == "score" else "n_" + (slug(box.key) or "node")
        ids[box.key] = unique(base or "score", taken)
    return ids


def _text(text: str, limit: int = MAX_TEXT) -> str:
    """A box's text or an edge's label: one line, cut to fit."""
    return shorten(text, limit, flat="squash")


def build(graph: Graph) -> Picture:
    boxes: list[Box] = []
    edges: list[Edge] = []
    for nid, node in graph.nodes.items():
        boxes.append(_box(nid, node))
    missing: list[str] = []
    for nid, node in graph.nodes.items():
        if isinstance(node, TaskNode):
            for child in node.children:
                edges.append(Edge(nid, child, "data", _text(node.output_label, 30)))
                if child not in graph.nodes and child not in missing:
                    missing.append(child)
        for i, v in enumerate(branches_of(node)):
            label = verdict_text(v.verdict)
            if v.then is not None:
                edges.append(Edge(nid, v.then, "control", label))
                if v.then not in graph.nodes and v.then not in missing:
                    missing.append(v.then)
            elif v.score is not None:
                key = f"score:{nid}:{i}"
                while key in graph.nodes:
                    key += "'"
                boxes.append(Box(key, "score", f"score {show_number(v.score)}"))
                edges.append(Edge(nid, key, "control", label))
    for target in missing:
        boxes.append(Box(target, "missing", target, "unknown node"))
    return Picture(boxes, edges)


def _box(nid: str, node: NodeBase) -> Box:
    kind = kind_of(node)
    title, detail = kind.drawn(node)
    return Box(nid, kind.shape, title or nid, _text(detail))

"""Draw a graph as a layered picture with box characters (no textual; used by the editor's
graph view and usable from scripts).

This module says what the editor shows: one box per node (icon and id, type and problem
badges, leaf verdicts as `verdict → score`), control edges (verdict → then, labelled with the
verdicts, solid magenta) and data edges (task → children, dashed cyan where they run alone).
Layout and drawing are `dagtui.graph.dagdraw`'s, shared with the suite view.
"""

from __future__ import annotations

from dagtui.graph.dagdraw import Edge, EdgeLook, Node, Picture, draw_dag
from dagtui.graph.dagdraw import neighbourhood as _reachable
from dagtui.graph.model import Graph, branches_of
from dagtui.kinds import icon, kind_of, kind_text
from dagtui.text import shorten, verdict_text

LEGEND = "── verdict → then (control)   ┄┄ task → children (data)   x → N: leaf score"
MAX_LINE = 26
LOOKS = {
    "data": EdgeLook(line="cyan", arrow="cyan", label="magenta", dashed=True),
    "control": EdgeLook(line="magenta", arrow="magenta", label="magenta"),
}


class Drawing(Picture):
    """The picture: rows of text plus (row, start, end, style) spans and box places."""


def neighbourhood(graph: Graph, node_id: str) -> set[str]:
    """`node_id` with everything upstream and downstream of it."""
    down = {nid: [t for t in n.targets() if t in graph.nodes] for nid, n in graph.nodes.items()}
    return _reachable(node_id, down)


def edges_of(graph: Graph, keep: set[str]) -> list[Edge]:
    """Data edges of tasks, then one control edge per (node, then) labelled with its
    verdicts, between kept nodes."""
    edges: list[Edge] = []
    for nid, node in graph.nodes.items():
        if nid not in keep:
            continue
        if kind_of(node).extracts:
            edges += [Edge(nid, c, "data") for c in node.targets() if c in keep]
        labels: dict[str, list[str]] = {}
        for v in branches_of(node):
            if v.then is not None and v.then in keep:
                labels.setdefault(v.then, []).append(shorten(verdict_text(v.verdict), 14))
        edges += [Edge(nid, t, "control", "/".join(ls)) for t, ls in labels.items()]
    return edges


def _box_lines(graph: Graph, nid: str, badges: dict[str, tuple[int, int]]) -> list[str]:
    node = graph.nodes[nid]
    lines = [f"{icon(node.type)} {shorten(nid, MAX_LINE)}"]
    kind = kind_text(node)
    errors, warnings = badges.get(nid, (0, 0))
    if errors:
        kind += f"  ✖{errors}"
    if warnings:
        kind += f"  ⚠{warnings}"
    lines.append(kind)
    for v in branches_of(node):
        if v.then is None and v.score is not None:
            score = int(v.score) if float(v.score).is_integer() else v.score
            lines.append(f"{shorten(verdict_text(v.verdict), MAX_LINE - 6)} → {score}")
    return lines


def _node(graph: Graph, nid: str, badges: dict[str, tuple[int, int]],
          selected: str | None) -> Node:
    """The box of `nid`: the selected one reversed, problems coloured, tasks bold; under the
    title, the type line is dim and the leaf scores green."""
    lines = _box_lines(graph, nid, badges)
    if nid == selected:
        return Node(nid, lines, "reverse bold", ["reverse bold"] * len(lines))
    style = _box_style(graph, nid, badges)
    return Node(nid, lines, style, [style, "dim"] + ["green"] * (len(lines) - 2))


def draw(graph: Graph, focus: str | None = None, *,
         badges: dict[str, tuple[int, int]] | None = None, selected: str | None = None) -> Drawing:
    """Lay out and draw `graph` (only `focus`'s neighbourhood when given)."""
    badges = badges or {}
    keep = neighbourhood(graph, focus) if focus in graph.nodes else set(graph.nodes)
    nodes = [_node(graph, n, badges, selected) for n in graph.nodes if n in keep]
    if not nodes:
        return Drawing(["(no nodes)"], [], {})
    pic = draw_dag(nodes, edges_of(graph, keep), LOOKS)
    return Drawing(pic.rows, pic.spans, pic.boxes)


def _box_style(graph: Graph, nid: str, badges: dict[str, tuple[int, int]]) -> str:
    errors, warnings = badges.get(nid, (0, 0))
    if errors:
        return "red"
    if warnings:
        return "yellow"
    return "bold" if kind_of(graph.nodes[nid]).extracts else ""

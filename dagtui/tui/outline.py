"""The graph as an outline (what the tree panel shows), computed without textual.

Roots come first; under a task its children (data edges), under a judgement or check node
its verdicts (control edges: `true → order`, `false → score 0`). A node reached from several
parents is shown in full once, under the parent that reaches it first breadth-first (the
shallowest place), and as a link (`↗`) everywhere else. Nodes no root reaches (a cycle, or
a graph whose roots were all deleted) are listed at the end so nothing is hidden.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from dagtui.graph.model import Graph, TaskNode
from dagtui.record import FrozenRecord, Record, frozen


@frozen
class ItemRef(FrozenRecord):
    """What one outline row stands for; `key` identifies it across rebuilds."""

    kind: str  # "metric" | "node" | "verdict" | "link" | "group"
    node: str | None = None  # the node this row belongs to (owner for verdicts)
    index: int | None = None  # verdict index
    target: str | None = None  # where a verdict or link points
    via: str | None = None  # the parent row's node for links / data edges
    nested: bool = False  # a verdict row whose target is shown in full beneath it

    @property
    def key(self) -> tuple[object, ...]:
        return (self.kind, self.node, self.index, self.target, self.via)


@dataclass(eq=False, repr=False)
class Item(Record):
    ref: ItemRef
    children: list[Item] = field(default_factory=list)


def homes(graph: Graph, roots: list[str]) -> dict[str, tuple[str, int | None]]:
    """node id -> (parent id, verdict index or None) where it is shown in full."""
    home: dict[str, tuple[str, int | None]] = {}
    seen = set(roots)
    queue = deque(roots)
    while queue:
        nid = queue.popleft()
        node = graph.nodes.get(nid)
        if node is None:
            continue
        edges: list[tuple[str, int | None]] = []
        if isinstance(node, TaskNode):
            edges = [(c, None) for c in node.children]
        for i, v in enumerate(getattr(node, "verdicts", []) or []):
            if v.then is not None:
                edges.append((v.then, i))
        for target, index in edges:
            if target in graph.nodes and target not in seen:
                seen.add(target)
                home[target] = (nid, index)
                queue.append(target)
    return home


#: deeper chains continue as a new top-level entry (a link marks the jump), so a long
#: pipeline stays readable instead of drifting off the right edge
MAX_DEPTH = 8


def build_outline(graph: Graph) -> list[Item]:
    """The rows of the tree panel as nested items."""
    roots = graph.roots()
    home = homes(graph, roots)
    placed: set[str] = set()
    hoisted: list[str] = []

    def nests(target: str | None, owner: str, index: int | None, depth: int) -> bool:
        if target is None or target not in graph.nodes or target in placed:
            return False
        if home.get(target) != (owner, index):
            return False
        if depth >= MAX_DEPTH:
            if target not in hoisted:
                hoisted.append(target)
            return False
        return True

    def full(nid: str, via: str | None, depth: int) -> Item:
        placed.add(nid)
        item = Item(ItemRef("node", nid, via=via))
        node = graph.nodes[nid]
        if isinstance(node, TaskNode):
            for child in node.children:
                if nests(child, nid, None, depth + 1):
                    item.children.append(full(child, nid, depth + 1))
                else:
                    item.children.append(Item(ItemRef("link", nid, target=child, via=nid)))
        for i, v in enumerate(getattr(node, "verdicts", []) or []):
            t = v.then
            nested = nests(t, nid, i, depth + 2)
            row = Item(ItemRef("verdict", nid, index=i, target=t, nested=nested))
            if nested and t is not None:
                row.children.append(full(t, nid, depth + 2))
            item.children.append(row)
        return item

    items = [Item(ItemRef("metric"))]
    for r in roots:
        if r not in placed:
            items.append(full(r, None, 0))
    while hoisted:
        nid = hoisted.pop(0)
        if nid not in placed:
            items.append(full(nid, None, 0))
    rest = [nid for nid in graph.nodes if nid not in placed]
    if rest:
        group = Item(ItemRef("group", target="unreachable"))
        for nid in rest:
            if nid not in placed:
                group.children.append(full(nid, None, 1))
        items.append(group)
    return items


def _structure_part(nid: str, node: Any) -> tuple[object, ...]:
    children = tuple(node.children) if isinstance(node, TaskNode) else ()
    verdicts = tuple(v.then for v in getattr(node, "verdicts", []) or [])
    return (nid, node.type, children, verdicts)


def structure_key(graph: Graph) -> tuple[object, ...]:
    """Changes when the outline's shape changes (and only then): rebuild vs relabel."""
    return (tuple(graph.roots()), *(_structure_part(nid, node)
                                    for nid, node in graph.nodes.items()))


def score_text(score: object) -> str:
    if isinstance(score, float) and score.is_integer():
        score = int(score)
    return f"score {score}"

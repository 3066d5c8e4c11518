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

from ..model import Graph, TaskNode

TYPE_ICONS = {"task": "◆", "binary": "◇", "non_binary": "◈", "check": "☑", "geval": "★"}


@dataclass(frozen=True)
class ItemRef:
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


@dataclass
class Item:
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


def build_outline(graph: Graph) -> list[Item]:
    """The rows of the tree panel as nested items."""
    roots = graph.roots()
    home = homes(graph, roots)
    placed: set[str] = set()

    def full(nid: str, via: str | None) -> Item:
        placed.add(nid)
        item = Item(ItemRef("node", nid, via=via))
        node = graph.nodes[nid]
        if isinstance(node, TaskNode):
            for child in node.children:
                if child in graph.nodes and home.get(child) == (nid, None) and child not in placed:
                    item.children.append(full(child, nid))
                else:
                    item.children.append(Item(ItemRef("link", nid, target=child, via=nid)))
        for i, v in enumerate(getattr(node, "verdicts", []) or []):
            t = v.then
            nested = (t is not None and t in graph.nodes and home.get(t) == (nid, i)
                      and t not in placed)
            row = Item(ItemRef("verdict", nid, index=i, target=t, nested=nested))
            if nested:
                row.children.append(full(t, nid))
            item.children.append(row)
        return item

    items = [Item(ItemRef("metric"))]
    for r in roots:
        if r not in placed:
            items.append(full(r, None))
    rest = [nid for nid in graph.nodes if nid not in placed and nid not in home]
    rest += [nid for nid in graph.nodes if nid not in placed and nid in home]
    if rest:
        group = Item(ItemRef("group", target="unreachable"))
        for nid in rest:
            if nid not in placed:
                group.children.append(full(nid, None))
        items.append(group)
    return items


def structure_key(graph: Graph) -> tuple[object, ...]:
    """Changes when the outline's shape changes (and only then): rebuild vs relabel."""
    parts: list[object] = [tuple(graph.roots())]
    for nid, node in graph.nodes.items():
        children = tuple(node.children) if isinstance(node, TaskNode) else ()
        verdicts = tuple(v.then for v in getattr(node, "verdicts", []) or [])
        parts.append((nid, node.type, children, verdicts))
    return tuple(parts)


def verdict_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def score_text(score: object) -> str:
    if isinstance(score, float) and score.is_integer():
        score = int(score)
    return f"score {score}"

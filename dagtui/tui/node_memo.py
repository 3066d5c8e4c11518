"""Per-node memo for signatures computed over every node of a graph.

The editor replaces a node object on every edit (copy-on-write) and never mutates one in
place, so a value derived from one node object stays valid for as long as that very object
is in the graph. On a 1,000-node graph a keystroke changes one node: recomputing its part
alone (and reusing the other 999 by identity) turns an O(nodes) rebuild of Python tuples
into an O(nodes) walk of dict lookups.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ..model import Graph

T = TypeVar("T")


class NodeMemo(Generic[T]):
    """`parts(graph)` = `[part(node_id, node) for each node]`, recomputing a part only for
    nodes whose object changed since the last call.

    The memo keeps a reference to each node object it has seen, so an id is never reused
    by a different object while its part is remembered.
    """

    def __init__(self, part: Callable[[str, Any], T]) -> None:
        self._part = part
        self._memo: dict[str, tuple[Any, T]] = {}

    def parts(self, graph: Graph) -> tuple[T, ...]:
        memo = self._memo
        fresh: dict[str, tuple[Any, T]] = {}
        out: list[T] = []
        for nid, node in graph.nodes.items():
            known = memo.get(nid)
            if known is not None and known[0] is node:
                entry = known
            else:
                entry = (node, self._part(nid, node))
            fresh[nid] = entry
            out.append(entry[1])
        self._memo = fresh
        return tuple(out)

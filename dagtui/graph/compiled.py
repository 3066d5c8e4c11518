"""A graph's edges compiled once into integer arrays, for everything that walks them.

Running a case (`schedule.RunState`), enumerating every verdict combination
(`paths._Walker` and `paths._StateSearch`), the debugger's "step 12/40" (`schedule.Reach`),
the engine's and the DeepEval export's reachable nodes all follow the same edges, many times.
Compiling them once per graph version (node ids to indices in file order, each node's
distinct parents and targets, how many arrivals it needs) lets those walkers share one form
and one arrival rule (`schedule.Progress`) instead of each building its own maps, and lets
them index lists instead of hashing strings on every step. Cycles and topological order are
`dagtui.graph.cycles`'s.

Index order is file order, so "the first ready node in file order" is the smallest index.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass

from dagtui.graph.model import Graph, TaskNode


@dataclass(frozen=True)
class CompiledGraph:
    """The edges of one graph by node index (file order); built by `CompiledGraph.of`."""

    #: node ids in file order (index -> id)
    ids: tuple[str, ...]
    #: id -> index
    index: dict[str, int]
    #: per node: its distinct parents (data or control edge into it), in file order
    parents: tuple[tuple[int, ...], ...]
    #: per node: the distinct nodes it points at (data or control), in file order
    targets: tuple[tuple[int, ...], ...]
    #: per task: its distinct known children, in declared order (they receive its output);
    #: empty for every other node
    data: tuple[tuple[int, ...], ...]
    #: per node: how many parents must arrive before it may run (its distinct parents)
    needs: tuple[int, ...]
    #: the nodes ready when a run starts (declared roots, or the nodes nothing points at),
    #: distinct, in file order
    roots: tuple[int, ...]

    @classmethod
    def of(cls, graph: Graph, parents: dict[str, list[str]] | None = None) -> CompiledGraph:
        """Compile `graph`; pass `parents` when already computed (`graph.parents()`)."""
        parents_of = parents if parents is not None else graph.parents()
        ids = tuple(graph.nodes)
        index = {nid: i for i, nid in enumerate(ids)}
        at = index.__getitem__
        parent_ix = tuple([tuple(map(at, parents_of[nid])) for nid in ids])
        out: list[list[int]] = [[] for _ in ids]
        for child, ps in enumerate(parent_ix):  # file order, so each target list is too
            for p in ps:
                out[p].append(child)
        data = tuple(
            # dict.fromkeys: a child listed twice is still one data edge
            tuple(index[c] for c in dict.fromkeys(node.children) if c in index)
            if isinstance(node, TaskNode) else ()
            for node in graph.nodes.values()
        )
        roots = tuple(sorted({index[r] for r in graph.roots(parents_of)}))
        return cls(ids, index, parent_ix, tuple(map(tuple, out)), data,
                   tuple(map(len, parent_ix)), roots)

    def reachable(self, starts: Iterable[int]) -> list[int]:
        """The nodes reachable from `starts` along every edge (every verdict, every data
        edge), `starts` included, in file order."""
        targets = self.targets
        seen = [False] * len(self.ids)
        stack = list(starts)
        while stack:
            i = stack.pop()
            if not seen[i]:
                seen[i] = True
                stack.extend(targets[i])
        return [i for i, s in enumerate(seen) if s]

    def names(self, indices: Iterable[int]) -> list[str]:
        """The ids of `indices`, in the order given."""
        ids = self.ids
        return [ids[i] for i in indices]


class NodeNames(Set[str]):
    """A live set of node indices read as node ids, without copying it.

    `schedule.Reach` keeps its members as indices and changes them on every step; handing out
    this view keeps a step O(1) instead of O(members) for a set of names.
    """

    __slots__ = ("_members", "_compiled")

    def __init__(self, members: set[int], compiled: CompiledGraph) -> None:
        self._members = members
        self._compiled = compiled

    def __contains__(self, nid: object) -> bool:
        i = self._compiled.index.get(nid) if isinstance(nid, str) else None
        return i is not None and i in self._members

    def __iter__(self) -> Iterator[str]:
        ids = self._compiled.ids
        return (ids[i] for i in self._members)

    def __len__(self) -> int:
        return len(self._members)

    def __repr__(self) -> str:
        return f"NodeNames({sorted(self)!r})"

"""Cycles, topological order and levels of a dependency graph, in one module.

dagtui has three graphs whose edges must not loop: a decision graph's nodes, a suite's rules
(`depends_on`) and the graph an export hands to DeepEval. Where a cycle only has to be refused
(show one and stop), the standard library's `graphlib` finds it; where every cycle must be
reported (the validator names one per strongly connected group), `components` runs
Tarjan's algorithm once, which also gives the validator its topological order. Neither
recurses, so a 5,000-node chain cannot overflow the stack.

`graphlib`'s functions take a graph as it does: each node mapped to the nodes that must come
*before* it (a node's parents, a rule's `depends_on`), in the order results should follow.
Nodes named only as predecessors are ignored: unknown names are reported on their own.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from graphlib import CycleError, TopologicalSorter
from typing import TypeVar

N = TypeVar("N", bound=Hashable)

__all__ = ["CycleError", "components", "find_cycle", "holds_cycle", "levels"]


def _sorter(before: Mapping[N, Iterable[N]]) -> TopologicalSorter[N]:
    sorter: TopologicalSorter[N] = TopologicalSorter()
    for node, preds in before.items():
        sorter.add(node, *(p for p in preds if p in before))
    return sorter


def find_cycle(before: Mapping[N, Iterable[N]]) -> list[N] | None:
    """One cycle as `[a, b, ..., a]`, each node coming before the next (a parent, then its
    child), or None when there is none."""
    try:
        _sorter(before).prepare()
    except CycleError as exc:
        return list(exc.args[1])
    return None


def levels(before: Mapping[N, Iterable[N]]) -> list[list[N]]:
    """Level 0: the nodes with nothing before them; level n: those whose latest predecessor
    is on level n-1. Mapping order inside a level. Raises `CycleError` on a cycle."""
    sorter = _sorter(before)
    sorter.prepare()
    position = {n: k for k, n in enumerate(before)}
    out: list[list[N]] = []
    while sorter.is_active():
        level = sorted(sorter.get_ready(), key=position.__getitem__)
        out.append(level)
        sorter.done(*level)
    return out


def components(nodes: Iterable[N], after: Mapping[N, Sequence[N]]) -> list[list[N]]:
    """The strongly connected components (Tarjan), starting from `nodes` in order;
    `after[v]` lists the nodes v points at. A component comes after every component it
    points at, so when none holds a cycle (`holds_cycle`), the reversed list is a topological
    order. Iterative, so depth costs no stack."""
    index_of: dict[N, int] = {}
    low: dict[N, int] = {}
    on_stack: set[N] = set()
    stack: list[N] = []
    out: list[list[N]] = []
    counter = 0
    for start in nodes:
        if start in index_of:
            continue
        work: list[tuple[N, int]] = [(start, 0)]
        while work:
            v, pi = work.pop()
            if pi == 0:
                index_of[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            succ = after[v]
            if pi < len(succ):
                work.append((v, pi + 1))
                w = succ[pi]
                if w not in index_of:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index_of[w])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index_of[v]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == v:
                        break
                out.append(group)
    return out


def holds_cycle(component: Sequence[N], after: Mapping[N, Sequence[N]]) -> bool:
    """Whether a strongly connected component is a cycle: two or more nodes, or one node
    pointing at itself."""
    return len(component) > 1 or component[0] in after[component[0]]

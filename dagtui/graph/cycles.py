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

import sys
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from graphlib import CycleError, TopologicalSorter
from typing import TypeVar

N = TypeVar("N", bound=Hashable)

__all__ = ["CycleError", "components", "cycles", "find_cycle", "levels"]


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
    points at, so when none holds a cycle (`cycles`), the reversed list is a topological
    order. Iterative, so depth costs no stack."""
    # low[v]: the smallest visit number v reaches while its component is open; a closed
    # component's nodes get `closed`, larger than any, so they never lower another's
    low: dict[N, int] = {}
    closed = sys.maxsize
    stack: list[N] = []
    out: list[list[N]] = []
    for start in nodes:
        if start in low:
            continue
        low[start] = number = len(low)
        stack.append(start)
        # each frame: a node, its visit number and what is left of its successors
        work: list[tuple[N, int, Iterator[N]]] = [(start, number, iter(after[start]))]
        while work:
            v, number, rest = work[-1]
            for w in rest:
                reached = low.get(w)
                if reached is None:
                    low[w] = reached = len(low)
                    stack.append(w)
                    work.append((w, reached, iter(after[w])))
                    break
                if reached < low[v]:
                    low[v] = reached
            else:  # every successor seen: v is done
                work.pop()
                if work and low[v] < low[parent := work[-1][0]]:
                    low[parent] = low[v]
                if low[v] == number:
                    group = []
                    while True:
                        w = stack.pop()
                        low[w] = closed
                        group.append(w)
                        if w == v:
                            break
                    out.append(group)
    return out


def cycles(found: Iterable[list[N]], after: Mapping[N, Sequence[N]]) -> list[list[N]]:
    """The components of `found` that are cycles: two or more nodes, or one node pointing at
    itself."""
    return [c for c in found if len(c) > 1 or c[0] in after[c[0]]]

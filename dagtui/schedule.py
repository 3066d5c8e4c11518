"""Execution semantics, in one place: when a node may run and where a run ends.

Both the engine (which calls judges) and path analysis (which enumerates every verdict
combination without calling anything) drive this same state machine, so what `validate`
promises about paths is exactly what `run` does.

The rules (README "A graph file", Semantics; tests/test_schedule.py):
- A node runs when every one of its distinct parents has *arrived*, and at most once.
- A task parent arrives when it has run (data edge: the child also receives its output).
- A judgement/check parent arrives only if the verdict it chose points at the node
  (control edge). Two verdicts of one judgement into one node are one edge.
- A verdict with a `score` reaches a leaf; a `geval` or `metric` node is a leaf when it runs.
- A run is well-formed when it reaches exactly one leaf.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass, field

from .model import Graph, TaskNode, Verdict


@dataclass(frozen=True)
class Topology:
    """The graph's edges, precomputed once per graph version.

    Built once per graph (the engine keeps one for every case it runs) so that a step of a
    run costs O(the node's degree), never a scan of the graph: `position` orders the ready
    set without searching `order`, and `targets` lets a run's reachable set shrink edge by
    edge (`Reach`) instead of being walked again after every step.
    """

    order: tuple[str, ...]
    parents: dict[str, tuple[str, ...]]
    roots: tuple[str, ...]
    #: task id -> children that receive its output
    data_children: dict[str, tuple[str, ...]]
    #: node id -> its index in file order
    position: dict[str, int] = field(default_factory=dict, compare=False)
    #: node id -> the distinct nodes it points at (data or control), in file order
    targets: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not self.position:
            object.__setattr__(self, "position", {nid: i for i, nid in enumerate(self.order)})
        if not self.targets:
            out: dict[str, list[str]] = {nid: [] for nid in self.order}
            for child in self.order:  # file order, so each target list is in file order
                for parent in self.parents.get(child, ()):
                    if parent in out:
                        out[parent].append(child)
            object.__setattr__(self, "targets", {k: tuple(v) for k, v in out.items()})

    @classmethod
    def of(cls, graph: Graph, parents: dict[str, list[str]] | None = None) -> Topology:
        """Edges of `graph`; pass `parents` when already computed (`graph.parents()`)."""
        parents_of = parents if parents is not None else graph.parents()
        data = {
            # dict.fromkeys: a child listed twice is still one data edge
            nid: tuple(c for c in dict.fromkeys(node.children) if c in graph.nodes)
            for nid, node in graph.nodes.items()
            if isinstance(node, TaskNode)
        }
        return cls(
            tuple(graph.nodes),
            {k: tuple(v) for k, v in parents_of.items()},
            tuple(graph.roots(parents_of)),
            data,
        )


def leaf_kind(node: object) -> str:
    """How a run-time leaf is named in path descriptions: `G-Eval` or `metric`."""
    return "metric" if getattr(node, "type", None) == "metric" else "G-Eval"


@dataclass(frozen=True)
class Leaf:
    """Where a path ended: a verdict's fixed score, or a geval node."""

    node: str  # the judgement whose verdict scored, or the geval / metric node
    verdict: bool | str | None = None
    score: int | float | None = None  # 0..10 for fixed leaves; None for geval
    #: what scores a run-time leaf, for messages: "G-Eval", or "metric" for a DeepEval one
    kind: str = field(default="G-Eval", compare=False)

    @property
    def is_geval(self) -> bool:
        return self.verdict is None

    def describe(self) -> str:
        if self.is_geval:
            return f"{self.node} ({self.kind})"
        try:
            text = f"{self.score:g}"
            if float(text) != self.score:  # 3.3333333333333335: keep what was written
                text = repr(self.score)
            return f"score {text}"
        except OverflowError:  # an absurd score (10**400) is still describable
            return f"score {self.score}"


@dataclass
class RunState:
    """Mutable progress of one run through the graph.

    Call `ready()` for the nodes that may run now (file order), then `finish_task`,
    `choose` (judgement/check) or `finish_geval` for each as it completes.
    """

    graph: Graph
    topo: Topology
    remaining: dict[str, int] = field(default_factory=dict)
    done: list[str] = field(default_factory=list)
    chosen: dict[str, Verdict] = field(default_factory=dict)
    leaves: list[Leaf] = field(default_factory=list)
    #: (file position, node id) of the ready nodes, kept sorted: file order without a sort
    _ready: list[tuple[int, str]] = field(default_factory=list)
    _done_set: set[str] = field(default_factory=set)
    #: nodes that became ready since the last `take_new_ready()`
    _new: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, graph: Graph, topo: Topology | None = None) -> RunState:
        topo = topo or Topology.of(graph)
        state = cls(graph, topo)
        state.remaining = {nid: len(p) for nid, p in topo.parents.items()}
        position = topo.position
        state._ready = sorted({(position[r], r) for r in topo.roots if r in graph.nodes})
        state._new = [nid for _, nid in state._ready]
        return state

    def copy(self) -> RunState:
        """An independent copy (to branch a run; the topology is shared)."""
        return RunState(self.graph, self.topo, dict(self.remaining), list(self.done),
                        dict(self.chosen), list(self.leaves), list(self._ready),
                        set(self._done_set), list(self._new))

    def ready(self) -> list[str]:
        """Nodes whose parents have all arrived and that have not run, in file order."""
        return [nid for _, nid in self._ready]

    def first_ready(self) -> str | None:
        """The first ready node in file order (None when none is): O(1)."""
        return self._ready[0][1] if self._ready else None

    def is_ready(self, nid: str) -> bool:
        """Whether `nid` may run now: O(log ready)."""
        pos = self.topo.position.get(nid)
        if pos is None:
            return False
        i = bisect_left(self._ready, (pos, nid))
        return i < len(self._ready) and self._ready[i][1] == nid

    def is_done(self, nid: str) -> bool:
        return nid in self._done_set

    def take_new_ready(self) -> list[str]:
        """Nodes that became ready since the last call, in file order (a concurrent runner
        starts these without rescanning the whole ready set after every completion)."""
        new, self._new = self._new, []
        if len(new) > 1:
            new.sort(key=self.topo.position.__getitem__)
        return new

    def _arrive(self, target: str) -> None:
        if target not in self.remaining:
            return
        self.remaining[target] -= 1
        if (self.remaining[target] == 0 and target not in self._done_set
                and not self.is_ready(target)):
            insort(self._ready, (self.topo.position[target], target))
            self._new.append(target)

    def _mark(self, nid: str) -> None:
        pos = self.topo.position.get(nid)
        if pos is not None:
            i = bisect_left(self._ready, (pos, nid))
            if i < len(self._ready) and self._ready[i][1] == nid:
                del self._ready[i]
        self.done.append(nid)
        self._done_set.add(nid)

    def finish_task(self, nid: str) -> None:
        self._mark(nid)
        for child in self.topo.data_children.get(nid, ()):
            self._arrive(child)

    def choose(self, nid: str, verdict: Verdict) -> None:
        """Record a judgement/check node's verdict and follow it."""
        self._mark(nid)
        self.chosen[nid] = verdict
        if verdict.then is not None:
            self._arrive(verdict.then)
        elif verdict.score is not None:
            self.leaves.append(Leaf(nid, verdict.verdict, verdict.score))

    def finish_geval(self, nid: str) -> None:
        """A run-time scored leaf (geval or metric) ran: the path ends there."""
        self._mark(nid)
        self.leaves.append(Leaf(nid, kind=leaf_kind(self.graph.nodes[nid])))

    def finish(self, nid: str, verdict: Verdict | None = None) -> None:
        """Complete `nid` whatever its type (verdict required for judgement/check nodes)."""
        node = self.graph.nodes[nid]
        if isinstance(node, TaskNode):
            self.finish_task(nid)
        elif node.is_scored_leaf:
            self.finish_geval(nid)
        else:
            if verdict is None:
                raise ValueError(f"node {nid!r} needs a verdict to finish")
            self.choose(nid, verdict)

    @property
    def finished(self) -> bool:
        return not self._ready

    def skipped(self) -> list[str]:
        """Nodes that did not run (only meaningful once `finished`)."""
        return [nid for nid in self.topo.order if nid not in self._done_set]


class Reach:
    """The nodes a run can still execute: those reachable from its ready set along every
    edge (every verdict, every data edge), kept up to date as nodes finish.

    The debugger shows "step 12/40" after every step; walking the graph from the ready set
    each time costs O(graph) per step. In a DAG the set only shrinks, so it is kept by
    reference counting instead: `live[v]` counts v's parents still in the set, and a node
    leaves when it has run, or when its count drops to zero and it is not ready. Each node
    leaves once and each edge is counted down once, so a whole run costs O(nodes + edges)
    however it is stepped. (With a cycle, which validation refuses, the set only errs large.)
    """

    def __init__(self, state: RunState) -> None:
        self.state = state
        targets = state.topo.targets
        members: set[str] = set()
        stack = state.ready()
        while stack:
            nid = stack.pop()
            if nid in members or nid not in targets:
                continue
            members.add(nid)
            stack.extend(targets[nid])
        self.live: dict[str, int] = dict.fromkeys(members, 0)
        for nid in members:
            for t in targets[nid]:
                if t in members:
                    self.live[t] += 1
        self.members = members
        self._seen = 0
        self.update()

    def update(self) -> set[str]:
        """Drop the nodes that ran since the last call (and what only they led to)."""
        done = self.state.done
        for nid in done[self._seen:]:
            self._drop(nid)
        self._seen = len(done)
        return self.members

    def _drop(self, first: str) -> None:
        members, live, state = self.members, self.live, self.state
        targets = state.topo.targets
        if first not in members:
            return
        members.discard(first)
        stack = [first]
        while stack:
            nid = stack.pop()
            for t in targets.get(nid, ()):
                if t not in members:
                    continue
                live[t] -= 1
                if live[t] <= 0 and not state.is_ready(t) and not state.is_done(t):
                    members.discard(t)
                    stack.append(t)

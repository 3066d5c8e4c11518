"""Execution semantics, in one place: when a node may run and where a run ends.

Both the engine (which calls judges) and path analysis (which enumerates every verdict
combination without calling anything) drive the same arrival rule, `Progress`, over the same
compiled graph (`dagtui.graph.compiled`), so what `validate` promises about paths is exactly what
`run` does: the engine through `RunState` (node ids, verdicts, leaves), path analysis
directly, undoing each step on the way back.

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

from dagtui.graph.compiled import CompiledGraph, NodeNames
from dagtui.graph.model import Graph, NodeBase, Verdict
from dagtui.kinds import find_kind, kind_of


@dataclass(frozen=True)
class Topology:
    """A graph's edges by name, with their compiled form, built once per graph version.

    The engine keeps one for every case it runs, so a step of a run costs O(the node's
    degree), never a scan of the graph. `compiled` is what the run state, path analysis and
    `Reach` walk; the named views are for callers that show nodes (evidence, the debugger).
    """

    order: tuple[str, ...]
    parents: dict[str, tuple[str, ...]]
    roots: tuple[str, ...]
    compiled: CompiledGraph

    @classmethod
    def of(cls, graph: Graph, parents: dict[str, list[str]] | None = None) -> Topology:
        """Edges of `graph`; pass `parents` when already computed (`graph.parents()`)."""
        parents_of = parents if parents is not None else graph.parents()
        compiled = CompiledGraph.of(graph, parents_of)
        return cls(
            compiled.ids,
            {k: tuple(v) for k, v in parents_of.items()},
            tuple(graph.roots(parents_of)),
            compiled,
        )


class Progress:
    """Which nodes of a compiled graph have run and which may run now: the arrival rule,
    written once for the engine's runs and for path analysis.

    `ready` holds the indices of the nodes that may run, sorted, so file order comes free
    and the first ready node is `ready[0]`; `in_ready` answers membership in O(1). Every
    change can be undone (`unarrive`, `untake`): path analysis backtracks with those instead
    of copying the state at each verdict.
    """

    def __init__(self, compiled: CompiledGraph) -> None:
        n = len(compiled.ids)
        self.remaining = list(compiled.needs)
        self.done = [False] * n
        self.ready = list(compiled.roots)
        self.in_ready = [False] * n
        for i in self.ready:
            self.in_ready[i] = True

    def copy(self) -> Progress:
        """An independent copy (to branch a run)."""
        other = object.__new__(Progress)
        other.remaining = list(self.remaining)
        other.done = list(self.done)
        other.ready = list(self.ready)
        other.in_ready = list(self.in_ready)
        return other

    def arrive(self, target: int) -> bool:
        """One parent of `target` arrived; True when that made it ready.

        A node runs when every one of its distinct parents has arrived, and at most once; a
        declared root may also be a child: it is ready once, whoever made it ready.
        """
        self.remaining[target] -= 1
        if self.remaining[target] == 0 and not self.done[target] and not self.in_ready[target]:
            self.add_ready(target)
            return True
        return False

    def unarrive(self, target: int) -> None:
        """Undo one `arrive` (the caller drops what it made ready)."""
        self.remaining[target] += 1

    def take(self, i: int) -> None:
        """Node `i` runs: it leaves the ready set (if it was there) and is done."""
        if self.in_ready[i]:
            self.drop_ready(i)
        self.done[i] = True

    def untake(self, i: int) -> None:
        """Undo `take` of a node that was ready."""
        self.done[i] = False
        self.add_ready(i)

    def add_ready(self, i: int) -> None:
        insort(self.ready, i)
        self.in_ready[i] = True

    def drop_ready(self, i: int) -> None:
        ready = self.ready
        del ready[bisect_left(ready, i)]
        self.in_ready[i] = False


def run_order(compiled: CompiledGraph) -> list[str]:
    """Every node in the order runs take them: the arrival rule played with every verdict
    leading everywhere, the first ready node (file order) taken each time, as a run does.

    Any run's nodes come in this order, whichever verdicts it takes (the nodes it skips
    never make one of its own ready sooner), so a list of a graph's nodes in it reads top
    to bottom as the run goes, while file order can put a child above its parent. Nodes
    no run can reach (a cycle, an orphan) follow, in file order.
    """
    progress = Progress(compiled)
    taken: list[int] = []
    while progress.ready:
        i = progress.ready[0]
        progress.take(i)
        taken.append(i)
        for target in compiled.targets[i]:
            progress.arrive(target)
    rest = [i for i, done in enumerate(progress.done) if not done]
    return compiled.names(taken + rest)


def leaf_kind(node: NodeBase) -> str:
    """How a run-time leaf is named in path descriptions: `G-Eval`, `metric`, `map` (its
    kind's `leaf_word`)."""
    kind = find_kind(node.type)
    return kind.leaf_word if kind is not None else "G-Eval"


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
    progress: Progress
    done: list[str] = field(default_factory=list)
    chosen: dict[str, Verdict] = field(default_factory=dict)
    leaves: list[Leaf] = field(default_factory=list)
    #: indices of the nodes that became ready since the last `take_new_ready()`
    _new: list[int] = field(default_factory=list)

    @classmethod
    def start(cls, graph: Graph, topo: Topology | None = None) -> RunState:
        topo = topo or Topology.of(graph)
        progress = Progress(topo.compiled)
        return cls(graph, topo, progress, _new=list(progress.ready))

    def copy(self) -> RunState:
        """An independent copy (to branch a run; the topology is shared)."""
        return RunState(self.graph, self.topo, self.progress.copy(), list(self.done),
                        dict(self.chosen), list(self.leaves), list(self._new))

    def ready(self) -> list[str]:
        """Nodes whose parents have all arrived and that have not run, in file order."""
        order = self.topo.order
        return [order[i] for i in self.progress.ready]

    def first_ready(self) -> str | None:
        """The first ready node in file order (None when none is): O(1)."""
        ready = self.progress.ready
        return self.topo.order[ready[0]] if ready else None

    def is_ready(self, nid: str) -> bool:
        """Whether `nid` may run now: O(1)."""
        i = self.topo.compiled.index.get(nid)
        return i is not None and self.progress.in_ready[i]

    def is_done(self, nid: str) -> bool:
        i = self.topo.compiled.index.get(nid)
        return i is not None and self.progress.done[i]

    def take_new_ready(self) -> list[str]:
        """Nodes that became ready since the last call, in file order (a concurrent runner
        starts these without rescanning the whole ready set after every completion)."""
        new, self._new = self._new, []
        if len(new) > 1:
            new.sort()
        order = self.topo.order
        return [order[i] for i in new]

    def _arrive(self, target: int) -> None:
        if self.progress.arrive(target):
            self._new.append(target)

    def _mark(self, nid: str) -> int | None:
        i = self.topo.compiled.index.get(nid)
        if i is not None:
            self.progress.take(i)
        self.done.append(nid)
        return i

    def finish_task(self, nid: str) -> None:
        i = self._mark(nid)
        if i is not None:
            for child in self.topo.compiled.data[i]:
                self._arrive(child)

    def choose(self, nid: str, verdict: Verdict) -> None:
        """Record a judgement/check node's verdict and follow it."""
        self._mark(nid)
        self.chosen[nid] = verdict
        if verdict.then is not None:
            target = self.topo.compiled.index.get(verdict.then)
            if target is not None:
                self._arrive(target)
        elif verdict.score is not None:
            self.leaves.append(Leaf(nid, verdict.verdict, verdict.score))

    def finish_geval(self, nid: str) -> None:
        """A run-time scored leaf (geval or metric) ran: the path ends there."""
        self._mark(nid)
        self.leaves.append(Leaf(nid, kind=leaf_kind(self.graph.nodes[nid])))

    def finish(self, nid: str, verdict: Verdict | None = None) -> None:
        """Complete `nid` whatever its type (verdict required for judgement/check nodes)."""
        node = self.graph.nodes[nid]
        if kind_of(node).extracts:
            self.finish_task(nid)
        elif node.is_scored_leaf:
            self.finish_geval(nid)
        else:
            if verdict is None:
                raise ValueError(f"node {nid!r} needs a verdict to finish")
            self.choose(nid, verdict)

    @property
    def finished(self) -> bool:
        return not self.progress.ready

    def skipped(self) -> list[str]:
        """Nodes that did not run (only meaningful once `finished`)."""
        done = self.progress.done
        return [nid for i, nid in enumerate(self.topo.order) if not done[i]]


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
        compiled = state.topo.compiled
        targets = compiled.targets
        members: set[int] = set(compiled.reachable(state.progress.ready))
        self.live: dict[int, int] = dict.fromkeys(members, 0)
        for i in members:
            for t in targets[i]:
                if t in members:
                    self.live[t] += 1
        self.members = members
        self._names = NodeNames(members, compiled)
        self._seen = 0
        self.update()

    def update(self) -> NodeNames:
        """Drop the nodes that ran since the last call (and what only they led to); the ids
        of what is left."""
        done = self.state.done
        index = self.state.topo.compiled.index
        for nid in done[self._seen:]:
            i = index.get(nid)
            if i is not None:
                self._drop(i)
        self._seen = len(done)
        return self._names

    def _drop(self, first: int) -> None:
        members, live = self.members, self.live
        progress = self.state.progress
        targets = self.state.topo.compiled.targets
        if first not in members:
            return
        members.discard(first)
        stack = [first]
        while stack:
            i = stack.pop()
            for t in targets[i]:
                if t not in members:
                    continue
                live[t] -= 1
                if live[t] <= 0 and not progress.in_ready[t] and not progress.done[t]:
                    members.discard(t)
                    stack.append(t)

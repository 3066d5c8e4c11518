"""Execution semantics, in one place: when a node may run and where a run ends.

Both the engine (which calls judges) and path analysis (which enumerates every verdict
combination without calling anything) drive this same state machine, so what `validate`
promises about paths is exactly what `run` does.

The rules (SPEC §4):
- A node runs when every one of its distinct parents has *arrived*, and at most once.
- A task parent arrives when it has run (data edge: the child also receives its output).
- A judgement/check parent arrives only if the verdict it chose points at the node
  (control edge). Two verdicts of one judgement into one node are one edge.
- A verdict with a `score` reaches a leaf; a `geval` node is a leaf when it runs.
- A run is well-formed when it reaches exactly one leaf.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import GEvalNode, Graph, TaskNode, Verdict


@dataclass(frozen=True)
class Topology:
    """The graph's edges, precomputed once per graph version."""

    order: tuple[str, ...]
    parents: dict[str, tuple[str, ...]]
    roots: tuple[str, ...]
    #: task id -> children that receive its output
    data_children: dict[str, tuple[str, ...]]

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


@dataclass(frozen=True)
class Leaf:
    """Where a path ended: a verdict's fixed score, or a geval node."""

    node: str  # the judgement whose verdict scored, or the geval node
    verdict: bool | str | None = None
    score: int | float | None = None  # 0..10 for fixed leaves; None for geval

    @property
    def is_geval(self) -> bool:
        return self.verdict is None

    def describe(self) -> str:
        if self.is_geval:
            return f"{self.node} (G-Eval)"
        try:
            return f"score {self.score:g}"
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
    _ready: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, graph: Graph, topo: Topology | None = None) -> RunState:
        topo = topo or Topology.of(graph)
        state = cls(graph, topo)
        state.remaining = {nid: len(p) for nid, p in topo.parents.items()}
        state._ready = [r for r in topo.roots if r in graph.nodes]
        return state

    def ready(self) -> list[str]:
        """Nodes whose parents have all arrived and that have not run, in file order."""
        return sorted(self._ready, key=self.topo.order.index)

    def _arrive(self, target: str) -> None:
        if target not in self.remaining:
            return
        self.remaining[target] -= 1
        if self.remaining[target] == 0 and target not in self.done and target not in self._ready:
            self._ready.append(target)

    def _mark(self, nid: str) -> None:
        if nid in self._ready:
            self._ready.remove(nid)
        self.done.append(nid)

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
        self._mark(nid)
        self.leaves.append(Leaf(nid))

    def finish(self, nid: str, verdict: Verdict | None = None) -> None:
        """Complete `nid` whatever its type (verdict required for judgement/check nodes)."""
        node = self.graph.nodes[nid]
        if isinstance(node, TaskNode):
            self.finish_task(nid)
        elif isinstance(node, GEvalNode):
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
        return [nid for nid in self.topo.order if nid not in self.done]

"""Path analysis: every verdict combination a graph allows, and where each one ends.

A run of a graph is decided entirely by the verdicts its judgement and check nodes choose
(tasks and G-Eval leaves have no choice to make). Enumerating those choices therefore
enumerates every run the graph can ever do, with no judge call: for each run we learn which
nodes it executes, which leaf (or leaves, or none) it reaches, its score, whether it passes
the threshold and how many judge calls it costs.

The rules are `dagtui.run.schedule`'s: the walkers below are `schedule.Progress`, the arrival
rule the engine's `RunState` runs on, over the same compiled graph. They do not replay
`RunState` for every path, which would copy state at every branch; they walk depth first and
undo each step on the way back, so a 1,000-node graph is analysed in milliseconds.
`tests/test_paths.py` checks that both agree.

Enumeration can explode (verdicts multiply along a path), so it runs under a budget of paths
and steps. When the budget runs out, the path *list* stops (`complete=False`) and a second
search takes over that visits each distinct run *state* once instead of each path: many
verdicts lead to the same state (five labels that all continue at one node), so it proves the
same facts (every combination ends at exactly one leaf, min/max/expected calls, reachable
scores, dead nodes) in far fewer steps, and keeps one example combination per problem. Only
when that search also runs out of budget (`proven=False`) does the validator fall back to
structural checks and say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from dagtui.graph.model import Graph, NodeBase, TaskNode
from dagtui.kinds import kind_of
from dagtui.run.schedule import Leaf, Progress, Topology, leaf_kind
from dagtui.text import verdict_text

if TYPE_CHECKING:  # rich is only needed to draw the table
    from rich.table import Table

VerdictValue = bool | str

#: default budgets: generous for hand-written rubrics, small enough to stay interactive
MAX_PATHS = 5_000
MAX_STEPS = 40_000
#: distinct run states the second (memoised) search may visit
MAX_STATES = 5_000
#: nodes the listed paths may hold in all: a path's record copies its whole run, so on a
#: long chain the listing would cost O(depth) per path (quadratic) long before the path or
#: step budget ran out; past this, the state search takes over as for any budget
MAX_LISTED = 1_000_000


def judge_calls(node: NodeBase) -> int:
    """Judge calls one execution of `node` costs, as its kind counts them (`NodeKind.calls`:
    one for a task or judgement, none for a code check, one or two for a G-Eval leaf)."""
    return kind_of(node).calls(node)


def show_number(value: object) -> str:
    """A score as written (`4`, `2.5`, `6.66`, `3.3333333333333335`), safe for any number a
    TOML file can hold: `:g` where it loses nothing, else the shortest exact form."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return repr(value)
    if isinstance(value, int):
        text = str(value) if abs(value) < 10**15 else f"{str(value)[:6]}…({len(str(value))} digits)"
        return text
    text = f"{value:g}"
    return text if float(text) == value or value != value else repr(value)


def show_fraction(value: float) -> str:
    """A 0..1 result for a table: two decimals (`0.40`) unless that would round a fractional
    leaf away (`0.666`, not `0.67`)."""
    text = f"{value:.2f}"
    return text if float(text) == value else show_number(value)


def score_fraction(score: int | float) -> float:
    """A leaf's 0..10 score as the 0..1 result (inf for absurdly big integers, not a crash).

    A fractional score is divided in decimal, so 6.66 gives 0.666 (the float nearest to
    what was written) rather than binary division's neighbour of it."""
    try:
        if isinstance(score, float) and math.isfinite(score) and not score.is_integer():
            return float(Decimal(repr(score)) / 10)
        return float(score) / 10.0
    except OverflowError:
        return float("inf") if score > 0 else float("-inf")


def describe_leaf(leaf: Leaf) -> str:
    """`score 4` or `tone (G-Eval)` (Leaf.describe, but safe for any score value)."""
    if leaf.is_geval:
        return f"{leaf.node} ({leaf.kind})"
    return f"score {show_number(leaf.score)}"


Choices = list[tuple[str, VerdictValue]] | tuple[tuple[str, VerdictValue], ...]


def describe_choices(choices: Choices) -> str:
    """`present=true, order='Two headings swapped'`, or `(no verdicts)` for a choice-free run."""
    if not choices:
        return "(no verdicts: the only possible run)"
    return ", ".join(f"{nid}={verdict_text(v, quote=True)}" for nid, v in choices)


@dataclass(slots=True)
class PathInfo:
    """One possible run: the verdicts it takes and where it ends."""

    choices: tuple[tuple[str, VerdictValue], ...]
    leaves: tuple[Leaf, ...]
    #: final score 0..1 when the run ends at exactly one fixed-score leaf; None for a
    #: G-Eval leaf (scored at run time) or a malformed run (no leaf or several)
    score: float | None
    #: pass/fail against the metric's effective threshold; None when `score` is None
    passes: bool | None
    calls: int
    nodes_run: tuple[str, ...]
    #: probability of this run when every verdict of every judgement is equally likely
    weight: float = 1.0

    @property
    def ok(self) -> bool:
        """A well-formed run ends at exactly one leaf."""
        return len(self.leaves) == 1

    @property
    def is_geval(self) -> bool:
        return self.ok and self.leaves[0].is_geval

    def describe(self) -> str:
        return describe_choices(self.choices)

    def outcome(self) -> str:
        """Where the run ends, in words: `score 4`, `tone (G-Eval)`, `no leaf`, `2 leaves`."""
        if not self.leaves:
            return "no leaf"
        if len(self.leaves) > 1:
            return f"{len(self.leaves)} leaves: " + ", ".join(
                f"{describe_leaf(lf)} via {lf.node}" for lf in self.leaves
            )
        return describe_leaf(self.leaves[0])


@dataclass
class PathAnalysis:
    """Everything path analysis found. Aggregates are None when enumeration was cut short."""

    paths: list[PathInfo] = field(default_factory=list)
    #: True when `paths` lists every verdict combination
    complete: bool = True
    #: True when the aggregates and `bad_paths` cover every combination (always when
    #: `complete`; also when the state search finished after the listing stopped)
    proven: bool = True
    #: why the listing (and, if not proven, the state search) stopped; empty when complete
    reason: str = ""
    min_calls: int | None = None
    max_calls: int | None = None
    expected_calls: float | None = None
    #: fixed-score outcomes (0..1) some run reaches, ascending
    reachable_scores: list[float] = field(default_factory=list)
    #: G-Eval nodes some run ends at (their score is only known at run time)
    geval_leaves: list[str] = field(default_factory=list)
    #: nodes that no run executes (structural estimate when not proven)
    dead_nodes: list[str] = field(default_factory=list)
    #: runs that reach no leaf or more than one (every one when complete; one example per
    #: kind of problem when only proven)
    bad_paths: list[PathInfo] = field(default_factory=list)
    steps: int = 0

    def calls_text(self) -> str:
        """`2–3 calls/case (expected 2.5)` for footers and summaries."""
        if self.min_calls is None or self.max_calls is None:
            return "calls/case unknown (too many paths to enumerate)"
        span = (
            str(self.min_calls) if self.min_calls == self.max_calls
            else f"{self.min_calls}–{self.max_calls}"
        )
        exp = f" (expected {self.expected_calls:.2f})" if self.expected_calls is not None else ""
        return f"{span} calls/case{exp}"


class _Budget(Exception):
    """Raised inside the walk when the path or step budget is spent."""


def analyze(
    graph: Graph,
    topo: Topology | None = None,
    *,
    max_paths: int = MAX_PATHS,
    max_steps: int = MAX_STEPS,
    max_states: int = MAX_STATES,
    max_listed: int = MAX_LISTED,
) -> PathAnalysis:
    """Enumerate every verdict combination of `graph` (within budget) and summarise them."""
    topo = topo or Topology.of(graph)
    walker = _Walker(graph, topo, max_paths, max_steps, max_listed)
    report = PathAnalysis()
    try:
        walker.walk()
    except _Budget as exc:
        report.complete = False
        report.reason = f"listing stopped: {exc}"
    report.paths = walker.paths
    report.steps = walker.steps
    if report.complete:
        report.bad_paths = [p for p in walker.paths if not p.ok]
        _aggregate(report, graph, walker.ran)
        return report
    search = _StateSearch(graph, topo, max_states)
    try:
        summary = search.run()
    except _Budget as exc:
        report.proven = False
        report.reason += f"; state search stopped: {exc}"
        report.dead_nodes = structural_dead_nodes(graph, topo)
        return report
    report.steps += search.states
    search.fill(report, summary)
    return report


def _aggregate(report: PathAnalysis, graph: Graph, ran: list[bool]) -> None:
    paths = report.paths
    if paths:
        report.min_calls = min(p.calls for p in paths)
        report.max_calls = max(p.calls for p in paths)
        report.expected_calls = sum(p.calls * p.weight for p in paths)
    scores: set[float] = set()
    gevals: list[str] = []
    for p in paths:
        if p.ok:
            if p.score is not None:
                scores.add(p.score)
            elif p.leaves[0].node not in gevals:
                gevals.append(p.leaves[0].node)
    report.reachable_scores = sorted(scores)
    report.geval_leaves = gevals
    ids = list(graph.nodes)
    report.dead_nodes = [ids[i] for i, r in enumerate(ran) if not r]


def structural_dead_nodes(graph: Graph, topo: Topology | None = None) -> list[str]:
    """Nodes that cannot run whatever the verdicts: not a root, and some parent cannot run.

    This is the fallback when enumeration is too big. It misses nodes that need two
    mutually exclusive verdicts (only enumeration sees those) but never reports a live node.
    It is the arrival rule with every edge taken: a node can run once all its parents can.
    """
    compiled = (topo or Topology.of(graph)).compiled
    can_run = Progress(compiled)
    targets = compiled.targets
    while can_run.ready:
        i = can_run.ready[-1]
        can_run.take(i)
        for t in targets[i]:
            can_run.arrive(t)
    return [nid for nid, ok in zip(compiled.ids, can_run.done, strict=True) if not ok]


class _Walker(Progress):
    """Depth-first enumeration over `schedule`'s rules, with undo instead of copies.

    Node kinds: 0 task, 1 judgement/check (branches over its verdicts), 2 G-Eval leaf.
    The ready set is `Progress`'s sorted list with a membership array, so taking the first
    ready node and undoing an arrival cost O(log ready) lookups, not a scan (a task with
    thousands of children makes them all ready at once).
    """

    def __init__(self, graph: Graph, topo: Topology, max_paths: int, max_steps: int,
                 max_listed: int = MAX_LISTED) -> None:
        compiled = topo.compiled
        super().__init__(compiled)
        self.graph = graph
        self._topo = topo
        ids = compiled.ids
        self.ids = ids
        index = compiled.index
        n = len(ids)
        self.kind = [0] * n
        self.cost = [0] * n
        #: per task: the child indices its output arrives at
        self.data = compiled.data
        #: per judgement: (verdict value, then index or -1 when unknown/None, the Leaf it ends
        #: at or None, has_then)
        self.verdicts: list[tuple[tuple[VerdictValue, int, Leaf | None, bool], ...]] = [()] * n
        self.geval_leaf: list[Leaf | None] = [None] * n
        for i, nid in enumerate(ids):
            node = graph.nodes[nid]
            self.cost[i] = judge_calls(node)
            if isinstance(node, TaskNode):
                self.kind[i] = 0
            elif node.is_scored_leaf:
                self.kind[i] = 2
                self.geval_leaf[i] = Leaf(nid, kind=leaf_kind(node))
            else:
                self.kind[i] = 1
                vs = []
                for v in getattr(node, "verdicts", []):
                    has_then = v.then is not None
                    target = index.get(v.then, -1) if has_then else -1
                    leaf = Leaf(nid, v.verdict, v.score) if not has_then and v.score is not None \
                        else None
                    vs.append((v.verdict, target, leaf, has_then))
                self.verdicts[i] = tuple(vs)
        self.ran = [False] * n
        self.max_paths = max_paths
        self.max_steps = max_steps
        self.max_listed = max_listed
        self.listed = 0
        self.steps = 0
        self.paths: list[PathInfo] = []
        self.choices: list[tuple[str, VerdictValue]] = []
        self.leaves: list[Leaf] = []
        self.run_order: list[int] = []
        self.calls = 0
        self.weight = 1.0
        threshold = graph.metric.effective_threshold
        self.threshold = threshold

    def walk(self) -> None:
        """Iterative DFS: each frame is a node being executed with its remaining options."""
        # frame: [node, option index, arrivals (targets decremented), ready additions, leaf added]
        stack: list[list] = []
        while True:
            if not self.ready:
                self._record()
                # backtrack to the newest frame that still has an untried verdict
                while stack:
                    frame = stack[-1]
                    self._undo(frame)
                    i = frame[0]
                    if self.kind[i] == 1 and frame[1] + 1 < len(self.verdicts[i]):
                        frame[1] += 1
                        self._apply(frame)
                        break
                    stack.pop()
                    self._unrun(i)
                else:
                    return
                continue
            i = self.ready[0]
            self._run(i)
            frame = [i, 0, [], [], False]
            stack.append(frame)
            if self.kind[i] == 1 and not self.verdicts[i]:
                # a judgement without verdicts (an error of its own) chooses nothing: its
                # branch of the run ends here while other ready nodes go on
                continue
            self._apply(frame)

    def follow(self, forced: dict[int, int]) -> PathInfo:
        """Execute one run, taking verdict `forced[node]` at each judgement (first verdict
        where none is given), and return it as a PathInfo."""
        while self.ready:
            i = self.ready[0]
            self._run(i)
            frame = [i, forced.get(i, 0), [], [], False]
            if self.kind[i] == 1 and not self.verdicts[i]:
                continue
            self._apply(frame)
        self._record()
        return self.paths[-1]

    def _run(self, i: int) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise _Budget(
                f"stopped after {self.max_steps:,} steps ({len(self.paths):,} paths so far)"
            )
        self.take(i)
        self.ran[i] = True
        self.run_order.append(i)
        self.calls += self.cost[i]

    def _unrun(self, i: int) -> None:
        self.untake(i)
        self.run_order.pop()
        self.calls -= self.cost[i]

    def _apply(self, frame: list) -> None:
        i = frame[0]
        kind = self.kind[i]
        arrivals: list[int] = frame[2]
        added: list[int] = frame[3]
        if kind == 0:
            for c in self.data[i]:
                if self.arrive(c):
                    added.append(c)
                arrivals.append(c)
        elif kind == 2:
            self.leaves.append(self.geval_leaf[i])
            frame[4] = True
        else:
            options = self.verdicts[i]
            value, target, leaf, has_then = options[frame[1]]
            self.choices.append((self.ids[i], value))
            self.weight /= len(options)
            if has_then:
                if target >= 0:
                    if self.arrive(target):
                        added.append(target)
                    arrivals.append(target)
            elif leaf is not None:
                self.leaves.append(leaf)
                frame[4] = True

    def _undo(self, frame: list) -> None:
        i = frame[0]
        for t in frame[3]:
            self.drop_ready(t)
        for t in frame[2]:
            self.unarrive(t)
        frame[2] = []
        frame[3] = []
        if frame[4]:
            self.leaves.pop()
            frame[4] = False
        if self.kind[i] == 1 and self.verdicts[i]:
            self.choices.pop()
            self.weight *= len(self.verdicts[i])

    def _record(self) -> None:
        if len(self.paths) >= self.max_paths:
            raise _Budget(f"more than {self.max_paths:,} verdict combinations")
        self.listed += len(self.run_order)
        if self.listed > self.max_listed:
            raise _Budget(f"the {len(self.paths):,} paths listed so far run more than "
                          f"{self.max_listed:,} nodes in all")
        ids = self.ids
        leaves = tuple(self.leaves)
        score: float | None = None
        passes: bool | None = None
        if len(leaves) == 1 and leaves[0].score is not None:
            score = score_fraction(leaves[0].score)
            passes = score >= self.threshold
        self.paths.append(
            PathInfo(
                choices=tuple(self.choices),
                leaves=leaves,
                score=score,
                passes=passes,
                calls=self.calls,
                nodes_run=tuple(map(ids.__getitem__, self.run_order)),
                weight=self.weight,
            )
        )


_NONE = "none"  # outcome class: the run reaches no leaf
_MANY = "many"  # outcome class: the run reaches two or more leaves


_MASK = (1 << 64) - 1


def _term(kind: int, node: int, value: int = 0) -> int:
    """A fixed pseudo-random 64-bit number for one fact about a run state (splitmix64)."""
    z = (kind * 0x9E3779B97F4A7C15 + node * 0xBF58476D1CE4E5B9 + (value + 1) * 0x94D049BB133111EB
         ) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _leaf_class(leaf: Leaf) -> object:
    """Outcome class of a run ending at exactly `leaf`: what the report tells apart (its
    score, or which G-Eval node), so states differing only in which verdict scored merge."""
    return ("geval", leaf.node) if leaf.is_geval else ("score", leaf.score)


@dataclass(slots=True)
class _Summary:
    """What can still happen from one run state on (the future only, not the past).

    `outcomes` maps an outcome class (no leaf, one leaf with a given score or G-Eval node,
    several leaves) to one example: the verdict choices (node index, verdict index) that
    lead to it, and the leaves it reaches.
    """

    min_calls: int
    max_calls: int
    exp_calls: float
    outcomes: dict[object, tuple[tuple[tuple[int, int], ...], tuple[Leaf, ...]]]
    ran: int  # bitmask of node indices some continuation executes


class _StateSearch(_Walker):
    """Depth-first search over run states with memoisation (same rules as `_Walker`).

    The future of a run depends only on which nodes ran, how many parents of each waiting
    node arrived and what is ready, not on the verdicts that got there, so each distinct
    state is solved once and its summary reused for every path that reaches it.
    """

    def __init__(self, graph: Graph, topo: Topology, max_states: int) -> None:
        super().__init__(graph, topo, max_paths=0, max_steps=0)
        self.max_states = max_states
        self.states = 0
        self.memo: dict[tuple[int, int], _Summary] = {}
        self.initial = list(self.remaining)
        # The state key is an incremental (Zobrist-style) 64-bit hash: a sum of one
        # pseudo-random term per fact (node i ran, node i is ready, node t has r parents
        # left), updated on every change, so keying a state costs O(1) however big the graph.
        n = len(self.ids)
        self.t_ready = [_term(1, i) for i in range(n)]
        #: ran-instead-of-ready: the change when node i runs
        self.t_run = [(_term(2, i) - self.t_ready[i]) & _MASK for i in range(n)]
        self.t_left: dict[tuple[int, int], int] = {}
        self.key_hash = 0
        for i in self.ready:
            self.key_hash = (self.key_hash + self.t_ready[i]) & _MASK

    def _left(self, target: int, value: int) -> int:
        key = (target, value)
        term = self.t_left.get(key)
        if term is None:
            term = self.t_left[key] = _term(3, target, value)
        return term

    def _bump(self, term: int, sign: int) -> None:
        self.key_hash = (self.key_hash + sign * term) & _MASK

    def run(self) -> _Summary:
        import sys

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 4 * len(self.ids) + 1000))
        try:
            return self.solve()
        finally:
            sys.setrecursionlimit(limit)

    def arrive(self, target: int) -> bool:
        old = self.remaining[target]
        became_ready = super().arrive(target)
        self._bump(self._left(target, self.remaining[target]) - self._left(target, old), 1)
        if became_ready:
            self._bump(self.t_ready[target], 1)
        return became_ready

    def unarrive(self, target: int) -> None:
        old = self.remaining[target]
        super().unarrive(target)
        self._bump(self._left(target, self.remaining[target]) - self._left(target, old), 1)

    def _undo(self, frame: list) -> None:
        for t in frame[3]:
            self._bump(self.t_ready[t], -1)
        super()._undo(frame)

    def _run(self, i: int) -> None:
        self.take(i)
        self.run_order.append(i)
        self._bump(self.t_run[i], 1)

    def _unrun_state(self, i: int) -> None:
        self.untake(i)
        self.run_order.pop()
        self._bump(self.t_run[i], -1)

    def solve(self) -> _Summary:
        if not self.ready:
            return _Summary(0, 0, 0.0, {_NONE: ((), ())}, 0)
        key = (self.key_hash, len(self.run_order))
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        self.states += 1
        if self.states > self.max_states:
            raise _Budget(f"more than {self.max_states:,} distinct run states")
        i = self.ready[0]
        self._run(i)
        frame: list = [i, 0, [], [], False]
        options = self.verdicts[i] if self.kind[i] == 1 else ()
        parts: list[_Summary] = []
        if not options:
            if self.kind[i] != 1:
                self._apply(frame)
            child = self.solve()
            leaf = self.geval_leaf[i] if self.kind[i] == 2 else None
            parts.append(self._shift(child, i, None, leaf))
            if self.kind[i] != 1:
                self._undo(frame)
        else:
            for k, (_, _, leaf, _) in enumerate(options):
                frame[1] = k
                self._apply(frame)
                child = self.solve()
                self._undo(frame)
                parts.append(self._shift(child, i, k, leaf))
        self._unrun_state(i)
        summary = self._merge(parts, i)
        self.memo[key] = summary
        return summary

    def _shift(self, child: _Summary, i: int, k: int | None, leaf: Leaf | None) -> _Summary:
        """The child's future seen from one step earlier: node i ran (verdict k), maybe
        reaching `leaf` first."""
        cost = self.cost[i]
        outcomes: dict[object, tuple[tuple[tuple[int, int], ...], tuple[Leaf, ...]]] = {}
        step = ((i, k),) if k is not None else ()
        for cls, (choices, leaves) in child.outcomes.items():
            if leaf is None:
                new_cls, new_leaves = cls, leaves
            elif cls == _NONE:
                new_cls, new_leaves = _leaf_class(leaf), (leaf,)
            else:
                new_cls, new_leaves = _MANY, (leaf, *leaves)
            if new_cls not in outcomes:
                outcomes[new_cls] = (step + choices, new_leaves)
        return _Summary(child.min_calls + cost, child.max_calls + cost,
                        child.exp_calls + cost, outcomes, child.ran | (1 << i))

    @staticmethod
    def _merge(parts: list[_Summary], i: int) -> _Summary:
        if len(parts) == 1:
            return parts[0]
        outcomes: dict[object, tuple[tuple[tuple[int, int], ...], tuple[Leaf, ...]]] = {}
        ran = 0
        for p in parts:
            ran |= p.ran
            for cls, example in p.outcomes.items():
                outcomes.setdefault(cls, example)
        return _Summary(
            min(p.min_calls for p in parts),
            max(p.max_calls for p in parts),
            sum(p.exp_calls for p in parts) / len(parts),
            outcomes,
            ran,
        )

    def fill(self, report: PathAnalysis, summary: _Summary) -> None:
        """Copy the proven facts into `report`; examples become replayed PathInfos."""
        report.min_calls = summary.min_calls
        report.max_calls = summary.max_calls
        report.expected_calls = summary.exp_calls
        scores: set[float] = set()
        gevals: list[str] = []
        for cls, (_, leaves) in summary.outcomes.items():
            if cls in (_NONE, _MANY):
                continue
            (leaf,) = leaves
            if leaf.is_geval:
                if leaf.node not in gevals:
                    gevals.append(leaf.node)
            elif leaf.score is not None:
                scores.add(score_fraction(leaf.score))
        report.reachable_scores = sorted(scores)
        report.geval_leaves = gevals
        report.dead_nodes = [nid for n, nid in enumerate(self.ids)
                             if not summary.ran >> n & 1]
        for cls in (_NONE, _MANY):
            if cls in summary.outcomes:
                choices, _ = summary.outcomes[cls]
                report.bad_paths.append(self.replay(choices))

    def replay(self, choices: tuple[tuple[int, int], ...]) -> PathInfo:
        """The full run for an example list of (node, verdict index) choices."""
        walker = _Walker(self.graph, self.topo_for_replay, max_paths=1, max_steps=10**9,
                         max_listed=10**18)
        forced = dict(choices)
        return walker.follow(forced)

    @property
    def topo_for_replay(self) -> Topology:
        return self._topo

def render_table(report: PathAnalysis, graph: Graph, *, limit: int = 200) -> Table:
    """The path table for the CLI (`dagtui validate --paths`), as a rich Table."""
    from rich.table import Table

    threshold = graph.metric.effective_threshold
    title = f"{len(report.paths)} path(s) · {report.calls_text()} · threshold {threshold:g}"
    if not report.complete:
        title += f" · first {len(report.paths)} shown"
    if not report.proven:
        title += " · not proven"
    table = Table(title=title, title_justify="left", show_lines=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("verdicts taken")
    table.add_column("ends at")
    table.add_column("score", justify="right")
    table.add_column("result")
    table.add_column("calls", justify="right")
    for n, p in enumerate(report.paths[:limit], 1):
        if not p.ok:
            result = "[bold red]invalid[/]"
            score = "—"
        elif p.passes is None:
            result = "[yellow]run time[/]"
            score = p.leaves[0].kind
        else:
            result = "[green]pass[/]" if p.passes else "[red]fail[/]"
            score = show_fraction(p.score) if p.score is not None else "—"
        table.add_row(str(n), _escape(p.describe()), _escape(p.outcome()), score, result,
                      str(p.calls))
    if len(report.paths) > limit:
        table.add_row("…", f"{len(report.paths) - limit} more path(s) not shown", "", "", "", "")
    return table


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)

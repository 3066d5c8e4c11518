"""What an alignment measures, apart from how it searches: the figures, the rows and
candidates, the seeded split, and the teacher-forced context every candidate is measured in.

`dagtui.calibration.align` searches with these (examples, rewrites, tries) and so does GEPA's
search (`dagtui.calibration.gepa_search`); both import this module, neither the other.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dagtui.calibration import stats
from dagtui.calibration.core import check_labels, normalize_label, run_bounded
from dagtui.calibration.forcing import Observation, SharedAnswers, failed_observation
from dagtui.calibration.proposer import text_field
from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.model import Example, Graph, NodeBase
from dagtui.judges.base import Ask, Judge, Reply
from dagtui.judges.labels import LabelsJudge
from dagtui.kinds import find_kind, kind_of
from dagtui.run.cases import Case
from dagtui.run.engine import Engine
from dagtui.text import verdict_text as show

#: labelled cases N needs, and cases each class needs, before alignment is tried
MIN_LABELS = 10
MIN_PER_CLASS = 3


class AlignRefused(ValueError):
    """Alignment cannot start: too few labels, an unknown node, a node it cannot change."""


# --------------------------------------------------------------------------- results


@dataclass
class Figures:
    """Agreement of a set of (label, verdict) items: raw agreement and Cohen's kappa, each
    with its seeded bootstrap 95 % interval."""

    items: int = 0
    agreement: float | None = None
    agreement_ci: tuple[float, float] | None = None
    kappa: float | None = None
    kappa_ci: tuple[float, float] | None = None

    @classmethod
    def of(cls, labels: Sequence[Hashable], verdicts: Sequence[Hashable],
           seed: int, *, intervals: bool = True) -> Figures:
        """The figures; `intervals=False` leaves out the bootstrap intervals (a train
        measurement ranks candidates by kappa alone, and 2,000 resamples per candidate were
        most of an alignment's CPU time)."""
        if not intervals:
            return cls(len(labels), stats.raw_agreement(labels, verdicts), None,
                       stats.cohen_kappa(labels, verdicts), None)
        return cls(len(labels), stats.raw_agreement(labels, verdicts),
                   stats.bootstrap_agreement(labels, verdicts, seed=seed),
                   stats.cohen_kappa(labels, verdicts),
                   stats.bootstrap_kappa(labels, verdicts, seed=seed))

    def to_dict(self) -> dict[str, Any]:
        return {"items": self.items, "agreement": self.agreement,
                "agreement_ci": list(self.agreement_ci) if self.agreement_ci else None,
                "kappa": self.kappa, "kappa_ci": list(self.kappa_ci) if self.kappa_ci else None}


@dataclass
class Row:
    """One measured decision: a case at a node, the label, the judge's verdict and reason."""

    case: str
    node: str
    label: Any
    verdict: Any
    reason: str = ""
    error: str | None = None

    @property
    def agrees(self) -> bool:
        return self.error is None and stats.class_key(self.label) == stats.class_key(self.verdict)

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.case, "node": self.node, "label": show(self.label),
                "verdict": None if self.error else show(self.verdict), "reason": self.reason,
                "error": self.error, "agrees": self.agrees}


@dataclass
class Measure:
    """A candidate measured on a set of cases: the pooled figures, per node, and the rows."""

    figures: Figures
    nodes: dict[str, Figures]
    rows: list[Row]
    calls: int = 0
    cache_hits: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"figures": self.figures.to_dict(),
                "nodes": {k: v.to_dict() for k, v in self.nodes.items()},
                "rows": [r.to_dict() for r in self.rows], "calls": self.calls,
                "cache_hits": self.cache_hits}


@dataclass
class Candidate:
    """One way to change node N: new criteria/instructions (`text`) and/or `examples`
    (None: that part unchanged)."""

    name: str
    method: str  # baseline, try, examples, rewrite
    text: str | None = None
    examples: list[Example] | None = None
    train: Measure | None = None

    def apply(self, node: NodeBase) -> NodeBase:
        changes: dict[str, Any] = {}
        if self.text is not None:
            changes[text_field(node)] = self.text
        if self.examples is not None:
            changes["examples"] = list(self.examples)
        return node.replace(**changes) if changes else node

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "method": self.method, "text": self.text,
                "examples": None if self.examples is None
                else [e.to_toml() for e in self.examples],
                "train": self.train.to_dict() if self.train else None}


@dataclass
class Split:
    """The labelled cases of N in two seeded, stratified parts."""

    train: list[str]
    held_out: list[str]
    seed: int
    holdout: float
    #: label (as shown) -> (train cases, held-out cases)
    classes: dict[str, tuple[int, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"train": self.train, "held_out": self.held_out, "seed": self.seed,
                "holdout": self.holdout,
                "classes": {k: list(v) for k, v in self.classes.items()}}


@dataclass
class Alignment:
    """What `align` found (JSON via `to_dict`; text and Markdown in `align_report`)."""

    graph: str
    graph_path: str | None
    node: str
    node_type: str
    #: the field a wording candidate changes (criteria or instructions)
    wording: str
    judge: dict[str, Any]
    split: Split
    candidates: list[Candidate]
    #: the best candidate on train (None: nothing beat the node as it is)
    winner: Candidate | None = None
    before: Measure | None = None
    after: Measure | None = None
    p_value: float | None = None
    #: discordant held-out items: (right before, wrong after) and (wrong before, right after)
    worse_items: int = 0
    better_items: int = 0
    improved: bool = False
    #: judgement nodes below a task node whose held-out kappa went down
    worse_nodes: list[str] = field(default_factory=list)
    #: the node before and after, as TOML-ready tables
    node_before: dict[str, Any] = field(default_factory=dict)
    node_after: dict[str, Any] | None = None
    calls: int = 0
    cache_hits: int = 0
    cost: float | None = None
    wall_time: float = 0.0
    notes: list[str] = field(default_factory=list)
    halt: str | None = None
    judge_unusable: bool = False
    #: `budget` was spent before the search finished (nothing concluded; rerun to resume)
    budget_spent: bool = False
    #: the new graph (N changed), when there is a winner
    aligned_graph: Graph | None = field(default=None, repr=False)

    def now_agree(self) -> list[tuple[Row, Row]]:
        """Held-out decisions wrong before and right after: (before, after)."""
        return [(b, a) for b, a in self._pairs() if not b.agrees and a.agrees]

    def now_disagree(self) -> list[tuple[Row, Row]]:
        """Held-out decisions right before and wrong after."""
        return [(b, a) for b, a in self._pairs() if b.agrees and not a.agrees]

    def _pairs(self) -> list[tuple[Row, Row]]:
        if self.before is None or self.after is None:
            return []
        after = {(r.case, r.node): r for r in self.after.rows}
        return [(b, after[(b.case, b.node)]) for b in self.before.rows
                if (b.case, b.node) in after]

    def to_dict(self) -> dict[str, Any]:
        return {
            "graph": self.graph, "graph_path": self.graph_path, "node": self.node,
            "node_type": self.node_type, "wording": self.wording, "judge": self.judge,
            "split": self.split.to_dict(),
            "candidates": [c.to_dict() for c in self.candidates],
            "winner": self.winner.name if self.winner else None,
            "held_out": {"before": self.before.to_dict() if self.before else None,
                         "after": self.after.to_dict() if self.after else None,
                         "mcnemar_p": self.p_value, "worse_items": self.worse_items,
                         "better_items": self.better_items},
            "improved": self.improved, "worse_nodes": self.worse_nodes,
            "node_before": self.node_before, "node_after": self.node_after,
            "now_agree": [a.to_dict() for _, a in self.now_agree()],
            "now_disagree": [a.to_dict() for _, a in self.now_disagree()],
            "calls": self.calls, "cache_hits": self.cache_hits, "cost": self.cost,
            "wall_time": self.wall_time, "notes": self.notes, "halt": self.halt,
            "budget_spent": self.budget_spent,
        }


# --------------------------------------------------------------------------- the node


def measured_nodes(graph: Graph, nid: str) -> list[str]:
    """The judgement nodes whose labels measure N: N itself, or for a task node the binary
    and non_binary nodes below it (in file order)."""
    if kind_of(graph.nodes[nid]).chooses:
        return [nid]
    below = descendants(graph, nid)
    return [n for n in graph.nodes if n in below and kind_of(graph.nodes[n]).chooses]


def descendants(graph: Graph, nid: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph.nodes[nid].targets())
    while todo:
        n = todo.pop()
        if n in seen or n not in graph.nodes:
            continue
        seen.add(n)
        todo.extend(graph.nodes[n].targets())
    return seen


def ancestors(graph: Graph, nid: str) -> set[str]:
    parents = graph.parents()
    seen: set[str] = set()
    todo = list(parents.get(nid, []))
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(parents.get(n, []))
    return seen


# --------------------------------------------------------------------------- the split


def split_cases(labelled: Sequence[tuple[str, Hashable]], holdout: float,
                seed: int) -> Split:
    """Stratified, seeded: each label's cases (sorted by name, then shuffled by a generator
    seeded with `seed`) give round(n * holdout) to held-out, at least one and never all."""
    groups: dict[Hashable, list[str]] = {}
    shown: dict[Hashable, str] = {}
    for name, label in labelled:
        key = stats.class_key(label)
        groups.setdefault(key, []).append(name)
        shown[key] = show(label)
    rng = random.Random(seed)
    train: list[str] = []
    held: list[str] = []
    classes: dict[str, tuple[int, int]] = {}
    for key in sorted(groups, key=lambda k: shown[k]):
        names = sorted(groups[key])
        rng.shuffle(names)
        k = min(len(names) - 1, max(1, round(len(names) * holdout)))
        held += names[:k]
        train += names[k:]
        classes[shown[key]] = (len(names) - k, k)
    order = {name: i for i, (name, _) in enumerate(labelled)}
    return Split(sorted(train, key=order.__getitem__), sorted(held, key=order.__getitem__),
                 seed, holdout, classes)


def refuse_too_few(labelled: Sequence[tuple[str, Hashable]], nid: str) -> None:
    """`AlignRefused` naming the labels needed when there are too few to align on."""
    counts: dict[str, int] = {}
    for _, label in labelled:
        counts[show(label)] = counts.get(show(label), 0) + 1
    if len(labelled) < MIN_LABELS:
        raise AlignRefused(
            f"node {nid!r}: {len(labelled)} labelled case(s) reach it; alignment needs at "
            f"least {MIN_LABELS} ({MIN_LABELS - len(labelled)} more) so that it is not fitted "
            "to noise")
    if len(counts) < 2:
        raise AlignRefused(f"node {nid!r}: every labelled case says {next(iter(counts))}; "
                           f"alignment needs at least {MIN_PER_CLASS} cases of each of two "
                           "labels")
    few = {k: n for k, n in counts.items() if n < MIN_PER_CLASS}
    if few:
        listing = ", ".join(f"{k}: {n} ({MIN_PER_CLASS - n} more)" for k, n in few.items())
        raise AlignRefused(f"node {nid!r}: alignment needs at least {MIN_PER_CLASS} labelled "
                           f"cases of each label; too few of {listing}")


# --------------------------------------------------------------------------- asking


class FocusJudge(Judge):
    """Teacher forcing that asks only the nodes measured: `asked` nodes are put to the real
    judge (recorded) and, when they choose a verdict, the label is followed; a task node
    above them gives the judge's evidence (as calibrate does); every other node answers from
    the labels, with no call."""

    name = "teacher-forcing"

    def __init__(self, inner: Judge, asked: set[str], upstream: set[str]) -> None:
        self.inner = inner
        self.llm = inner.llm
        self.needs_params = inner.needs_params
        self.asked = asked
        self.upstream = upstream
        self.labels = LabelsJudge()
        #: (case name, node id) -> what the real judge said
        self.observed: dict[tuple[str, str], Observation] = {}
        #: (case name, node id) -> the evidence the node was shown
        self.evidence: dict[tuple[str, str], dict[str, Any]] = {}

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "forcing": "labels"}

    async def answer(self, ask: Ask) -> Reply:
        kind = find_kind(ask.kind)
        nid = ask.node.id
        if nid in self.asked and kind is not None:
            label = await self.labels.answer(ask) if kind.decides else None
            self.evidence[(ask.case.name, nid)] = dict(ask.evidence)
            try:
                reply = await self.inner.answer(ask)
            except Exception as exc:
                self.observed[(ask.case.name, nid)] = failed_observation(exc)
                if label is None:
                    raise
                return Reply(label.value, "the label (the judge failed)",
                             calls=list(getattr(exc, "calls", [])))
            self.observed[(ask.case.name, nid)] = Observation(reply.value, reply.reason)
            if label is None:
                return reply
            return Reply(label.value, "the label (teacher forcing)", raw=reply.raw,
                         calls=reply.calls)
        if nid in self.upstream and kind is not None and kind.extracts:
            return await self.inner.answer(ask)
        return await self.labels.answer(ask)


@dataclass
class AlignContext:
    """What every measurement of one alignment shares."""

    graph: Graph
    nid: str
    cases: dict[str, Case]
    judge: SharedAnswers
    measured: list[str]
    upstream: set[str]
    python: Any
    concurrency: int
    seed: int

    async def measure(self, candidate: Candidate, names: Sequence[str], *,
                      intervals: bool = True) -> tuple[Measure, FocusJudge]:
        node = candidate.apply(self.graph.nodes[self.nid])
        graph = self.graph.replace(nodes={**self.graph.nodes, self.nid: node})
        asked = set(self.measured) | {self.nid}
        focus = FocusJudge(self.judge, asked, self.upstream)
        engine = Engine(CheckedGraph.of_graph(graph), focus, python=self.python)

        def job(case: Case) -> Callable[[], Any]:
            return lambda: engine.run(case, overrides=check_labels(graph, case), check=False)

        runs = await run_bounded([job(self.cases[n]) for n in names], self.concurrency)
        rows: list[Row] = []
        for name in names:
            case = self.cases[name]
            for m in self.measured:
                if m not in (case.expected or {}):
                    continue
                obs = focus.observed.get((name, m))
                if obs is None:  # the labels' path does not reach it in this case
                    continue
                label = normalize_label(graph.nodes[m], case.expected[m])
                rows.append(Row(name, m, label, obs.value, obs.reason, obs.error))
        measure = measure_rows(rows, self.measured, self.seed, intervals=intervals)
        measure.calls = sum(r.calls for r in runs)
        measure.cache_hits = sum(r.cache_hits for r in runs)
        return measure, focus


def measure_rows(rows: Sequence[Row], measured: Sequence[str], seed: int, *,
                 intervals: bool = True) -> Measure:
    """Pooled and per-node figures (one node: the pooled ones are its own, computed once); a
    row the judge failed on counts as a disagreement (an error is never agreement)."""

    def verdict(r: Row) -> Hashable:
        return ("(error)", r.error) if r.error else r.verdict

    def pooled(r: Row, value: Hashable) -> Hashable:
        return value if len(measured) == 1 else (r.node, stats.class_key(value))

    figures = Figures.of([pooled(r, r.label) for r in rows],
                         [pooled(r, verdict(r)) for r in rows], seed, intervals=intervals)
    if len(measured) == 1:
        return Measure(figures, {measured[0]: figures}, list(rows))
    nodes = {m: Figures.of([r.label for r in rows if r.node == m],
                           [verdict(r) for r in rows if r.node == m], seed,
                           intervals=intervals) for m in measured}
    return Measure(figures, nodes, list(rows))

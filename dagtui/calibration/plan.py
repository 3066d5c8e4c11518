"""What to label next: `dagtui calibrate --plan`, and the order `dagtui label --order
uncertain` follows. No judge call is made.

Read from two things a team already has: the saved calibration (`dagtui.calibration.saved`:
per node, the labelled cases, kappa and its bootstrap interval) and the judge cache of the
last run (`dagtui calibrate` or `dagtui run` on the same cases and judge), through which each
unlabelled case is replayed, cache only, to find the judge's own path through the graph.

How many more labels. A kappa interval narrows as 1/sqrt(n) with the cases it is measured
on (the standard error of kappa, and so a percentile bootstrap interval's width, scales so
for a fixed agreement pattern). From the measured width w on n cases, reaching a width W
needs about n * (w / W)^2 cases, so `more = ceil(n * (w / W)^2) - n`. Below `MIN_CASES`
labelled cases an interval says little (a handful of agreeing cases gives [1.00, 1.00]), so
a node with fewer than that needs at least `MIN_CASES - n` more whatever its width; a node
never measured needs `MIN_CASES`. It is an estimate: new cases may agree more or less than
the old ones, and only labelled cases that *reach* the node count.

Which cases first. The judgement nodes are ranked by need: never measured first, then the
widest interval, then the lowest kappa (node id last, so ties are stable). An unlabelled case
is worth what the neediest node its judge path crosses is worth (then: how many needy nodes
it crosses). A case whose cached samples (`--samples`) split on some node with a majority
margin under one half (a close call, as calibration defines it) comes before every other:
the judge itself is unsure there. Cases the cache cannot place (never run with this judge)
come last, in file order. Everything is sorted on fixed keys: the same calibration, cases and
cache give the same plan.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from dagtui.calibration import stats
from dagtui.calibration.core import CLOSE_MARGIN
from dagtui.graph.model import Graph
from dagtui.kinds import kind_of
from dagtui.run.cases import Case

#: the kappa interval width `--plan` aims at unless `--target-width` says otherwise
DEFAULT_TARGET_WIDTH = 0.2
#: labelled cases below which a node's interval is not read at all
MIN_CASES = 10


@dataclass
class NodePlan:
    """One judgement node: what the saved calibration measured, and the labels it needs."""

    node: str
    type: str
    cases: int
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    #: labelled cases that reach it still needed for the target width
    more: int
    #: the neediest node is 0
    rank: int = 0

    @property
    def width(self) -> float | None:
        return None if self.kappa_ci is None else self.kappa_ci[1] - self.kappa_ci[0]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["kappa_ci"] = list(self.kappa_ci) if self.kappa_ci else None
        out["width"] = self.width
        return out


@dataclass
class CasePick:
    """An unlabelled case, placed: the needy nodes its judge path crosses, and whether the
    judge's cached samples split on one of them."""

    case: str
    #: the nodes in the plan its judge path crosses, neediest first
    nodes: list[str] = field(default_factory=list)
    #: nodes where its cached samples split with a margin under one half
    close: list[str] = field(default_factory=list)
    #: False: the cache could not place it (never run with this judge)
    placed: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Plan:
    """`calibrate --plan`'s result (text in `render`, JSON via `to_dict`)."""

    graph: str
    target_width: float
    nodes: list[NodePlan] = field(default_factory=list)
    cases: list[CasePick] = field(default_factory=list)
    labelled: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def order(self) -> list[str]:
        """The unlabelled cases' names, in the order to label them."""
        return [c.case for c in self.cases]

    def to_dict(self) -> dict[str, Any]:
        return {"graph": self.graph, "target_width": self.target_width,
                "labelled": self.labelled, "nodes": [n.to_dict() for n in self.nodes],
                "cases": [c.to_dict() for c in self.cases], "notes": self.notes}


def more_cases(cases: int, width: float | None, target: float) -> int:
    """Labelled cases still needed for a kappa interval of `width` measured on `cases` to
    narrow to `target` (see the module docstring: width ~ 1/sqrt(n), at least `MIN_CASES`)."""
    floor = max(0, MIN_CASES - cases)
    if width is None or cases <= 0:
        return max(floor, MIN_CASES - max(cases, 0))
    needed = math.ceil(cases * (width / target) ** 2 - 1e-9) - cases
    return max(floor, needed, 0)


def node_plans(graph: Graph, saved: dict[str, Any], target: float) -> list[NodePlan]:
    """Every binary and non-binary node of `graph`, with what `saved` measured of it,
    ranked by need (never measured, widest interval, lowest kappa, node id)."""
    measured = saved.get("nodes") or {}
    out: list[NodePlan] = []
    for nid, node in graph.nodes.items():
        if not kind_of(node).chooses:
            continue
        found = measured.get(nid)
        entry: dict[str, Any] = found if isinstance(found, dict) else {}
        cases = int(entry.get("cases") or 0)
        kappa = entry.get("kappa")
        ci = entry.get("kappa_ci")
        interval = (float(ci[0]), float(ci[1])) if isinstance(ci, list | tuple) \
            and len(ci) == 2 else None
        plan = NodePlan(nid, node.type, cases, kappa if isinstance(kappa, int | float)
                        else None, interval, 0)
        plan.more = more_cases(cases, plan.width if cases else None, target)
        out.append(plan)
    out.sort(key=_need)
    for rank, plan in enumerate(out):
        plan.rank = rank
    return out


def _need(p: NodePlan) -> tuple[Any, ...]:
    never = p.cases == 0 or p.width is None
    return (not never, -(p.width or 0.0), p.kappa if p.kappa is not None else -2.0, p.node)


def unlabelled(cases: Sequence[Case], annotator: str | None = None) -> list[Case]:
    """The cases nobody labelled: no `expected` and no `annotations` (with `annotator`:
    none by that person)."""
    if annotator is not None:
        return [c for c in cases if c.annotation(annotator) is None]
    return [c for c in cases if not c.expected and not c.annotations]


def plan(graph: Graph, saved: dict[str, Any], cases: Sequence[Case], judge: Any = None, *,
         target_width: float = DEFAULT_TARGET_WIDTH) -> Plan:
    """The labelling plan (module docstring). `judge`: the litellm judge of the last run
    (with its cache), replayed cache only to place each unlabelled case; None places none."""
    annotator = saved.get("annotator") if isinstance(saved.get("annotator"), str) else None
    out = Plan(graph.metric.name, target_width, node_plans(graph, saved, target_width))
    todo = unlabelled(cases, annotator)
    out.labelled = len(cases) - len(todo)
    samples = int(saved.get("samples") or 1)
    walks = _replay(graph, judge, todo, samples) if judge is not None and todo else {}
    needy = {p.node: p for p in out.nodes if p.more > 0}
    picks: list[tuple[tuple[Any, ...], CasePick]] = []
    for position, case in enumerate(todo):
        walk = walks.get(case.name)
        if walk is None:
            picks.append(((3, 0, 0, position), CasePick(case.name, placed=False)))
            continue
        crossed = sorted((n for n in walk.nodes if n in needy), key=lambda n: needy[n].rank)
        close = sorted((n for n in walk.close if n in needy), key=lambda n: needy[n].rank)
        best = needy[crossed[0]].rank if crossed else len(out.nodes)
        tier = 0 if close else (1 if crossed else 2)
        picks.append(((tier, best, -len(crossed), position),
                      CasePick(case.name, crossed, close)))
    out.cases = [pick for _, pick in sorted(picks, key=lambda kv: kv[0])]
    unplaced = sum(not c.placed for c in out.cases)
    if unplaced:
        out.notes.append(f"{unplaced} unlabelled case{'s' if unplaced != 1 else ''} not in the "
                         "judge cache (never run with this judge): listed last, in file order; "
                         "`dagtui run` on them places them")
    if samples < 2:
        out.notes.append("no close calls: the calibration had one sample (calibrate "
                         "--samples N caches more)")
    return out


def uncertain_order(graph: Graph, cases: Sequence[Case], saved: dict[str, Any] | None,
                    judge: Any = None, *, target_width: float = DEFAULT_TARGET_WIDTH
                    ) -> list[str]:
    """The names of `cases` in the order `dagtui label --order uncertain` visits them: the
    plan's unlabelled cases first (`plan`), then the labelled ones in file order. Without a
    saved calibration, file order."""
    if saved is None:
        return [c.name for c in cases]
    first = plan(graph, saved, cases, judge, target_width=target_width).order
    chosen = set(first)
    return first + [c.name for c in cases if c.name not in chosen]


@dataclass
class _Walk:
    nodes: list[str]
    close: list[str]


def _replay(graph: Graph, judge: Any, cases: Sequence[Case], samples: int
            ) -> dict[str, _Walk]:
    """case name -> the judge's cached path (sample 0) and the nodes where its cached
    samples split closely; a case the cache cannot place at sample 0 is left out."""
    from dagtui.judges.cache_only import RecordingCache, cache_only_judge
    from dagtui.run.engine import Engine

    cache: Any = getattr(judge, "cache", None)
    if getattr(cache, "path", None) is None or not len(cache):
        return {}
    only = cache_only_judge(judge, RecordingCache(cache))
    engine = Engine(graph, only, validate=False)

    async def walk() -> dict[str, _Walk]:
        try:
            return await places()
        finally:
            await only.aclose()

    async def places() -> dict[str, _Walk]:
        out: dict[str, _Walk] = {}
        for case in cases:
            first = await engine.run(case, check=False)
            answered = {s.node: s.answer for s in first.steps if s.error is None}
            if not answered:
                continue
            ratings: dict[str, list[Hashable]] = {n: [a] for n, a in answered.items()
                                                  if _hashable(a)}
            for sample in range(1, samples):
                later = await engine.run(case, sample=sample, check=False)
                for s in later.steps:
                    if s.error is None and s.node in ratings and _hashable(s.answer):
                        ratings[s.node].append(s.answer)
            close = [n for n, r in ratings.items()
                     if len(r) > 1 and len({stats.class_key(x) for x in r}) > 1
                     and stats.majority(r)[1] < CLOSE_MARGIN]
            out[case.name] = _Walk([s.node for s in first.steps if s.error is None], close)
        return out

    return asyncio.run(walk())


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def render(p: Plan, limit: int = 20) -> str:
    """The plan as text: the per-node table, then the cases to label first."""
    lines = [f"{p.graph}: what to label next (target kappa interval width "
             f"{p.target_width:g}; {p.labelled} labelled, {len(p.cases)} unlabelled)"]
    head = ["node", "type", "labelled", "kappa", "95% CI", "width",
            f"more for {p.target_width:g}"]
    rows = [[n.node, n.type, str(n.cases), "-" if n.kappa is None else f"{n.kappa:.2f}",
             "-" if n.kappa_ci is None else f"[{n.kappa_ci[0]:.2f}, {n.kappa_ci[1]:.2f}]",
             "-" if n.width is None else f"{n.width:.2f}", str(n.more)] for n in p.nodes]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        lines.append("  " + "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                                      for i, (c, w) in enumerate(zip(row, widths, strict=True)))
                     .rstrip())
    if not p.cases:
        lines.append("no unlabelled case left: label more cases (or --relabel) to narrow the "
                     "intervals")
    else:
        lines.append(f"label these first ({min(limit, len(p.cases))} of {len(p.cases)}; "
                     "`dagtui label --order uncertain` follows this order):")
        for i, c in enumerate(p.cases[:limit], start=1):
            if not c.placed:
                why = "not in the judge cache"
            elif c.close:
                why = f"close call on {', '.join(c.close)}; crosses {', '.join(c.nodes)}"
            elif c.nodes:
                why = f"crosses {', '.join(c.nodes)}"
            else:
                why = "crosses no node that needs labels"
            lines.append(f"  {i:>3}. {c.case}  ({why})")
        if len(p.cases) > limit:
            lines.append(f"  … and {len(p.cases) - limit} more (--json has them all)")
    lines += [f"note: {n}" for n in p.notes]
    return "\n".join(lines) + "\n"

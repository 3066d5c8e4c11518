"""Fragile outcomes: the cases of a run whose pass/fail rests on one node's verdict.

A case's outcome is *fragile at* a node N of its path when changing N's verdict alone
flips pass to fail (or back) whatever the nodes the changed verdict newly reaches answer:
every verdict combination of the path table (`dagtui.graph.paths.analyze`) that keeps the
case's other verdicts and gives N some other verdict v' ends on the other side of the
threshold (for at least one v'). A gate whose "no" ends at score 0 makes every passing case
fragile at it; a failing case whose gate, said "yes", would open a sub-graph that may pass
or fail is not fragile there (one wrong verdict does not decide it).

Each fragile node is weighted by its error rate measured in the saved calibration: one minus
its teacher-forced agreement with the labels (`dagtui.calibration.core`). A case's chance of
a misjudged outcome is the chance that at least one of its fragile nodes erred,
1 - Π (1 - e_N), the nodes taken as independent and one wrong verdict at a time (two wrong
verdicts that cancel are not counted); the run's expected number of misjudged outcomes is
the sum over its cases. A case *rests on one weak node* when a fragile node of it errs at
least `WEAK_ERROR` of the time. A node calibration did not measure has no error rate: it is
named but adds nothing to the expectation.

Only listed paths can be searched: when the path table stopped short (`complete=False`,
too many verdict combinations), no case is judged fragile and the result says why.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dagtui.graph.model import Graph, TaskNode
from dagtui.graph.paths import PathAnalysis, PathInfo, VerdictValue, analyze

#: a fragile node that errs at least this often makes its case "rest on one weak node"
WEAK_ERROR = 0.1
#: the weak cases the run's summary lists (the JSON report keeps up to `JSON_MAX`)
LIST_MAX = 10
JSON_MAX = 1000
METHOD = ("a node is fragile for a case when its verdict alone, changed, flips pass/fail on "
          "every path the change can take (the path table); a case's chance of a misjudged "
          "outcome is 1 - prod(1 - e) over its fragile nodes, e = 1 - the node's measured "
          "agreement; expected misjudged outcomes = the sum over the run's cases")

Choice = tuple[str, VerdictValue]


class PathIndex:
    """The path table searched for fragility, one answer per distinct path (memoised: the
    cases of a run share few paths)."""

    def __init__(self, report: PathAnalysis) -> None:
        self.complete = report.complete
        self.paths: list[tuple[dict[str, VerdictValue], bool]] = [
            (dict(p.choices), bool(p.passes)) for p in report.paths if p.passes is not None]
        self._by_choices: dict[frozenset[Choice], PathInfo] = {
            frozenset(p.choices): p for p in report.paths}
        self._memo: dict[frozenset[Choice], list[str] | None] = {}

    def fragile(self, choices: Iterable[Choice]) -> list[str] | None:
        """The nodes of the path taking `choices` whose single changed verdict flips its
        pass/fail, in path order; None when the path is not in the table or has no
        pass/fail (a G-Eval leaf, no leaf)."""
        key = frozenset(choices)
        if key not in self._memo:
            self._memo[key] = self._search(key)
        return self._memo[key]

    def _search(self, key: frozenset[Choice]) -> list[str] | None:
        path = self._by_choices.get(key)
        if path is None or path.passes is None:
            return None
        mine = dict(path.choices)
        out = []
        for node, verdict in path.choices:
            # the other paths that keep every other verdict of this one, by N's verdict
            sides: dict[VerdictValue, set[bool]] = {}
            for theirs, passes in self.paths:
                other = theirs.get(node, verdict)
                if other == verdict or node not in theirs:
                    continue
                if all(mine.get(m, w) == w for m, w in theirs.items() if m != node):
                    sides.setdefault(other, set()).add(passes)
            if any(s == {not path.passes} for s in sides.values()):
                out.append(node)
        return out


def error_rates(saved: Mapping[str, Any]) -> dict[str, float]:
    """Each measured node's error rate, 1 - its agreement with the labels (the saved
    calibration's `nodes`)."""
    out = {}
    for nid, figures in (saved.get("nodes") or {}).items():
        agreement = figures.get("agreement") if isinstance(figures, dict) else None
        if isinstance(agreement, int | float):
            out[nid] = 1.0 - float(agreement)
    return out


@dataclass
class Fragile:
    """What `dagtui run` reports of its fragile outcomes (`to_dict` into the JSON report's
    `calibration.fragile`, `lines` into its summary)."""

    #: cases with a pass or fail the search covered
    judged: int = 0
    #: judged cases whose path the table did not hold (a verdict outside it)
    unknown: int = 0
    expected_misjudged: float = 0.0
    #: cases resting on a weak node (all of them; `cases` lists the first JSON_MAX)
    weak_cases: int = 0
    cases: list[dict[str, Any]] = field(default_factory=list)
    #: node -> how many cases rest on it being right (fragile at it, weak or not)
    per_node: Counter = field(default_factory=Counter)
    error_rate: dict[str, float] = field(default_factory=dict)
    unavailable: str | None = None
    weak_error: float = WEAK_ERROR

    def to_dict(self) -> dict[str, Any]:
        return {"judged": self.judged, "unknown": self.unknown,
                "expected_misjudged": self.expected_misjudged, "weak_cases": self.weak_cases,
                "weak_error": self.weak_error, "cases": self.cases,
                "nodes": {n: {"cases": c, "error_rate": self.error_rate.get(n)}
                          for n, c in self.per_node.most_common()},
                "unavailable": self.unavailable, "method": METHOD}


def fragile_outcomes(graph: Graph, saved: Mapping[str, Any], results: Iterable[Any], *,
                     report: PathAnalysis | None = None,
                     weak_error: float = WEAK_ERROR) -> Fragile:
    """The fragile outcomes of a run's `results` (RunResults, in dataset order) under the
    saved calibration `saved` (a fresh one: its error rates are trusted)."""
    rates = error_rates(saved)
    out = Fragile(error_rate=rates, weak_error=weak_error)
    report = report if report is not None else analyze(graph)
    if not report.complete:
        out.unavailable = ("the graph has too many verdict combinations to list "
                           f"({report.reason})")
        return out
    index = PathIndex(report)
    chooses = {nid for nid, node in graph.nodes.items()
               if not isinstance(node, TaskNode) and not node.is_scored_leaf}
    for r in results:
        if r.status not in ("pass", "fail"):
            continue
        out.judged += 1
        nodes = index.fragile((s.node, s.answer) for s in r.steps if s.node in chooses)
        if nodes is None:
            out.unknown += 1
            continue
        out.per_node.update(nodes)
        known = [rates[n] for n in nodes if n in rates]
        chance = 1.0 - math.prod(1.0 - e for e in known)
        out.expected_misjudged += chance
        weak = [n for n in nodes if rates.get(n, 0.0) >= weak_error]
        if weak:
            out.weak_cases += 1
            if len(out.cases) < JSON_MAX:
                out.cases.append({"case": r.case, "outcome": r.status, "chance": chance,
                                  "weak": weak, "fragile": nodes})
    return out


def fragile_lines(fragile: Mapping[str, Any]) -> list[str]:
    """The run summary's lines (from `Fragile.to_dict()`)."""
    if fragile.get("unavailable"):
        return [f"fragile outcomes: not searched — {fragile['unavailable']}"]
    judged, weak = fragile["judged"], fragile["weak_cases"]
    percent = f"{fragile['weak_error']:.0%}"
    head = (f"fragile outcomes: {weak} of {judged} cases rest on one weak node (a single "
            f"wrong verdict there flips pass/fail; error rate ≥ {percent}); expected "
            f"misjudged outcomes in the run: {fragile['expected_misjudged']:.1f}")
    if fragile.get("unknown"):
        head += f" ({fragile['unknown']} cases off the path table not counted)"
    lines = [head]
    rates = {n: f["error_rate"] for n, f in (fragile.get("nodes") or {}).items()}
    for c in fragile["cases"][:LIST_MAX]:
        nodes = ", ".join(f"{n} ({rates.get(n) or 0:.0%})" for n in c["weak"])
        lines.append(f"    {c['case']}: {c['outcome']}, rests on {nodes}")
    if weak > LIST_MAX:
        lines.append(f"    … and {weak - LIST_MAX} more")
    return lines

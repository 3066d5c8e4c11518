"""Agreement with the labels from a run that already happened: `dagtui run`'s summary.

No call is made: each labelled node is compared on the cases the judge's own path took to
it, and each score with its `expected_score`. That is not teacher forcing — a node the
judge's path skipped is not measured, so a wrong gate hides the nodes below it — and the
lines say so and point at `dagtui calibrate`. Kappa comes from the same `stats` module.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from dagtui.calibration import stats
from dagtui.calibration.core import TOLERANCE
from dagtui.calibration.stats import class_key
from dagtui.graph.model import Graph
from dagtui.labels.check import is_unsure, normalize_label
from dagtui.text import counted

LIST_MAX = 10


def agreement_lines(graph: Graph, cases: Sequence[Any], results: Sequence[Any]) -> list[str]:
    """Summary lines (empty when no case carries labels)."""
    by_name = {c.name: c for c in cases}
    agreement = Agreement(graph)
    for position, r in enumerate(results):
        agreement.add(position, by_name.get(r.case), r)
    return agreement.lines()


class Agreement:
    """The agreement lines, counted one finished case at a time (`dagtui run` over a large
    dataset keeps no result): per node the (label, verdict) pairs as counts, the score
    figures as totals, and the first LIST_MAX differing scores in dataset order."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        #: node -> ((label class, label), (verdict class, verdict)) -> count
        self.pairs: dict[str, Counter] = {}
        self.scored = 0
        self.same_pf = 0
        self.error = Fraction(0)
        self.differ = 0
        self._shown: list[tuple[int, str]] = []  # heap of (-position, line)

    def add(self, position: int, case: Any, r: Any) -> None:
        """Count the result `r` of `case` (the `position`-th case of the dataset)."""
        expected = (case.expected or {}) if case is not None else {}
        for step in r.steps:
            node = self.graph.nodes.get(step.node)
            if step.error is not None or step.node not in expected \
                    or node is None or not node.is_judgement \
                    or is_unsure(node, expected[step.node]):  # "unsure": out of kappa
                continue
            label = normalize_label(node, expected[step.node])
            pair = (class_key(label), class_key(step.answer))
            self.pairs.setdefault(step.node, Counter())[pair] += 1
        if r.expected_score is None or r.score is None:
            return
        self.scored += 1
        threshold = self.graph.metric.effective_threshold
        self.same_pf += (r.score + 1e-9 >= threshold) == (r.expected_score + 1e-9 >= threshold)
        self.error += Fraction(abs(r.score - r.expected_score))
        if abs(r.score - r.expected_score) > TOLERANCE:
            self.differ += 1
            item = (-position, f"    {r.case}: score {r.score:.2f}, expected "
                               f"{r.expected_score:.2f}")
            if len(self._shown) < LIST_MAX:
                heapq.heappush(self._shown, item)
            elif position < -self._shown[0][0]:
                heapq.heapreplace(self._shown, item)

    def lines(self) -> list[str]:
        if not self.pairs and not self.scored:
            return []
        out = ["", "agreement with the labels (the run's own path: nodes it skipped are not "
               "measured; `dagtui calibrate` judges every labelled node)"]
        if self.pairs:
            out.append("  node               cases  agree  kappa")
            for nid in self.graph.nodes:
                if nid in self.pairs:
                    counts = self.pairs[nid]
                    agree, kappa = stats.counted_agreement(counts)
                    out.append(f"  {nid[:18]:18} {sum(counts.values()):5d} {agree:6.0%} "
                               f"{'-' if kappa is None else f'{kappa:6.2f}':>6}")
        if self.scored:
            n = self.scored
            mae = float(self.error / n)
            out.append(f"  score vs expected_score: {counted(n, 'case')}, exact "
                       f"{1 - self.differ / n:.0%}, pass/fail {self.same_pf / n:.0%}, "
                       f"mean absolute error {mae:.3f}")
            out += [line for _, line in sorted(self._shown, key=lambda t: -t[0])]
            if self.differ > LIST_MAX:
                out.append(f"    … and {self.differ - LIST_MAX} more")
        return out


"""A run's aggregates, added up one finished case at a time.

A `dagtui.run.batch.BatchResult` prints and writes counts, totals, a score histogram and per-node
figures. Computed from a list of every result, they cost the memory of every result; `Tally`
takes each result as it finishes and keeps only the figures, so a run over a large dataset
holds no result it has already written (`dagtui.report.stream.ResultLog` keeps them on disk).

Cases finish in any order, but the figures are those the dataset's order gives: totals are
exact sums (`Fraction`, so a cost does not depend on which case finished first), and every
counter's keys keep the order in which the dataset order first meets them (the JSON report
lists verdicts and error kinds in that order). Latencies are kept per node (8 bytes each)
for the exact p50/p95.
"""

from __future__ import annotations

import heapq
from array import array
from collections import Counter
from fractions import Fraction
from typing import Any

from dagtui.kinds import decides, scores

#: bins of the score histogram the tally keeps
BINS = 10
#: failing and erroring cases kept (the first, in dataset order) for the summary to list
FIRST_KEPT = 10


class Ordered:
    """A Counter whose keys come out in the order of the smallest position each was added
    at, whatever order the adds came in."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.first: dict[Any, tuple[int, ...]] = {}

    def add(self, key: Any, at: tuple[int, ...], n: int = 1) -> None:
        self.counts[key] += n
        if key not in self.first or at < self.first[key]:
            self.first[key] = at

    def counter(self) -> Counter:
        """The counts as a Counter with its keys in dataset order."""
        return Counter({k: self.counts[k] for k in sorted(self.counts,
                                                          key=self.first.__getitem__)})


class NodeTotals:
    """One node's figures so far (see `dagtui.run.batch.NodeStats`, built from them)."""

    def __init__(self) -> None:
        self.reached = 0
        self.verdicts = Ordered()
        self.calls = 0
        self.cache_hits = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost = Fraction(0)
        self.latencies = array("d")
        self.errors = Ordered()


class Tally:
    """Everything a report says about its cases except the cases themselves."""

    def __init__(self) -> None:
        self.cases = 0
        self.statuses: Counter = Counter()
        self.calls = 0
        self.cache_hits = 0
        self.cached_steps = 0
        self.tokens = 0
        self._cost = Fraction(0)
        self.cost_known = False
        self.error_kinds = Ordered()
        self.retried = Ordered()
        self.corrections = 0
        self.bins = [0] * BINS
        self.nodes: dict[str, NodeTotals] = {}
        self._node_first: dict[str, tuple[int, int]] = {}
        #: (position, line) of the first halted case in dataset order
        self._halt: tuple[int, str] | None = None
        #: status -> the FIRST_KEPT (position, result) with the smallest positions (a heap
        #: of negated positions, so the largest is dropped first)
        self._first: dict[str, list[tuple[int, int, Any]]] = {"fail": [], "error": []}

    @classmethod
    def of(cls, results: Any) -> Tally:
        """The tally of results given in dataset order."""
        tally = cls()
        for i, result in enumerate(results):
            tally.add(i, result)
        return tally

    @property
    def cost(self) -> float | None:
        return float(self._cost) if self.cost_known else None

    @property
    def halt(self) -> str | None:
        return self._halt[1] if self._halt is not None else None

    def first(self, status: str) -> list[Any]:
        """The first FIRST_KEPT results of `status` ("fail" or "error"), in dataset order."""
        return [r for _, _, r in sorted(self._first[status], key=lambda t: -t[0])]

    def node_order(self, known: list[str]) -> list[str]:
        """`known` (the graph's nodes), then any other node met, in dataset order."""
        others = sorted((n for n in self._node_first if n not in known),
                        key=self._node_first.__getitem__)
        return list(known) + others

    def add(self, position: int, r: Any) -> None:
        """Count the result of the case at `position` (0-based, in the dataset)."""
        from dagtui.judges.health import halt_line

        self.cases += 1
        status = r.status
        self.statuses[status] += 1
        if status == "error":
            self.error_kinds.add(r.error_kind or "other", (position,))
        elif status == "not_run":
            line = halt_line(r.error)
            if line and (self._halt is None or position < self._halt[0]):
                self._halt = (position, line)
        if status in self._first:
            kept = self._first[status]
            item = (-position, id(r), r)
            if len(kept) < FIRST_KEPT:
                heapq.heappush(kept, item)
            elif position < -kept[0][0]:
                heapq.heapreplace(kept, item)
        if r.cost is not None:
            self.cost_known = True
            for s in r.steps:
                if s.cost is not None:
                    self._cost += Fraction(s.cost)
        if r.score is not None:
            self.bins[min(BINS - 1, int(r.score * BINS + 1e-9))] += 1
        for k, s in enumerate(r.steps):
            self._add_step(position, k, s)

    def _add_step(self, position: int, k: int, s: Any) -> None:
        node = self.nodes.get(s.node)
        if node is None:
            node = self.nodes[s.node] = NodeTotals()
        if s.node not in self._node_first or (position, k) < self._node_first[s.node]:
            self._node_first[s.node] = (position, k)
        node.reached += 1
        at = (position, k)
        if s.error is not None:
            node.errors.add(s.error_kind or "other", at)
        elif decides(s.node_type):
            node.verdicts.add(s.answer, at)
        elif scores(s.node_type) and s.answer is not None:
            node.verdicts.add(f"{float(s.answer):.1f}", at)
        made = s.calls_made
        node.calls += made
        self.calls += made
        hits = sum(1 for c in s.calls if c.cache_hit)
        node.cache_hits += hits
        self.cache_hits += hits
        self.cached_steps += 1 if s.cache_hit else 0
        node.prompt_tokens += s.prompt_tokens
        node.completion_tokens += s.completion_tokens
        self.tokens += s.prompt_tokens + s.completion_tokens
        if s.cost:
            node.cost += Fraction(s.cost)
        if made:
            node.latencies.append(s.latency)
        for j, c in enumerate(s.calls):
            for m, kind in enumerate(c.retry_kinds):
                self.retried.add(kind, (position, k, j, m))
            if c.purpose == "correction":
                self.corrections += 1

"""Many cases through one engine, and the report CI reads.

`evaluate_cases` checks every case can run before the first call (a dataset with a missing
field fails in a second, not after half the budget is spent), then runs cases concurrently.
The `RunReport` is what `dagtui run` prints and writes: pass rate, a score histogram, per node
how often it was reached, its verdicts, calls, tokens, cost and p50/p95 latency, and judge
errors counted apart by kind — a judge error is not a failing case.

Exit codes, decided here so the CLI and the API agree: 3 when the judge halted (it could
not be used at all, or went down mid-run) and cases were left `not_run` — the run is
incomplete, whatever it found so far; else 1 when any case failed (score below threshold) —
failures win over judge errors, since they are a verdict on the system under test; else 3
when any case ended in a judge error (no verdict could be had); otherwise 0.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .cases import Case, CaseError
from .engine import Engine
from .exitcodes import ExitCode
from .text import verdict_text
from .trace import RunResult


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(round(q / 100 * len(ordered) + 0.5))))
    return ordered[rank - 1]


@dataclass
class NodeStats:
    """How one node behaved across a run."""

    node: str
    reached: int = 0
    verdicts: Counter = field(default_factory=Counter)
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)

    @property
    def p50(self) -> float | None:
        return percentile(self.latencies, 50)

    @property
    def p95(self) -> float | None:
        return percentile(self.latencies, 95)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reached": self.reached,
            "verdicts": {verdict_text(k): v for k, v in self.verdicts.items()},
            "calls": self.calls, "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "cost": self.cost, "latency_p50": self.p50, "latency_p95": self.p95,
            "errors": dict(self.errors),
        }


@dataclass
class RunReport:
    """The outcome of a batch: one RunResult per case plus aggregates."""

    graph_name: str
    threshold: float
    results: list[RunResult] = field(default_factory=list)
    wall_time: float = 0.0
    judge: dict[str, Any] = field(default_factory=dict)
    node_order: list[str] = field(default_factory=list)
    #: `--shard I/N`: {"index", "count", "positions" of its cases in the dataset} for
    #: `dagtui merge`; None for a whole run
    shard: dict[str, Any] | None = None

    @property
    def passed(self) -> list[RunResult]:
        return [r for r in self.results if r.status == "pass"]

    @property
    def failed(self) -> list[RunResult]:
        return [r for r in self.results if r.status == "fail"]

    @property
    def errored(self) -> list[RunResult]:
        return [r for r in self.results if r.status == "error"]

    @property
    def not_run(self) -> list[RunResult]:
        """Cases never judged because the judge halted (`dagtui.judges.health`)."""
        return [r for r in self.results if r.status == "not_run"]

    @property
    def halt(self) -> str | None:
        """Why the judge halted (the one line to print), or None when it did not."""
        from .judges.health import halt_line

        return next((line for r in self.not_run if (line := halt_line(r.error))), None)

    @property
    def pass_rate(self) -> float | None:
        scored = len(self.passed) + len(self.failed)
        return len(self.passed) / scored if scored else None

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.results)

    @property
    def cache_hits(self) -> int:
        return sum(r.cache_hits for r in self.results)

    @property
    def cached_steps(self) -> int:
        """Steps of every case answered wholly from the cache."""
        return sum(r.cached_steps for r in self.results)

    @property
    def tokens(self) -> int:
        return sum(r.tokens for r in self.results)

    @property
    def cost(self) -> float | None:
        costs = [r.cost for r in self.results if r.cost is not None]
        return sum(costs) if costs else None

    def error_kinds(self) -> Counter:
        """Cases that ended in a judge error, by kind."""
        return Counter(r.error_kind or "other" for r in self.errored)

    def retried_kinds(self) -> Counter:
        """Transient failures that were retried (whether or not the retry succeeded)."""
        out: Counter = Counter()
        for r in self.results:
            for s in r.steps:
                for c in s.calls:
                    out.update(c.retry_kinds)
        return out

    def corrections(self) -> int:
        """Answers that needed the corrective turn."""
        return sum(1 for r in self.results for s in r.steps for c in s.calls
                   if c.purpose == "correction")

    def histogram(self, bins: int = 10) -> list[tuple[float, float, int]]:
        """Score counts in `bins` equal bins over 0..1 (1.0 falls in the last)."""
        counts = [0] * bins
        for r in self.results:
            if r.score is not None:
                counts[min(bins - 1, int(r.score * bins + 1e-9))] += 1
        return [(i / bins, (i + 1) / bins, c) for i, c in enumerate(counts)]

    def node_stats(self) -> dict[str, NodeStats]:
        stats = {nid: NodeStats(nid) for nid in self.node_order}
        for r in self.results:
            for s in r.steps:
                st = stats.setdefault(s.node, NodeStats(s.node))
                st.reached += 1
                if s.error is not None:
                    st.errors[s.error_kind or "other"] += 1
                elif s.node_type not in ("task", "geval", "metric"):
                    st.verdicts[s.answer] += 1
                elif s.node_type in ("geval", "metric") and s.answer is not None:
                    st.verdicts[f"{float(s.answer):.1f}"] += 1
                st.calls += s.calls_made
                st.cache_hits += sum(1 for c in s.calls if c.cache_hit)
                st.prompt_tokens += s.prompt_tokens
                st.completion_tokens += s.completion_tokens
                st.cost += s.cost or 0.0
                if s.calls_made:
                    st.latencies.append(s.latency)
        return stats

    def exit_code(self) -> int:
        if self.not_run:
            return ExitCode.JUDGE
        if self.failed:
            return ExitCode.FAILURES
        if self.errored:
            return ExitCode.JUDGE
        return ExitCode.OK

    # ---------------------------------------------------------------- outputs

    def to_dict(self, *, steps: bool = False, results: bool = True) -> dict[str, Any]:
        """The report as plain data; `results=False` leaves the per-case list empty (the
        aggregates still count every case)."""
        return {
            "metric": self.graph_name, "threshold": self.threshold, "judge": self.judge,
            "cases": len(self.results), "passed": len(self.passed),
            "failed": len(self.failed), "errors": len(self.errored),
            "not_run": len(self.not_run), "halt": self.halt,
            "pass_rate": self.pass_rate, "wall_time": self.wall_time,
            "calls": self.calls, "cache_hits": self.cache_hits,
            "cached_steps": self.cached_steps, "tokens": self.tokens,
            "cost": self.cost,
            "judge_errors": dict(self.error_kinds()),
            "retried": dict(self.retried_kinds()), "corrections": self.corrections(),
            "histogram": [{"from": lo, "to": hi, "count": c} for lo, hi, c in self.histogram()],
            "nodes": {k: v.to_dict() for k, v in self.node_stats().items()},
            "results": [
                r.to_dict() if steps else {k: v for k, v in r.to_dict().items() if k != "steps"}
                for r in (self.results if results else [])
            ],
            "exit_code": self.exit_code(),
            **({"shard": self.shard} if self.shard else {}),
        }

    def to_json(self, *, steps: bool = False) -> str:
        """The report as JSON; user and judge text made writable (`dagtui.outputs`).

        The same text as `safe_json(self.to_dict(steps=steps))`, but each result is turned
        into a dict and encoded one at a time: a run of many cases never holds every result's
        dict tree at once (that tree, not the text, is what made a large run's memory peak
        at the end)."""
        from .outputs import safe_json

        head = self.to_dict(steps=steps, results=False)
        results = self.results

        def encoded(key: str, value: Any) -> str:
            if key != "results" or not results:
                return safe_json(value).replace("\n", "\n  ")
            items = []
            for r in results:
                data = r.to_dict()
                if not steps:
                    data.pop("steps", None)
                items.append("    " + safe_json(data).replace("\n", "\n    "))
            return "[\n" + ",\n".join(items) + "\n  ]"

        return "{\n" + ",\n".join(f"  {safe_json(k)}: {encoded(k, v)}"
                                    for k, v in head.items()) + "\n}"

    def to_junit(self) -> str:
        """JUnit XML: a failing case is a <failure>, a judge error an <error>."""
        name = quoteattr(self.graph_name)
        lines = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<testsuites name={name} tests="{len(self.results)}" '
            f'failures="{len(self.failed)}" errors="{len(self.errored)}" '
            f'skipped="{len(self.not_run)}" time="{self.wall_time:.3f}">',
            f'  <testsuite name={name} tests="{len(self.results)}" '
            f'failures="{len(self.failed)}" errors="{len(self.errored)}" '
            f'skipped="{len(self.not_run)}" time="{self.wall_time:.3f}">',
        ]
        for r in self.results:
            lines.append(f'    <testcase classname={name} name={quoteattr(r.case)} '
                         f'time="{r.wall_time:.3f}">')
            if r.status == "fail":
                msg = f"score {r.score:.2f} < threshold {r.threshold:g}"
                lines.append(f"      <failure message={quoteattr(msg)}>"
                             f"{escape(r.describe_path())}\n{escape(r.reason)}</failure>")
            elif r.status == "not_run":
                lines.append(f"      <skipped message={quoteattr('not run: ' + (r.error or ''))}"
                             "/>")
            elif r.status == "error":
                lines.append(f"      <error type={quoteattr(r.error_kind or 'other')} "
                             f"message={quoteattr(r.error or '')}>"
                             f"{escape(r.describe_path())}</error>")
            else:
                lines.append(f"      <system-out>{escape(r.describe_path())}</system-out>")
            lines.append("    </testcase>")
        lines += ["  </testsuite>", "</testsuites>", ""]
        from .outputs import safe_text

        return safe_text("\n".join(lines))  # no NUL, escape byte or lone surrogate: well-formed


def preflight_all(engine: Engine, cases: Iterable[Case]) -> None:
    """Raise one CaseError listing every case that cannot run (before any call)."""
    problems = []
    for case in cases:
        missing = engine.missing_inputs(case)
        if missing:
            problems.append(f"{case.where}: case {case.name!r}: " + "; ".join(missing))
    if problems:
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise CaseError("cases lack fields the graph needs:\n  " + "\n  ".join(problems[:20])
                        + more)


async def run_cases(
    engine: Engine,
    cases: list[Case],
    *,
    concurrency: int = 16,
    on_result: Callable[[int, RunResult], None] | None = None,
) -> list[RunResult]:
    """Run `cases` at most `concurrency` at a time; results in case order.

    `on_result(index, result)` fires as each case ends. This is the one loop both the
    in-process batch and each Dask worker (`dagtui.dask_worker`) run, so the two cannot
    drift apart in how cases are scheduled. The judge is guarded meanwhile: its first
    uncached call goes out alone, and a judge that cannot work or goes down halts, leaving
    the cases still to come `not_run` (`dagtui.judges.health`).
    """
    sem = asyncio.Semaphore(max(1, concurrency))
    slots: list[RunResult | None] = [None] * len(cases)

    async def one(i: int, case: Case) -> None:
        async with sem:
            result = await engine.run(case, check=False)
        slots[i] = result
        if on_result is not None:
            on_result(i, result)

    with engine.judge.guarded():
        await asyncio.gather(*(one(i, c) for i, c in enumerate(cases)))
    return [r for r in slots if r is not None]


def new_report(engine: Engine) -> RunReport:
    """An empty report for `engine`'s graph and judge."""
    graph = engine.graph
    return RunReport(graph.metric.name, graph.metric.effective_threshold,
                  judge=engine.judge.describe(), node_order=list(graph.nodes))


async def evaluate_cases(
    engine: Engine,
    cases: list[Case],
    *,
    concurrency: int = 16,
    on_result: Callable[[RunResult], None] | None = None,
) -> RunReport:
    """Run every case (at most `concurrency` at a time) and collect the report."""
    preflight_all(engine, cases)
    report = new_report(engine)
    start = time.perf_counter()
    report.results = await run_cases(
        engine, cases, concurrency=concurrency,
        on_result=None if on_result is None else (lambda _i, r: on_result(r)))
    report.wall_time = time.perf_counter() - start
    return report

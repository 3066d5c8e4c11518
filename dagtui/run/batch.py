"""Many cases through one engine, and the report CI reads.

`evaluate_cases` checks every case can run before the first call (a dataset with a missing
field fails in a second, not after half the budget is spent), then runs cases concurrently.
The `BatchResult` is what `dagtui run` prints and writes: pass rate, a score histogram, per node
how often it was reached, its verdicts, calls, tokens, cost and p50/p95 latency, and judge
errors counted apart by kind — a judge error is not a failing case.

Exit codes, decided once for graph and suite runs (`dagtui.report.outcome.Counts`) so the
CLI and the API agree: 3 when the judge halted (it could
not be used at all, or went down mid-run) and cases were left `not_run` — the run is
incomplete, whatever it found so far; else 1 when any case failed (score below threshold) —
failures win over judge errors, since they are a verdict on the system under test; else 3
when any case ended in a judge error (no verdict could be had); otherwise 0.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from dagtui.graph.model import about
from dagtui.report.outcome import Counts
from dagtui.report.trace import RunResult, record_data
from dagtui.run.cases import Case, CaseError
from dagtui.run.engine import Engine
from dagtui.run.tally import BINS, Tally
from dagtui.text import verdict_text

if TYPE_CHECKING:
    from dagtui.report.junit import JUnitCase, JUnitDocument
    from dagtui.report.stream import ResultLog


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

    #: what the report leaves out (the node is its key; the latencies give the percentiles)
    #: and what it writes beside the fields (`dagtui.report.trace.written`)
    UNWRITTEN: ClassVar[tuple[str, ...]] = ("node", "latencies")
    WRITTEN: ClassVar[tuple[str, ...]] = ("latency_p50", "latency_p95")

    node: str
    reached: int = 0
    verdicts: Counter = field(default_factory=Counter, metadata=about(
        "Cases by the verdict (or score) given."))
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter, metadata=about("Judge errors by kind."))

    @property
    def latency_p50(self) -> float | None:
        """Median seconds of the calls it sent."""
        return percentile(self.latencies, 50)

    @property
    def latency_p95(self) -> float | None:
        """95th percentile seconds of the calls it sent."""
        return percentile(self.latencies, 95)

    def to_dict(self) -> dict[str, Any]:
        data = record_data(self)
        data["verdicts"] = {verdict_text(k): v for k, v in self.verdicts.items()}
        data["errors"] = dict(self.errors)
        return data


@dataclass
class ScoreBin:
    """One bin of the score histogram."""

    RENAMED: ClassVar[dict[str, str]] = {"low": "from"}

    low: float
    to: float
    count: int


@dataclass
class ReportFigures:
    """The report `dagtui run --json FILE` writes when the run ends: what the run counted
    (`BatchResult.figures`), and its cases' results."""

    #: keys written only when set
    OPTIONAL: ClassVar[tuple[str, ...]] = ("shard", "calibration")

    metric: str
    threshold: float
    judge: dict[str, Any]
    cases: int
    passed: int
    failed: int
    errors: int
    not_run: int
    halt: str | None = field(metadata=about("Why the judge halted, when it did."))
    pass_rate: float | None
    wall_time: float
    calls: int
    cache_hits: int
    cached_steps: int
    tokens: int
    cost: float | None
    judge_errors: dict[str, int]
    retried: dict[str, int]
    corrections: int
    histogram: list[ScoreBin]
    nodes: dict[str, NodeStats]
    #: each case's `RunResult.to_dict` (its steps when asked), in dataset order
    results: list[dict[str, Any]]
    exit_code: Literal[0, 1, 3] = field(metadata=about(
        "The run's exit code: 3 when the judge halted, else 1 when a case failed, else 3 "
        "when a case ended in a judge error, else 0."))
    #: `BatchResult.shard`
    shard: dict[str, Any] | None = None
    calibration: dict[str, Any] | None = field(default=None, metadata=about(
        "The graph's saved calibration as the run saw it (absent when none is saved)."))

    def to_dict(self) -> dict[str, Any]:
        data = record_data(self)
        data["histogram"] = [record_data(b) for b in self.histogram]
        data["nodes"] = {k: v.to_dict() for k, v in self.nodes.items()}
        return data


@dataclass
class BatchResult:
    """The outcome of a batch: one RunResult per case plus aggregates.

    `results` is a list, or for a run that streams (`dagtui run`) a `dagtui.report.stream.ResultLog`
    keeping them on disk; either way the aggregates come from a `dagtui.run.tally.Tally` (the
    log's own, kept as cases finish, or one made from the list when asked), and reports are
    written reading one result at a time."""

    graph_name: str
    threshold: float
    results: Any = field(default_factory=list)
    wall_time: float = 0.0
    judge: dict[str, Any] = field(default_factory=dict)
    node_order: list[str] = field(default_factory=list)
    #: `--shard I/N`: {"index", "count", "positions" of its cases in the dataset} for
    #: `dagtui merge`; None for a whole run
    shard: dict[str, Any] | None = None
    #: the graph's saved calibration as the run saw it: its state and, when fresh, the pass
    #: rate corrected for the judge's errors (`dagtui.calibration.saved.run_calibration`);
    #: None when nobody asked (the report then has no `calibration` key)
    calibration: dict[str, Any] | None = None

    def tally(self) -> Tally:
        """The aggregates of `results` (kept by a ResultLog, else counted now)."""
        kept = getattr(self.results, "tally", None)
        return kept if isinstance(kept, Tally) else Tally.of(self.results)

    def _with(self, status: str) -> list[RunResult]:
        return [r for r in self.results if r.status == status]

    @property
    def passed(self) -> list[RunResult]:
        return self._with("pass")

    @property
    def failed(self) -> list[RunResult]:
        return self._with("fail")

    @property
    def errored(self) -> list[RunResult]:
        return self._with("error")

    @property
    def not_run(self) -> list[RunResult]:
        """Cases never judged because the judge halted (`dagtui.judges.health`)."""
        return self._with("not_run")

    def count(self, status: str) -> int:
        """How many cases ended with `status` (pass, fail, error, not_run)."""
        return self.tally().statuses[status]

    def first(self, status: str) -> list[RunResult]:
        """The first (at most 10, in dataset order) cases that ended in "fail" or "error"."""
        return self.tally().first(status)

    @property
    def halt(self) -> str | None:
        """Why the judge halted (the one line to print), or None when it did not."""
        return self.tally().halt

    @property
    def pass_rate(self) -> float | None:
        return self.counts().pass_rate

    @property
    def calls(self) -> int:
        return self.tally().calls

    @property
    def cache_hits(self) -> int:
        return self.tally().cache_hits

    @property
    def cached_steps(self) -> int:
        """Steps answered wholly from the cache."""
        return self.tally().cached_steps

    @property
    def tokens(self) -> int:
        return self.tally().tokens

    @property
    def cost(self) -> float | None:
        return self.tally().cost

    def error_kinds(self) -> Counter:
        """Cases that ended in a judge error, by kind."""
        return self.tally().error_kinds.counter()

    def retried_kinds(self) -> Counter:
        """Transient failures that were retried (whether or not the retry succeeded)."""
        return self.tally().retried.counter()

    def corrections(self) -> int:
        """Answers that needed the corrective turn."""
        return self.tally().corrections

    def histogram(self, bins: int = BINS) -> list[tuple[float, float, int]]:
        """Score counts in `bins` equal bins over 0..1 (1.0 falls in the last)."""
        if bins == BINS:
            counts = list(self.tally().bins)
        else:
            counts = [0] * bins
            for r in self.results:
                if r.score is not None:
                    counts[min(bins - 1, int(r.score * bins + 1e-9))] += 1
        return [(i / bins, (i + 1) / bins, c) for i, c in enumerate(counts)]

    def node_stats(self) -> dict[str, NodeStats]:
        return _node_stats(self.tally(), self.node_order)

    def exit_code(self) -> int:
        """0, 1 or 3 by the rule of `dagtui.report.outcome.Counts.exit_code`."""
        return self.counts().exit_code()

    # ---------------------------------------------------------------- outputs
    # the shape `dagtui.report.outcome.RunOutcome` names: what every report writer reads

    def counts(self) -> Counts:
        """How many cases ended in each status."""
        counts = Counts()
        for status, n in self.tally().statuses.items():
            counts.add(status, n)
        return counts

    def halts(self) -> list[str]:
        """Why the judge halted, as one line, or none."""
        return [self.halt] if self.halt else []

    def figures(self, results: list[dict[str, Any]]) -> ReportFigures:
        """What the run counted, with `results` as the report's per-case list."""
        t = self.tally()
        counts = self.counts()
        return ReportFigures(
            self.graph_name, self.threshold, self.judge, t.cases, counts.passed,
            counts.failed, counts.errors, counts.not_run, t.halt, counts.pass_rate,
            self.wall_time, t.calls, t.cache_hits, t.cached_steps, t.tokens, t.cost,
            dict(t.error_kinds.counter()), dict(t.retried.counter()), t.corrections,
            [ScoreBin(i / BINS, (i + 1) / BINS, c) for i, c in enumerate(t.bins)],
            _node_stats(t, self.node_order), results,
            cast(Literal[0, 1, 3], counts.exit_code()), self.shard, self.calibration)

    def to_dict(self, *, steps: bool = False, results: bool = True) -> dict[str, Any]:
        """The report as plain data; `results=False` leaves the per-case list empty (the
        aggregates still count every case)."""
        return self.figures(list(self._result_dicts(steps)) if results else []).to_dict()

    def _result_dicts(self, steps: bool) -> Iterator[dict[str, Any]]:
        """Each result as the report writes it, in dataset order, one at a time."""
        dicts = getattr(self.results, "dicts", None)
        for data in dicts() if dicts is not None else (r.to_dict() for r in self.results):
            if not steps:
                data.pop("steps", None)
            yield data

    def to_json(self, *, steps: bool = False) -> str:
        """The report as JSON; user and judge text made writable (`dagtui.report.outputs`)."""
        return "".join(self.json_parts(steps=steps))

    def json_parts(self, *, steps: bool = False) -> Iterator[str]:
        """The JSON report in pieces, each result encoded as it is read (the text of
        `safe_json(self.to_dict(steps=steps))`: `dagtui.report.outputs.json_document_parts`)."""
        from dagtui.report.outputs import json_document_parts

        return json_document_parts(self.to_dict(steps=steps, results=False),
                                   {"results": lambda: self._result_dicts(steps)})

    def junit(self) -> JUnitDocument:
        """One suite named after the graph, a case each: a failing case is a <failure>, a
        judge error an <error>, a case the halted judge never saw <skipped>."""
        from dagtui.report.junit import JUnitDocument, JUnitSuite

        properties = _junit_properties(self.calibration) if self.calibration else []
        name = self.graph_name
        suite = JUnitSuite(name, self.counts(), (_junit_case(name, r) for r in self.results),
                           time=self.wall_time, properties=properties)
        return JUnitDocument(name, [suite], time=self.wall_time)

    def to_junit(self) -> str:
        """The JUnit XML as one string (`dagtui.report.junit`)."""
        from dagtui.report.junit import junit_text

        return junit_text(self.junit())

    def junit_parts(self) -> Iterator[str]:
        """`to_junit`'s text in pieces (one per case), for writing without building it."""
        from dagtui.report.junit import junit_parts

        return junit_parts(self.junit())

    def summary_lines(self) -> Iterator[str]:
        """The summary `dagtui run` prints (`dagtui.report.summary.batch_lines`)."""
        from dagtui.report.summary import batch_lines

        return batch_lines(self)


def _junit_properties(calibration: dict[str, Any]) -> list[tuple[str, object]]:
    """The calibration's state and the corrected pass rate as the suite's <properties>."""
    props: list[tuple[str, object]] = [("calibration", calibration.get("state")),
                                       ("calibration_detail", calibration.get("line"))]
    corrected = calibration.get("corrected_pass_rate") or {}
    if corrected.get("unusable"):
        props.append(("corrected_pass_rate_unusable", corrected["unusable"]))
    elif corrected.get("estimate") is not None:
        props += [("corrected_pass_rate", f"{corrected['estimate']:.6f}"),
                  ("corrected_pass_rate_ci_low", f"{corrected['ci'][0]:.6f}"),
                  ("corrected_pass_rate_ci_high", f"{corrected['ci'][1]:.6f}"),
                  ("judge_sensitivity", f"{corrected['sensitivity']:.6f}"),
                  ("judge_specificity", f"{corrected['specificity']:.6f}")]
    return props


def _junit_case(name: str, r: RunResult) -> JUnitCase:
    """One case as JUnit reads it: the path it took, and why it failed or erred."""
    from dagtui.report.junit import JUnitCase

    status = r.status
    if status == "fail":
        return JUnitCase(name, r.case, status, time=r.wall_time,
                         message=f"score {r.score:.2f} < threshold {r.threshold:g}",
                         text=f"{r.describe_path()}\n{r.reason}")
    if status == "not_run":
        return JUnitCase(name, r.case, status, time=r.wall_time,
                         message="not run: " + (r.error or ""))
    if status == "error":
        return JUnitCase(name, r.case, status, time=r.wall_time, message=r.error or "",
                         kind=r.error_kind, text=r.describe_path())
    return JUnitCase(name, r.case, status, time=r.wall_time, text=r.describe_path())


def _node_stats(t: Tally, known: list[str]) -> dict[str, NodeStats]:
    """Per node figures: the graph's nodes in order, then any other node a result met."""
    stats = {}
    for nid in t.node_order(known):
        st = stats[nid] = NodeStats(nid)
        totals = t.nodes.get(nid)
        if totals is None:
            continue
        st.reached, st.calls, st.cache_hits = totals.reached, totals.calls, totals.cache_hits
        st.prompt_tokens, st.completion_tokens = totals.prompt_tokens, totals.completion_tokens
        st.cost = float(totals.cost)
        st.verdicts = totals.verdicts.counter()
        st.errors = totals.errors.counter()
        st.latencies = list(totals.latencies)
    return stats


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
    """Run `cases` at most `concurrency` at a time; results in case order (see
    `run_stream`). `on_result(index, result)` fires as each case ends."""
    slots: dict[int, RunResult] = {}

    def done(i: int, _case: Case, result: RunResult) -> None:
        slots[i] = result
        if on_result is not None:
            on_result(i, result)

    await run_stream(engine, cases, concurrency=concurrency, on_case=done)
    return [slots[i] for i in sorted(slots)]


async def run_stream(
    engine: Engine,
    cases: Iterable[Case],
    *,
    concurrency: int = 16,
    on_case: Callable[[int, Case, RunResult], None],
) -> None:
    """Run `cases` at most `concurrency` at a time, taking the next case from `cases` only
    when one in flight ends, so a dataset read lazily stays lazy: only the cases in flight
    are in memory. `on_case(position, case, result)` fires as each case ends.

    This is the one loop both the in-process batch and each Dask worker
    (`dagtui.run.dask_worker`) run, so the two cannot drift apart in how cases are scheduled.
    The judge is guarded meanwhile: its first uncached call goes out alone, and a judge
    that cannot work or goes down halts, leaving the cases still to come `not_run`
    (`dagtui.judges.health`). A case whose run raises stops the loop; the exception is
    raised once the cases in flight have ended.
    """
    slots = asyncio.Semaphore(max(1, concurrency))
    running: set[asyncio.Task[None]] = set()
    raised: list[BaseException] = []

    async def one(i: int, case: Case) -> None:
        try:
            result = await engine.run(case, check=False)
            on_case(i, case, result)
        except Exception as exc:
            raised.append(exc)
            raise
        finally:
            slots.release()

    with engine.judge.guarded():
        for i, case in enumerate(cases):
            await slots.acquire()
            if raised:
                slots.release()
                break
            task = asyncio.create_task(one(i, case))
            running.add(task)
            task.add_done_callback(running.discard)
        if running:
            await asyncio.gather(*running)
        if raised:
            raise raised[0]


def new_report(engine: Engine) -> BatchResult:
    """An empty report for `engine`'s graph and judge."""
    graph = engine.graph
    return BatchResult(graph.metric.name, graph.metric.effective_threshold,
                  judge=engine.judge.describe(), node_order=list(graph.nodes))


async def evaluate_cases(
    engine: Engine,
    cases: Iterable[Case],
    *,
    concurrency: int = 16,
    on_result: Callable[[RunResult], None] | None = None,
    on_case: Callable[[int, Case, RunResult], None] | None = None,
    log: ResultLog | None = None,
) -> BatchResult:
    """Run every case (at most `concurrency` at a time) and collect the report.

    `cases` may be read lazily (`dagtui.run.case_stream.CaseStream`: one pass checks the
    fields, one runs). `on_result(result)` or `on_case(position, case, result)` fires as
    each case ends, before the result is kept: in a list, or in `log` (on disk, for flat
    memory) when given."""
    if iter(cases) is cases:  # a one-pass iterator: the preflight would use it up
        cases = list(cases)
    preflight_all(engine, cases)
    report = new_report(engine)
    kept: dict[int, RunResult] = {}

    def done(i: int, case: Case, result: RunResult) -> None:
        if on_case is not None:
            on_case(i, case, result)
        if on_result is not None:
            on_result(result)
        if log is not None:
            log.add(i, result)
        else:
            kept[i] = result

    start = time.perf_counter()
    setup = getattr(engine.judge, "setup_seconds", 0.0)
    await run_stream(engine, cases, concurrency=concurrency, on_case=done)
    # a model judge loads its client on the first call the cache cannot answer: that
    # one-time setup is not the run's time
    setup = getattr(engine.judge, "setup_seconds", 0.0) - setup
    report.wall_time = max(0.0, time.perf_counter() - start - setup)
    report.results = log if log is not None else [kept[i] for i in sorted(kept)]
    return report

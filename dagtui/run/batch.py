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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape, quoteattr

from dagtui.exitcodes import ExitCode
from dagtui.report.trace import RunResult
from dagtui.run.cases import Case, CaseError
from dagtui.run.engine import Engine
from dagtui.run.tally import BINS, Tally
from dagtui.text import verdict_text

if TYPE_CHECKING:
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
    #: visits where the judge could not tell (the node's `unsure`)
    unsure: int = 0

    @property
    def unsure_rate(self) -> float | None:
        """The share of visits the judge could not tell about (None: never reached)."""
        return self.unsure / self.reached if self.reached else None

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
            "errors": dict(self.errors), "unsure": self.unsure,
            "unsure_rate": self.unsure_rate,
        }


@dataclass
class RunReport:
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
    #: `--fail-on-unscored`: an unscored case makes the exit code 1 (else it is counted apart
    #: and the exit code ignores it)
    fail_on_unscored: bool = False

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
        return _pass_rate(self.tally())

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
        return _exit_code(self.tally(), self.fail_on_unscored)

    # ---------------------------------------------------------------- outputs

    def to_dict(self, *, steps: bool = False, results: bool = True) -> dict[str, Any]:
        """The report as plain data; `results=False` leaves the per-case list empty (the
        aggregates still count every case)."""
        t = self.tally()
        return {
            "metric": self.graph_name, "threshold": self.threshold, "judge": self.judge,
            "cases": t.cases, "passed": t.statuses["pass"],
            "failed": t.statuses["fail"], "errors": t.statuses["error"],
            "not_run": t.statuses["not_run"], "unscored": t.statuses["unscored"],
            "halt": t.halt,
            "pass_rate": _pass_rate(t), "wall_time": self.wall_time,
            "calls": t.calls, "cache_hits": t.cache_hits,
            "cached_steps": t.cached_steps, "tokens": t.tokens,
            "cost": t.cost,
            "judge_errors": dict(t.error_kinds.counter()),
            "retried": dict(t.retried.counter()), "corrections": t.corrections,
            "histogram": [{"from": i / BINS, "to": (i + 1) / BINS, "count": c}
                          for i, c in enumerate(t.bins)],
            "nodes": {k: v.to_dict() for k, v in _node_stats(t, self.node_order).items()},
            "results": list(self._result_dicts(steps)) if results else [],
            "exit_code": _exit_code(t, self.fail_on_unscored),
            **({"shard": self.shard} if self.shard else {}),
            **({"calibration": self.calibration} if self.calibration else {}),
        }

    def _result_dicts(self, steps: bool) -> Iterator[dict[str, Any]]:
        """Each result as the report writes it, in dataset order, one at a time."""
        dicts = getattr(self.results, "dicts", None)
        for data in dicts() if dicts is not None else (r.to_dict() for r in self.results):
            if not steps:
                data.pop("steps", None)
            yield data

    def to_json(self, *, steps: bool = False) -> str:
        """The report as JSON; user and judge text made writable (`dagtui.report.outputs`).

        The same text as `safe_json(self.to_dict(steps=steps))`, but each result is turned
        into a dict and encoded one at a time: a run of many cases never holds every result's
        dict tree at once (that tree, not the text, is what made a large run's memory peak
        at the end)."""
        return "".join(self.json_parts(steps=steps))

    def json_parts(self, *, steps: bool = False) -> Iterator[str]:
        """`to_json`'s text in pieces (one per result), for writing without building it."""
        from dagtui.report.outputs import safe_json

        head = self.to_dict(steps=steps, results=False)
        yield "{\n"
        for n, (key, value) in enumerate(head.items()):
            yield (",\n" if n else "") + f"  {safe_json(key)}: "
            if key != "results" or not self.results:
                yield safe_json(value).replace("\n", "\n  ")
                continue
            yield "[\n"
            for k, data in enumerate(self._result_dicts(steps)):
                yield (",\n" if k else "") + "    " + safe_json(data).replace("\n", "\n    ")
            yield "\n  ]"
        yield "\n}"

    def to_junit(self) -> str:
        """JUnit XML: a failing case is a <failure>, a judge error an <error>."""
        return "".join(self.junit_parts())

    def junit_parts(self) -> Iterator[str]:
        """`to_junit`'s text in pieces (one per case), for writing without building it."""
        from dagtui.report.outputs import safe_text

        t = self.tally()
        name = quoteattr(self.graph_name)
        counts = (f'tests="{t.cases}" failures="{t.statuses["fail"]}" '
                  f'errors="{t.statuses["error"]}" '
                  f'skipped="{t.statuses["not_run"] + t.statuses["unscored"]}" '
                  f'time="{self.wall_time:.3f}"')
        yield safe_text('<?xml version="1.0" encoding="UTF-8"?>\n'
                        f'<testsuites name={name} {counts}>\n'
                        f'  <testsuite name={name} {counts}>\n')
        if self.calibration:
            yield safe_text(_junit_properties(self.calibration))
        for r in self.results:
            # no NUL, escape byte or lone surrogate: well-formed
            yield safe_text("\n".join(_junit_case(name, r)) + "\n")
        yield "  </testsuite>\n</testsuites>\n"


def _junit_properties(calibration: dict[str, Any]) -> str:
    """The calibration's state and the corrected pass rate as the suite's <properties>."""
    props = [("calibration", calibration.get("state")),
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
    lines = [f"      <property name={quoteattr(k)} value={quoteattr(str(v))}/>"
             for k, v in props if v is not None]
    return "    <properties>\n" + "\n".join(lines) + "\n    </properties>\n"


def _junit_case(name: str, r: RunResult) -> list[str]:
    """One case's <testcase> lines."""
    lines = [f'    <testcase classname={name} name={quoteattr(r.case)} '
             f'time="{r.wall_time:.3f}">']
    if r.status == "fail":
        msg = f"score {r.score:.2f} < threshold {r.threshold:g}"
        lines.append(f"      <failure message={quoteattr(msg)}>"
                     f"{escape(r.describe_path())}\n{escape(r.reason)}</failure>")
    elif r.status == "not_run":
        lines.append(f"      <skipped message={quoteattr('not run: ' + (r.error or ''))}/>")
    elif r.status == "unscored":
        lines.append(f"      <skipped message={quoteattr('unscored: ' + (r.unscored or ''))}/>")
    elif r.status == "error":
        lines.append(f"      <error type={quoteattr(r.error_kind or 'other')} "
                     f"message={quoteattr(r.error or '')}>"
                     f"{escape(r.describe_path())}</error>")
    else:
        lines.append(f"      <system-out>{escape(r.describe_path())}</system-out>")
    lines.append("    </testcase>")
    return lines


def _pass_rate(t: Tally) -> float | None:
    passed, failed = t.statuses["pass"], t.statuses["fail"]
    return passed / (passed + failed) if passed + failed else None


def _exit_code(t: Tally, fail_on_unscored: bool = False) -> int:
    if t.statuses["not_run"]:
        return ExitCode.JUDGE
    if t.statuses["fail"] or (fail_on_unscored and t.statuses["unscored"]):
        return ExitCode.FAILURES
    if t.statuses["error"]:
        return ExitCode.JUDGE
    return ExitCode.OK


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
        st.unsure = totals.unsure
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


def new_report(engine: Engine) -> RunReport:
    """An empty report for `engine`'s graph and judge."""
    graph = engine.graph
    return RunReport(graph.metric.name, graph.metric.effective_threshold,
                  judge=engine.judge.describe(), node_order=list(graph.nodes))


async def evaluate_cases(
    engine: Engine,
    cases: Iterable[Case],
    *,
    concurrency: int = 16,
    on_result: Callable[[RunResult], None] | None = None,
    on_case: Callable[[int, Case, RunResult], None] | None = None,
    log: ResultLog | None = None,
) -> RunReport:
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

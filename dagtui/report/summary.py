"""The one summary printer: what `dagtui run` and `dagtui merge` print when a run ends.

Each run gives its summary a line at a time (`RunOutcome.summary_lines`: a graph run's
figures are `batch_lines` below, a suite's table is `dagtui.suite.report.summary_lines`);
`print_summary` writes them as plain text, each made safe for a terminal (names, labels and
judge text are shown, never obeyed: `dagtui.text.for_terminal`). Prose lines are wrapped at
`SUMMARY_WIDTH` at a space, the rest indented under their start, since a terminal's own wrap
at the edge would break words; a suite's table is laid out by rich at its own width.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, TextIO

from dagtui.text import counted, for_terminal, shorten, verdict_text

if TYPE_CHECKING:
    from dagtui.report.outcome import RunOutcome
    from dagtui.run.batch import BatchResult

#: the widest line of the run's summary (a terminal's or CI log's 80 columns)
SUMMARY_WIDTH = 80
#: how much of a judge's halt (often the provider's whole error text) a message shows
HALT_WIDTH = 200


def print_summary(outcome: RunOutcome, out: TextIO) -> None:
    """Write `outcome`'s summary to `out`, plain text (readable in CI logs and terminals)."""
    for line in outcome.summary_lines():
        out.write(for_terminal(line) + "\n")


def wrapped(text: str) -> str:
    """Each line of `text` longer than `SUMMARY_WIDTH` wrapped at a space, its rest indented
    under its start."""
    lines = []
    for line in text.split("\n"):
        if len(line) <= SUMMARY_WIDTH:
            lines.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        lines.append(textwrap.fill(line, SUMMARY_WIDTH, subsequent_indent=indent,
                                   break_on_hyphens=False, break_long_words=False))
    return "\n".join(lines)


def judge_error_lines(kinds: Mapping[str, int], retried: Mapping[str, int], items: str
                      ) -> tuple[str, str]:
    """The two lines on judge errors a run's summary prints (`items`: cases, or a suite's
    pairs): the errors by kind, not failures, and what was retried."""
    def by_kind(counts: Mapping[str, int]) -> str:
        return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none"

    return (f"judge errors ({items} without a verdict, not failures): {by_kind(kinds)}",
            f"retried and recovered or not, by kind: {by_kind(retried)}")


def seconds(value: float | None) -> str:
    """A latency as the node table shows it: `850ms`, `1.25s`, `-` for none."""
    return "-" if value is None else f"{value * 1000:.0f}ms" if value < 1 else f"{value:.2f}s"


def batch_lines(report: BatchResult) -> Iterator[str]:
    """A graph run's summary: counts, totals, the score histogram, per node figures (80
    columns at most: a node's verdicts wrapped under its line), judge errors and the first
    failing and erroring cases."""
    for line in _batch_lines(report):
        yield wrapped(line)


def _batch_lines(report: BatchResult) -> Iterator[str]:
    counts = report.counts()
    rate = counts.pass_rate
    yield ""
    yield (f"{report.graph_name}: {counted(counts.items, 'case')}, {counts.passed} passed, "
           f"{counts.failed} failed, {counts.errors} judge errors"
           + (f", {counts.not_run} not run" if counts.not_run else "")
           + (f" — pass rate {rate:.0%}" if rate is not None else ""))
    if report.halt:
        yield (f"{shorten(report.halt, HALT_WIDTH, flat='squash')}; "
               f"{counted(counts.not_run, 'case')} not run")
    cost = report.cost
    yield (f"calls {report.calls} (cache hits {report.cache_hits}), tokens {report.tokens}, "
           f"cost {'-' if cost is None else f'${cost:.4f}'}, wall {report.wall_time:.2f}s, "
           f"threshold {report.threshold:g}")
    hist = report.histogram()
    peak = max((c for _, _, c in hist), default=0) or 1
    yield ""
    yield "scores"
    for lo, hi, c in hist:
        bar = "█" * max(1 if c else 0, round(20 * c / peak))
        yield f"  {lo:.1f}–{hi:.1f} {c:4d} {bar}"
    yield ""
    yield f"{'node':18} reached  calls   tokens      cost     p50     p95"
    for nid, st in report.node_stats().items():
        # no priced call in the run: the total says `-`, so no node claims `0.0000`
        node_cost = f"{st.cost:9.4f}" if cost is not None else f"{'-':>9}"
        verdicts = ", ".join(f"{verdict_text(k)}:{v}" for k, v in st.verdicts.most_common())
        if st.errors:
            verdicts += (", " if verdicts else "") + ", ".join(
                f"error {k}:{v}" for k, v in st.errors.items())
        yield (f"  {shorten(nid, 16):16} {st.reached:7d} {st.calls:6d} "
               f"{st.prompt_tokens + st.completion_tokens:8d} {node_cost} "
               f"{seconds(st.latency_p50):>7} {seconds(st.latency_p95):>7}")
        if verdicts:
            yield f"    verdicts {verdicts}"
    kinds = report.error_kinds()
    retried = report.retried_kinds()
    if kinds or retried or report.corrections():
        yield ""
        errors, retries = judge_error_lines(kinds, retried, "cases")
        yield errors
        yield f"{retries}; corrective turns: {report.corrections()}"
    failing = report.first("fail")
    if failing:
        yield ""
        yield "failing cases"
        for r in failing:
            yield f"  {r.case}: score {r.score:.2f} — {r.describe_path()}"
    for r in report.first("error"):
        yield f"  error {r.case}: {r.error_kind}: {r.error}"

"""What a suite run prints and writes, in the terms of the shared writers: the summary's lines
(`dagtui.report.summary`), the JSON report's data (`dagtui.report.outputs`) and the JUnit
document (`dagtui.report.junit`) — the writers themselves are those of a graph run.

The table answers the questions gating raises: of all the cases, how many did each rule
actually judge, why were the others not judged (dependencies, filter, sample, budget), how
many passed, what did it cost, and how many judge calls did gating save compared with
running every rule on every case.
"""

from __future__ import annotations

import io
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console, JustifyMethod
from rich.table import Table

from dagtui.report.junit import JUnitCase, JUnitDocument, JUnitSuite
from dagtui.report.outcome import Counts
from dagtui.report.outputs import json_document_parts
from dagtui.report.summary import judge_error_lines, wrapped
from dagtui.report.write import write_outcome
from dagtui.suite.gating import (
    EVALUATED,
    FILTERED,
    OVER_BUDGET,
    PAUSED,
    SAMPLED_OUT,
    SKIPPED_DEPS,
    CaseRecord,
    SuiteResult,
)
from dagtui.text import counted, for_markup

GATE_WORDS = {
    SKIPPED_DEPS: "dependencies",
    FILTERED: "filters",
    SAMPLED_OUT: "sampling",
    OVER_BUDGET: "budgets",
    PAUSED: "paused rules",
}


def _cost(value: float | None) -> str:
    if value is None:
        return "?"
    return f"${value:.4f}" if value else "$0"


def summary_table(result: SuiteResult) -> Table:
    table = Table(title=f"Suite: {for_markup(result.suite)}", title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False, collapse_padding=True, padding=(0, 1))
    cols: list[tuple[str, JustifyMethod]] = [
        ("lvl", "right"), ("rule", "left"), ("kind", "left"), ("cases", "right"), ("deps✗", "right"), ("filter✗", "right"), ("sample✗", "right"),
        ("budget✗", "right"), ("eval", "right"), ("pass", "right"), ("<thr", "right"), ("err", "right"),
        ("calls", "right"), ("cost", "right"),
    ]
    for name, justify in cols:
        table.add_column(name, justify=justify, no_wrap=True, min_width=len(name))
    for st in result.rules.values():
        table.add_row(
            str(st.level), for_markup(st.rule),
            for_markup(st.kind) + (" (paused)" if st.status != "active" else ""),
            str(st.candidates),
            str(st.skipped_deps), str(st.filtered), str(st.sampled_out), str(st.over_budget),
            str(st.evaluated), str(st.passed), str(st.below_threshold),
            str(st.errors) if st.errors else "",
            str(st.calls), _cost(st.cost if st.cost_known else None),
        )
    table.caption = (
        "deps✗ no pass from a dependency · filter✗ filtered out · sample✗ sampled out · "
        "budget✗ over max_calls · pass: score > 0 (opens the gate) · <thr: below threshold"
    )
    table.caption_justify = "left"
    return table


def savings_lines(result: SuiteResult) -> list[str]:
    """Totals and the calls saved, saying whether the ungated figure was measured."""
    lines = [
        f"{counted(len(result.cases), 'case')}, {counted(len(result.rules), 'rule')} in "
        f"{counted(len(result.levels), 'level')}: {counted(result.calls, 'judge call')}, "
        f"cost {_cost(result.cost)}, {result.wall_time:.1f}s; "
        f"{counted(result.failures, 'judged case')} below threshold, "
        f"{counted(result.errors, 'error')}"
    ]
    if result.ungated_calls is None:
        return lines
    saved = result.calls_saved or 0
    pct = f" ({100 * saved / result.ungated_calls:.0f}%)" if result.ungated_calls else ""
    how = (
        "measured by an ungated run of every active rule on every case"
        if result.ungated_method == "measured"
        else "estimated from each rule's mean calls per evaluated case; "
        "--measure-ungated measures it"
    )
    lines.append(
        f"ungated: {result.ungated_calls} calls ({how}); saved {saved} calls{pct}"
    )
    parts = [f"{GATE_WORDS[k]} {v}" for k, v in result.saved_by.items() if v and k in GATE_WORDS]
    if parts:
        lines.append("saved by " + ", ".join(parts))
    return lines


#: the narrowest the rule table is laid out in (its 14 columns do not fit 80)
TABLE_WIDTH = 120


def summary_lines(result: SuiteResult) -> Iterator[str]:
    """The rule table (laid out by rich, as wide as the terminal and at least `TABLE_WIDTH`),
    then the totals, the calls saved and the judge errors, each wrapped at 80 columns."""
    buffer = io.StringIO()
    width = max(TABLE_WIDTH, shutil.get_terminal_size((TABLE_WIDTH, 24)).columns)
    Console(file=buffer, width=width, color_system=None).print(summary_table(result))
    yield from (line.rstrip() for line in buffer.getvalue().rstrip("\n").split("\n"))
    for line in savings_lines(result) + error_lines(result):
        yield wrapped(line)


def error_kinds(result: SuiteResult) -> Counter:
    """Evaluated (rule, case) pairs that ended in an error, by kind (429, 5xx, auth, ...)."""
    return Counter(rec.outcome.error_kind or "other" for st in result.rules.values()
                   for rec in st.records if rec.state == EVALUATED and rec.outcome is not None
                   and rec.outcome.error is not None)


def error_lines(result: SuiteResult, limit: int = 10) -> list[str]:
    """Judge errors by kind and message, and what was retried, as `dagtui run` prints them
    for a graph; then the pairs left not run, and why."""
    kinds = error_kinds(result)
    retried: Counter = Counter()
    shown: list[str] = []
    for st in result.rules.values():
        for rec in st.records:
            o = rec.outcome
            if o is None:
                continue
            for step in getattr(o.detail, "steps", None) or []:
                for call in step.calls:
                    retried.update(call.retry_kinds)
            if rec.state == EVALUATED and o.error is not None and len(shown) < limit:
                shown.append(f"  error {st.rule} {rec.case}: {o.error_kind or 'other'}: {o.error}")
    lines: list[str] = []
    if kinds or retried:
        lines += judge_error_lines(kinds, retried, "pairs")
    lines += shown
    if result.not_run:
        lines.append(f"{result.not_run} (rule, case) pair(s) not run: "
                     + ("; ".join(result.halts()) or "their judge halted"))
    return lines


def _outcome_dict(rec: CaseRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"case": rec.case, "state": rec.state}
    if rec.reason:
        out["reason"] = rec.reason
    if rec.outcome is not None:
        o = rec.outcome
        out.update({
            "score": o.score, "categorical": o.categorical, "passed": o.passed,
            "success": o.success, "calls": o.calls, "cost": o.cost, "error": o.error,
            "error_kind": o.error_kind,
        })
        detail = getattr(o.detail, "to_dict", None)
        if callable(detail):
            out["result"] = detail()
    return out


def to_json(result: SuiteResult, *, file: str | None = None,
            shard: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON report; `shard` (`--shard I/N`: index, count, the positions of its cases in
    the dataset) lets `dagtui merge` put the shards back together."""
    return {
        "suite": result.suite,
        "file": file,
        "cases": len(result.cases),
        "levels": result.levels,
        "totals": {
            "calls": result.calls,
            "cost": result.cost,
            "ungated_calls": result.ungated_calls,
            "ungated_method": result.ungated_method,
            "calls_saved": result.calls_saved,
            "saved_by": result.saved_by,
            "errors": result.errors,
            "judge_errors": dict(error_kinds(result)),
            "not_run": result.not_run,
            "halts": result.halts(),
            "failures": result.failures,
            "wall_time": result.wall_time,
        },
        "rules": [
            {**st.as_dict(), "cases": [_outcome_dict(r) for r in st.records]}
            for st in result.rules.values()
        ],
        **({"shard": shard} if shard else {}),
    }


@dataclass
class SuiteOutcome:
    """A suite run as the report writers read it (`dagtui.report.outcome.RunOutcome`): the
    result, the suite file its JSON report names, and its `--shard I/N` part."""

    result: SuiteResult
    file: str | None = None
    shard: dict[str, Any] | None = None

    def counts(self) -> Counts:
        return self.result.counts()

    def halts(self) -> list[str]:
        return self.result.halts()

    def exit_code(self) -> int:
        return self.result.exit_code()

    def junit(self) -> JUnitDocument:
        return junit_document(self.result)

    def json_parts(self, *, steps: bool = False) -> Iterator[str]:
        """The JSON report (a suite's always holds each graph rule's steps)."""
        return json_document_parts(to_json(self.result, file=self.file, shard=self.shard))

    def summary_lines(self) -> Iterator[str]:
        return summary_lines(self.result)


def write_json(result: SuiteResult, path: str | Path, *, file: str | None = None,
               shard: dict[str, Any] | None = None) -> None:
    """Write the JSON report atomically (`dagtui.report.write.write_outcome`)."""
    write_outcome(SuiteOutcome(result, file, shard), json_out=str(path))


def junit_document(result: SuiteResult) -> JUnitDocument:
    """One <testsuite> per rule, one <testcase> per case: gated cases are <skipped> with the
    gate that stopped them, evaluated ones fail below the rule graph's threshold."""
    suites = [JUnitSuite(st.rule, st.counts(),
                         [_junit_case(f"{result.suite}.{st.rule}", rec) for rec in st.records])
              for st in result.rules.values()]
    return JUnitDocument(result.suite, suites)


def _junit_case(classname: str, rec: CaseRecord) -> JUnitCase:
    status, o = rec.status, rec.outcome
    if o is None or status in ("skipped", "not_run"):
        return JUnitCase(classname, rec.case, status, message=rec.reason or rec.state)
    if status == "error":
        return JUnitCase(classname, rec.case, status, message=o.error or "", kind=o.error_kind,
                         time=0.0)
    shown = o.categorical if o.score is None else f"{o.score:g}"
    message = f"score {shown}" if status == "fail" else ""
    return JUnitCase(classname, rec.case, status, message=message, time=0.0)


def write_junit(result: SuiteResult, path: str | Path) -> None:
    """Write the JUnit XML atomically (`dagtui.report.write.write_outcome`)."""
    write_outcome(SuiteOutcome(result), junit=str(path))

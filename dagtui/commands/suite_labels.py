"""`dagtui test SUITE.toml`: a suite's logic test against human labels, printed.

The test itself is the core's (`dagtui.suite.labels`: every rule answered from the case's
labels, gates deciding which rules run, as in `dagtui run`); this module loads the suite
and its labelled cases as `dagtui run` does, runs the test and prints it. Exit codes as for
`dagtui test GRAPH`: 0 every case passed, 1 a case failed or the suite is invalid, 2 the
suite or cases file is unreadable.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, TextIO

from dagtui.commands.test import warn_unlabelled
from dagtui.exitcodes import ExitCode
from dagtui.graph.checks import PythonConsent
from dagtui.suite.labels import SuiteLabelTestResult
from dagtui.text import counted, for_terminal

if TYPE_CHECKING:
    from dagtui.graph.analysed import CheckedGraph


def print_report(report: SuiteLabelTestResult, path: str, cases: list[Any], out: TextIO, *,
                 verbose: bool = False) -> None:
    """The summary line, each failing case (every case with `verbose`) with the path each
    rule took and what is wrong, then the per-rule agreement table; names, labels and paths
    pass `for_terminal` (shown, never obeyed)."""

    def w(text: str) -> None:
        out.write(for_terminal(text))

    total = len(report.cases)
    w(f"{path}: {counted(total, 'case')}, {total - report.failures} passed, "
      f"{report.failures} failed (labels judge, {report.calls} LLM calls)\n")
    for name, case in zip(report.cases, cases, strict=True):
        found = report.problems[name]
        if not found and not verbose:
            continue
        where = getattr(case, "where", "")
        w(f"  {'FAIL' if found else 'PASS'} {name}" + (f"  ({where})" if where else "") + "\n")
        for line in report.paths[name]:
            w(f"       {line}\n")
        for line in found:
            w(f"       ✘ {line}\n")
    w("  rule                 ran  not run  labelled  check agrees  unused labels\n")
    for rid, t in report.tallies.items():
        checks = f"{t.check_agree}/{t.check_agree + t.check_disagree}" if (
            t.check_agree + t.check_disagree) else "-"
        w(f"  {rid[:20]:20} {t.ran:4d} {t.gated:8d} {t.labelled:9d} {checks:>13} "
          f"{t.unused:14d}\n")


def labels_test_command(path: str, cases_arg: str | None, out: TextIO, *, verbose: bool = False,
                        python: PythonConsent | None = None, read: CheckedGraph | None = None,
                        lenient: bool = False) -> int:
    """`dagtui test SUITE.toml [--cases FILE]`; returns the exit code. `read`: the suite
    file as `dagtui test` read it to learn it is a suite (not read again). Bad labels are
    exit 2 before the test, or with `lenient` warnings, counted after the table."""
    from dagtui.commands.label_opts import refuse, warn
    from dagtui.commands.suite_run import load_suite_and_cases
    from dagtui.labels.check import LabelError, ignored_summary
    from dagtui.suite.labels import check_labels

    load, cases, code = load_suite_and_cases(path, cases_arg, "dagtui test", labels=True,
                                             read=read)
    if load is None or cases is None:
        return code
    warn_unlabelled(cases, path, "[suite].labels")
    try:
        report = asyncio.run(check_labels(load, cases, python=python, lenient=lenient))
    except LabelError as exc:
        return refuse(exc.problems)
    warn(report.ignored)
    print_report(report, path, cases, out, verbose=verbose)
    if report.ignored:
        out.write(f"{ignored_summary(report.ignored)}\n")
    return ExitCode.FAILURES if report.failures else ExitCode.OK


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

from ..checks import PythonConsent
from ..exitcodes import ExitCode
from ..suite.labels import LabelsReport
from ..text import for_terminal
from .test import warn_unlabelled

if TYPE_CHECKING:
    from ..checked import CheckedGraph


def print_report(report: LabelsReport, path: str, cases: list[Any], out: TextIO, *,
                 verbose: bool = False) -> None:
    """The summary line, each failing case (every case with `verbose`) with the path each
    rule took and what is wrong, then the per-rule agreement table; names, labels and paths
    pass `for_terminal` (shown, never obeyed)."""

    def w(text: str) -> None:
        out.write(for_terminal(text))

    total = len(report.cases)
    w(f"{path}: {total} cases, {total - report.failures} passed, {report.failures} "
      f"failed (labels judge, {report.calls} LLM calls)\n")
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
                        python: PythonConsent | None = None, read: CheckedGraph | None = None
                        ) -> int:
    """`dagtui test SUITE.toml [--cases FILE]`; returns the exit code. `read`: the suite
    file as `dagtui test` read it to learn it is a suite (not read again)."""
    from ..suite.labels import check_labels
    from .suite_run import load_suite_and_cases

    load, cases, code = load_suite_and_cases(path, cases_arg, "dagtui test", labels=True,
                                             read=read)
    if load is None or cases is None:
        return code
    warn_unlabelled(cases, path, "[suite].labels")
    report = asyncio.run(check_labels(load, cases, python=python))
    print_report(report, path, cases, out, verbose=verbose)
    return ExitCode.FAILURES if report.failures else ExitCode.OK


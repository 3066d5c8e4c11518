"""A finished run's reports written: its JUnit XML and its JSON, for a graph run and a
suite run alike (`dagtui.report.outcome.RunOutcome`).

Its own module, above the JUnit writer (`dagtui.report.junit`) and the file checks and
atomic writes (`dagtui.report.outputs`) it puts together, so neither of those imports the
other's caller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagtui.report.junit import junit_parts
from dagtui.report.outputs import write_report

if TYPE_CHECKING:
    from dagtui.report.outcome import RunOutcome


def write_outcome(outcome: RunOutcome, *, junit: str | None = None,
                  json_out: str | None = None) -> None:
    """Write a finished run's JUnit XML and JSON report (with every step), where asked, for
    a graph run and a suite run alike. Raises `OSError` when a file cannot be written."""
    if junit:
        write_report(junit, junit_parts(outcome.junit()))
    if json_out:
        write_report(json_out, outcome.json_parts(steps=True))

"""The shared core of what a run found, for a graph run and a suite run alike.

A graph run judges cases; a suite run judges (rule, case) pairs, some of which a gate stopped
before any judge saw them. Both end each item in one of the statuses below, and everything a
report says about the run as a whole — the JUnit counts, the exit code, the summary's
headline — is a function of how many items ended in each. `Counts` holds those figures
once, so the exit rule and the JUnit header are written once (`dagtui.report.junit`).

`RunOutcome` is the shape every writer reads (`dagtui.report.junit`, `dagtui.report.summary`,
`dagtui.report.write.write_outcome`): the batch of one graph (`dagtui.run.batch.BatchResult`)
and a suite's result (`dagtui.suite.gating.SuiteResult`) each give their own items in
the writers' terms, so no writer asks which kind of run it holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from dagtui.exitcodes import ExitCode

if TYPE_CHECKING:
    from dagtui.report.junit import JUnitDocument

#: how one case of a graph run ended: a verdict (pass, fail), a judge error, never judged
#: because the judge halted (not_run), or ended at a node whose judge could not tell and
#: that declared `unsure = "unscored"` (unscored: neither a pass nor a fail)
CaseStatus = Literal["pass", "fail", "error", "not_run", "unscored"]
#: how one item of any run ended: a case's status, or stopped by a suite's gate before any
#: judge saw it (skipped)
Status = Literal[CaseStatus, "skipped"]


@dataclass
class Counts:
    """How many items of a run ended in each status."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    not_run: int = 0
    skipped: int = 0
    unscored: int = 0

    def add(self, status: str, n: int = 1) -> None:
        """Count `n` more items that ended in `status`."""
        name = _FIELD[status]
        setattr(self, name, getattr(self, name) + n)

    @property
    def items(self) -> int:
        """Every item, whatever it ended in (JUnit's `tests`)."""
        return (self.passed + self.failed + self.errors + self.not_run + self.skipped
                + self.unscored)

    @property
    def pass_rate(self) -> float | None:
        """Passed of the items with a verdict; None when none has one."""
        judged = self.passed + self.failed
        return self.passed / judged if judged else None

    def exit_code(self, *, fail_on_unscored: bool = False) -> int:
        """3 when the judge halted and items were left not run (the run is incomplete,
        whatever it found so far); else 1 when an item failed (a verdict on the system
        under test wins over judge errors), or was unscored under `--fail-on-unscored`;
        else 3 when an item ended in a judge error; else 0."""
        if self.not_run:
            return ExitCode.JUDGE
        if self.failed or fail_on_unscored and self.unscored:
            return ExitCode.FAILURES
        return ExitCode.JUDGE if self.errors else ExitCode.OK


_FIELD = {"pass": "passed", "fail": "failed", "error": "errors", "not_run": "not_run",
          "skipped": "skipped", "unscored": "unscored"}


class RunOutcome(Protocol):
    """What the report writers read from a finished run (graph or suite)."""

    def counts(self) -> Counts:
        """How many items ended in each status."""
        ...

    def halts(self) -> list[str]:
        """Why judges halted, one line each (none when no judge did)."""
        ...

    def exit_code(self) -> int: ...

    def junit(self) -> JUnitDocument:
        """The run as a JUnit document (`dagtui.report.junit`)."""
        ...

    def json_parts(self, *, steps: bool = False) -> Iterator[str]:
        """The JSON report's text in pieces (`dagtui.report.outputs.json_document_parts`)."""
        ...

    def summary_lines(self) -> Iterator[str]:
        """The summary, a line at a time, for `dagtui.report.summary.print_summary`."""
        ...

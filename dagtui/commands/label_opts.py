"""`--lenient`: how `calibrate`, `test` and `run` treat bad labels (`dagtui.labels.check`).

Without it a bad label is an error: every one is printed with its file, line and case, and
the command exits 2 before any judge call. With it each is a warning on stderr, the label is
dropped (the run goes on as if the case never carried it), and the count is part of the
summary. The printing lives here so the three commands word it alike.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dagtui.exitcodes import ExitCode
from dagtui.labels.check import SHOWN, LabelError, LabelProblem, LenientCases, check_cases, scan
from dagtui.text import say


def add_lenient_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lenient", action="store_true",
                   help="bad labels (an unknown node, a verdict not among the node's, a label "
                        "of the wrong shape or range, a label off the case's labelled path) "
                        "are warnings and are ignored, instead of an exit 2")


def refuse(problems: list[LabelProblem]) -> int:
    """Every bad label on stderr, and the exit code that says "fix your input"."""
    say(f"dagtui: {LabelError(problems)}", file=sys.stderr)
    return ExitCode.USAGE


def warn(problems: list[LabelProblem]) -> None:
    """One warning line per ignored label on stderr, the first `SHOWN` of them (a dataset
    labelled against another graph must not flood a CI log; the summary counts them all)."""
    for p in problems[:SHOWN]:
        say(f"dagtui: warning: label ignored: {p.format()}", file=sys.stderr)
    if len(problems) > SHOWN:
        say(f"dagtui: warning: ... and {len(problems) - SHOWN} more labels ignored",
            file=sys.stderr)


def checked_case_list(graph: Any, cases: list[Any], lenient: bool
                      ) -> tuple[list[Any], list[LabelProblem], int]:
    """(the cases to use, the labels ignored, exit code): a held list of cases, checked."""
    try:
        kept, ignored = check_cases(graph, cases, lenient=lenient)
    except LabelError as exc:
        return cases, [], refuse(exc.problems)
    warn(ignored)
    return kept, ignored, ExitCode.OK


def checked_case_stream(graph: Any, cases: Any, lenient: bool
                        ) -> tuple[Any, list[LabelProblem], int]:
    """The same for cases read per pass (`dagtui run`): one pass finds the problems; lenient,
    every later pass reads the cases without their bad labels."""
    problems = scan(graph, cases)
    if not problems:
        return cases, [], ExitCode.OK
    if not lenient:
        return cases, problems, refuse(problems)
    warn(problems)
    return LenientCases(graph, cases), problems, ExitCode.OK

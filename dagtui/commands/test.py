"""`dagtui test GRAPH...`: check a graph's logic against human labels, with zero LLM calls.

Every judgement node answers with the label the case gives it (`expected`), check nodes run
in code, and the resulting score is compared with the case's `expected_score`. A mismatch
fails with the path the graph took, the check nodes whose code verdict disagreed with the
label, and the labels the path never used (a hint at where the graph and the human part).
A per-node agreement table follows. Exit codes: 0 all pass, 1 any failure (or invalid
graph), 2 unreadable graph or cases file. A suite file (`dagtui.suite.is_suite_file`) is
tested by `dagtui.suite.labels`: labels per rule, gates checked too. The test itself is the
core's (`dagtui.labeltest`); this module finds the files and prints.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from ..checked import CheckedGraph
from ..checks import PythonConsent
from ..exitcodes import ExitCode
from ..text import for_terminal, say
from .python_opts import add_python_options, python_consent
from .run import load_graph_and_cases


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "test", help="logic test: the case labels answer each node, expected_score is checked",
        description="Run each case with the labels judge (no LLM calls) and compare scores.",
    )
    p.add_argument("graphs", nargs="+", metavar="GRAPH",
                   help="graph or suite TOML file(s), or directories (every graph below, "
                   "as validate finds them)")
    p.add_argument("--cases", help="cases file (default: each graph's [metric].cases)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case's path")
    add_python_options(p)
    p.set_defaults(func=run)


def warn_unlabelled(cases: Any, path: str, setting: str) -> None:
    """One line up front when no case carries labels: every case would fail with "no
    label", when the real mistake is the file (a run's cases, not the labelled ones).
    `cases`: a list, or a `CaseStream` (read only up to its first labelled case)."""
    if cases and not any(getattr(case, "expected", None) for case in cases):
        say(f"dagtui test: {path}: none of the {len(cases)} cases has labels (\"expected\"); "
              f"a logic test needs labelled cases: label them, or point --cases (or {setting}) "
              "at a labelled file", file=sys.stderr)


def _targets(args: list[str], cases_arg: str | None, read: dict[str, CheckedGraph]
             ) -> tuple[list[str], int]:
    """The files to test and the exit code so far. A directory means every graph below it,
    found as `dagtui validate DIR` finds them (cases and suite files skipped); a graph found
    that way without `[metric].cases` (a suite's rule graph, say) is skipped with a note,
    while a file named on the command line is always tested. `read` gets the files the
    search already read (tested without reading them again)."""
    from .validate import collect

    named = {a for a in args if not os.path.isdir(a)}
    found: dict[Path, CheckedGraph] = {}
    files, problems = collect(args, found)
    for problem in problems:
        say(problem, file=sys.stderr)
    out: list[str] = []
    for f in files:
        path = str(f)
        if f in found:
            read[path] = found[f]
        if path not in named and cases_arg is None:
            graph = found[f].graph if f in found else CheckedGraph.read(f).graph
            if graph is not None and not graph.metric.cases:
                say(f"{path}: skipped: no [metric].cases (name a cases file there, or test "
                      "it with --cases FILE)")
                continue
        out.append(path)
    return out, ExitCode.USAGE if problems else ExitCode.OK


def run(args: argparse.Namespace) -> int:
    python = python_consent(args)

    read: dict[str, CheckedGraph] = {}
    paths, worst = _targets(args.graphs, args.cases, read)
    for path in paths:
        # read and parsed once, for both questions (a directory's files by the search)
        checked = read.pop(path, None) or CheckedGraph.read(path)
        if checked.is_suite:  # rules gated on each other: labels per rule
            from .suite_labels import labels_test_command

            code = labels_test_command(path, args.cases, sys.stdout, verbose=args.verbose,
                                       python=python, read=checked)
        else:
            code = test_graph(path, args.cases, sys.stdout, verbose=args.verbose,
                              python=python, checked=checked)
        if code == ExitCode.USAGE or (code == ExitCode.FAILURES and worst != ExitCode.USAGE):
            worst = code
    return worst


def test_graph(path: str, cases_arg: str | None, out: TextIO, *, verbose: bool = False,
               python: PythonConsent | None = None, checked: CheckedGraph | None = None
               ) -> int:
    """The labels test of the graph at `path` (`checked`: that file, already read)."""
    from ..cases import CaseError
    from ..labeltest import check_graph_labels

    checked = checked or CheckedGraph.read(path)
    graph, cases, code = load_graph_and_cases(checked, cases_arg, lazy=True)
    if code:
        return code
    warn_unlabelled(cases, path, "[metric].cases")
    # the per-case lines come after the counts, which are known only at the end: they wait
    # in a spool (memory up to a megabyte, then a temporary file), never in a list
    with tempfile.SpooledTemporaryFile(max_size=1 << 20, mode="w+",
                                       encoding="utf-8", errors="surrogateescape") as spool:

        def shown(case: Any, result: Any, problems: list[str]) -> None:
            if not problems and not verbose:
                return
            score = "  -  " if result.score is None else f"{result.score:.2f}"
            lines = [f"  {'FAIL' if problems else 'PASS'} {score} {case.name}  ({case.where})",
                     f"       path: {result.describe_path()}"]
            lines.extend(f"       {p}" for p in problems)
            for line in lines:  # case names, labels, reasons: shown, never run by the terminal
                spool.write(for_terminal(line) + "\n")

        try:  # the test's engine trusts the check made above
            report = asyncio.run(check_graph_labels(checked, cases, python=python,
                                                    on_case=shown))
        except CaseError as exc:
            say(f"dagtui: {exc}", file=sys.stderr)
            return ExitCode.USAGE
        total, failures = report.cases, report.failures
        say(f"{path}: {total} cases, {total - failures} passed, {failures} failed "
            "(labels judge, 0 LLM calls)", file=out)
        spool.seek(0)
        shutil.copyfileobj(spool, out)
    say(agreement_table(graph, report.agree), file=out, end="")
    return ExitCode.FAILURES if failures else ExitCode.OK


def agreement_table(graph: Any, agree: dict[str, Counter]) -> str:
    """The per-node agreement counts of a labels test, one row per node of `graph`."""
    rows = ["  node                 reached  labelled  check agrees  unused labels\n"]
    for nid in graph.nodes:
        t = agree.get(nid, Counter())
        checks = (f"{t['agree']}/{t['agree'] + t['disagree']}"
                  if t["agree"] + t["disagree"] else "-")
        rows.append(f"  {nid[:20]:20} {t['reached']:7d} {t['labelled']:9d} {checks:>13} "
                    f"{t['unused']:14d}\n")
    return "".join(rows)

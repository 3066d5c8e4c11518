"""`dagtui test GRAPH...`: check a graph's logic against human labels, with zero LLM calls.

Every judgement node answers with the label the case gives it (`expected`), check nodes run
in code, and the resulting score is compared with the case's `expected_score`. A mismatch
fails with the path the graph took, the check nodes whose code verdict disagreed with the
label, and the labels the path never used (a hint at where the graph and the human part).
A per-node agreement table follows. Exit codes: 0 all pass, 1 any failure (or invalid
graph), 2 unreadable graph or cases file, or a bad label (`dagtui.labels.check`: `--lenient`
ignores those with a warning each, counted after the table). A suite file is the other kind
of target (`test_suite`): labels per rule, gates checked too (`dagtui.suite.labels`). The
tests themselves are the core's (`dagtui.run.labeltest`, `dagtui.suite.labels`); this module
finds the files and prints.
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

from dagtui.commands.label_opts import add_lenient_option, checked_case_stream
from dagtui.commands.python_opts import add_python_options, python_consent
from dagtui.commands.run import load_graph_and_cases
from dagtui.exitcodes import ExitCode
from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.checks import PythonConsent
from dagtui.suite.labels import SuiteLabelTestResult
from dagtui.text import counted, for_terminal, say


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
    add_lenient_option(p)
    add_python_options(p)
    p.set_defaults(func=run)


def warn_unlabelled(cases: Any, path: str, setting: str) -> None:
    """One line up front when no case carries labels: every case would fail with "no
    label", when the real mistake is the file (a run's cases, not the labelled ones).
    `cases`: a list, or a `CaseStream` (read only up to its first labelled case)."""
    if cases and not any(getattr(case, "expected", None) for case in cases):
        which = "its one case has no" if len(cases) == 1 else f"none of the {len(cases)} cases has"
        say(f"dagtui test: {path}: {which} labels (\"expected\"); "
              f"a logic test needs labelled cases: label them, or point --cases (or {setting}) "
              "at a labelled file", file=sys.stderr)


def warn_unjudgeable(checked: CheckedGraph, cases: list[Any], shown: int = 10) -> None:
    """A warning for each case lacking a field a judgement node reads: the labels judge
    answers without reading them, so the logic test passes, but `dagtui run` (a model
    judge) would refuse the case before its first call."""
    from dagtui.judges.base import CallbackJudge
    from dagtui.run.engine import Engine

    engine = Engine(checked, CallbackJudge(lambda ask: None))  # a judge that reads params
    lacking = [f"{case.where}: case {case.name!r}: " + "; ".join(missing)
               for case in cases if (missing := engine.missing_inputs(case))]
    for line in lacking[:shown]:
        say(f"dagtui test: warning: {line} (the labels judge does not read it; dagtui run "
            "would refuse the case)", file=sys.stderr)
    if len(lacking) > shown:
        say(f"dagtui test: warning: ... and {len(lacking) - shown} more cases like these",
            file=sys.stderr)


def _targets(args: list[str], cases_arg: str | None, read: dict[str, CheckedGraph]
             ) -> tuple[list[str], int]:
    """The files to test and the exit code so far. A directory means every graph and suite
    below it, found as `dagtui validate DIR` finds them (cases files skipped); a graph found
    that way without `[metric].cases` is skipped with a note (a suite's rule graph: tested
    with its suite's labels), while a file named on the command line is always tested.
    `read` gets the files the search already read (tested without reading them again)."""
    from dagtui.commands.validate import collect

    named = {a for a in args if not os.path.isdir(a)}
    found: dict[Path, CheckedGraph] = {}
    files, problems = collect(args, found)
    for problem in problems:
        say(problem, file=sys.stderr)
    rules = _rule_graphs([f for f, checked in found.items() if checked.is_suite])
    out: list[str] = []
    for f in files:
        path = str(f)
        if f in found:
            read[path] = found[f]
        if path not in named and cases_arg is None:
            checked = found[f] if f in found else CheckedGraph.read(f)
            graph = None if checked.is_suite else checked.graph  # a suite names its labels
            if graph is not None and not graph.metric.cases:
                suite = rules.get(f.resolve())
                say(f"{path}: skipped: a rule of the suite {suite}, tested with its labels"
                    if suite is not None else
                    f"{path}: skipped: no [metric].cases (name a cases file there, or test "
                      "it with --cases FILE)")
                continue
        out.append(path)
    return out, ExitCode.USAGE if problems else ExitCode.OK


def _rule_graphs(suites: list[Path]) -> dict[Path, Path]:
    """The graph files (resolved) that rules of `suites` name, each with its suite file."""
    from dagtui.suite.loader import load_suite_file, resolve_graph_path

    out: dict[Path, Path] = {}
    for suite_file in suites:
        suite = load_suite_file(suite_file, check_graphs=False).suite
        if suite is None:
            continue
        for rule in suite.rules.values():
            if rule.graph:
                out.setdefault(resolve_graph_path(suite, rule).resolve(), suite_file)
    return out


def run(args: argparse.Namespace) -> int:
    python = python_consent(args)
    lenient = bool(args.lenient)

    read: dict[str, CheckedGraph] = {}
    paths, worst = _targets(args.graphs, args.cases, read)
    for path in paths:
        # read and parsed once, for both questions (a directory's files by the search)
        checked = read.pop(path, None) or CheckedGraph.read(path)
        test = test_suite if checked.is_suite else test_graph  # a suite: labels per rule
        code = test(path, args.cases, sys.stdout, verbose=args.verbose, python=python,
                    checked=checked, lenient=lenient)
        if code == ExitCode.USAGE or (code == ExitCode.FAILURES and worst != ExitCode.USAGE):
            worst = code
    return worst


def test_graph(path: str, cases_arg: str | None, out: TextIO, *, verbose: bool = False,
               python: PythonConsent | None = None, checked: CheckedGraph | None = None,
               lenient: bool = False) -> int:
    """The labels test of the graph at `path` (`checked`: that file, already read); bad
    labels are exit 2 before the test runs, or with `lenient` ignored and counted."""
    from dagtui.labels.check import ignored_summary
    from dagtui.run.cases import CaseError
    from dagtui.run.labeltest import check_graph_labels

    checked = checked or CheckedGraph.read(path)
    graph, cases, code = load_graph_and_cases(checked, cases_arg, lazy=True)
    if code:
        return code
    cases, ignored, code = checked_case_stream(graph, cases, lenient)
    if code:
        return code
    warn_unlabelled(cases, path, "[metric].cases")
    warn_unjudgeable(checked, cases)
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
        say(f"{path}: {counted(total, 'case')}, {total - failures} passed, {failures} failed "
            "(labels judge, 0 LLM calls)", file=out)
        spool.seek(0)
        shutil.copyfileobj(spool, out)
    say(agreement_table(graph, report.agree), file=out, end="")
    if ignored:
        say(ignored_summary(ignored), file=out)
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


def print_suite_report(report: SuiteLabelTestResult, path: str, cases: list[Any], out: TextIO, *,
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


def test_suite(path: str, cases_arg: str | None, out: TextIO, *, verbose: bool = False,
               python: PythonConsent | None = None, checked: CheckedGraph | None = None,
               lenient: bool = False) -> int:
    """`dagtui test SUITE.toml [--cases FILE]`: a suite's logic test against human labels
    (`dagtui.suite.labels`: every rule answered from the case's labels, gates deciding
    which rules run, as in `dagtui run`); returns the exit code. `checked`: the suite file
    as `dagtui test` read it to learn it is a suite (not read again). Bad labels are exit 2
    before the test, or with `lenient` warnings, counted after the table."""
    from dagtui.commands.label_opts import refuse, warn
    from dagtui.commands.run import load_suite_and_cases
    from dagtui.labels.check import LabelError, ignored_summary
    from dagtui.suite.labels import check_labels

    load, cases, code = load_suite_and_cases(path, cases_arg, "dagtui test", labels=True,
                                             read=checked)
    if load is None or cases is None:
        return code
    warn_unlabelled(cases, path, "[suite].labels")
    try:
        report = asyncio.run(check_labels(load, cases, python=python, lenient=lenient))
    except LabelError as exc:
        return refuse(exc.problems)
    warn(report.ignored)
    print_suite_report(report, path, cases, out, verbose=verbose)
    if report.ignored:
        out.write(f"{ignored_summary(report.ignored)}\n")
    return ExitCode.FAILURES if report.failures else ExitCode.OK


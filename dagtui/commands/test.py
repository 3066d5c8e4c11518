"""`dagtui test GRAPH...`: check a graph's logic against human labels, with zero LLM calls.

Every judgement node answers with the label the case gives it (`expected`), check nodes run
in code, and the resulting score is compared with the case's `expected_score`. A mismatch
fails with the path the graph took, the check nodes whose code verdict disagreed with the
label, and the labels the path never used (a hint at where the graph and the human part).
A per-node agreement table follows. Exit codes: 0 all pass, 1 any failure (or invalid
graph), 2 unreadable graph or cases file. A suite file (`dagtui.suite.is_suite_file`) is
tested by `dagtui.suite.labels`: labels per rule, gates checked too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections import Counter
from typing import Any, TextIO

from ..checks import PythonConsent
from ..diagnostics import escape_controls
from ..exitcodes import ExitCode
from .python_opts import add_python_options, python_consent
from .run import load_graph_and_cases

TOLERANCE = 1e-6


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


def show_label(value: Any) -> str:
    """A label as messages print it: true/false as in TOML, strings quoted."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return repr(value) if isinstance(value, str) else str(value)


def warn_unlabelled(cases: list[Any], path: str, setting: str) -> None:
    """One line up front when no case carries labels: every case would fail with "no
    label", when the real mistake is the file (a run's cases, not the labelled ones)."""
    if cases and not any(getattr(case, "expected", None) for case in cases):
        print(f"dagtui test: {path}: none of the {len(cases)} cases has labels (\"expected\"); "
              f"a logic test needs labelled cases: label them, or point --cases (or {setting}) "
              "at a labelled file", file=sys.stderr)


def _targets(args: list[str], cases_arg: str | None) -> tuple[list[str], int]:
    """The files to test and the exit code so far. A directory means every graph below it,
    found as `dagtui validate DIR` finds them (cases and suite files skipped); a graph found
    that way without `[metric].cases` (a suite's rule graph, say) is skipped with a note,
    while a file named on the command line is always tested."""
    from ..loader import load_file
    from .validate import collect

    named = {a for a in args if not os.path.isdir(a)}
    files, problems = collect(args)
    for problem in problems:
        print(problem, file=sys.stderr)
    out: list[str] = []
    for f in files:
        path = str(f)
        if path not in named and cases_arg is None:
            graph = load_file(f).graph
            if graph is not None and not graph.metric.cases:
                print(f"{path}: skipped: no [metric].cases (name a cases file there, or test "
                      "it with --cases FILE)")
                continue
        out.append(path)
    return out, ExitCode.USAGE if problems else ExitCode.OK


def run(args: argparse.Namespace) -> int:
    from ..suite.loader import is_suite_file

    python = python_consent(args)

    paths, worst = _targets(args.graphs, args.cases)
    for path in paths:
        if is_suite_file(path):  # rules gated on each other: labels per rule
            from ..suite.labels import labels_test_command

            code = labels_test_command(path, args.cases, sys.stdout, verbose=args.verbose,
                                       python=python)
        else:
            code = test_graph(path, args.cases, sys.stdout, verbose=args.verbose,
                              python=python)
        if code == ExitCode.USAGE or (code == ExitCode.FAILURES and worst != ExitCode.USAGE):
            worst = code
    return worst


def test_graph(path: str, cases_arg: str | None, out: TextIO, *, verbose: bool = False,
               python: PythonConsent | None = None) -> int:
    from ..cases import CaseError
    from ..engine import Engine
    from ..judges.labels import LabelsJudge

    graph, cases, code = load_graph_and_cases(path, cases_arg)
    if code:
        return code
    warn_unlabelled(cases, path, "[metric].cases")
    engine = Engine(graph, LabelsJudge(), python=python)
    try:
        results = asyncio.run(_run_all(engine, cases))
    except CaseError as exc:
        print(f"dagtui: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    failures = 0
    agree: dict[str, Counter] = {nid: Counter() for nid in graph.nodes}
    lines: list[str] = []
    for case, result in zip(cases, results, strict=True):
        problems = case_problems(graph, case, result, agree)
        ok = not problems
        failures += 0 if ok else 1
        score = "  -  " if result.score is None else f"{result.score:.2f}"
        if ok and not verbose:
            continue
        lines.append(f"  {'PASS' if ok else 'FAIL'} {score} {case.name}  ({case.where})")
        lines.append(f"       path: {result.describe_path()}")
        lines.extend(f"       {p}" for p in problems)
    total = len(cases)
    out.write(f"{path}: {total} cases, {total - failures} passed, {failures} failed "
              f"(labels judge, 0 LLM calls)\n")
    for line in lines:  # case names, labels, reasons: shown, never run by the terminal
        out.write(escape_controls(line) + "\n")
    out.write(escape_controls(agreement_table(graph, agree), keep="\n"))
    return ExitCode.FAILURES if failures else ExitCode.OK


async def _run_all(engine: Any, cases: list[Any]) -> list[Any]:
    from ..batch import preflight_all

    preflight_all(engine, cases)
    return [await engine.run(case, check=False) for case in cases]


def case_problems(graph: Any, case: Any, result: Any, agree: dict[str, Counter]) -> list[str]:
    """Why a case fails its logic test (empty when it passes); updates `agree`."""
    problems: list[str] = []
    expected = case.expected or {}
    reached = {s.node for s in result.steps}
    for step in result.steps:
        tally = agree.setdefault(step.node, Counter())
        tally["reached"] += 1
        if step.node in expected:
            tally["labelled"] += 1
            if step.source == "check" and step.error is None:
                if step.answer == expected[step.node]:
                    tally["agree"] += 1
                else:
                    tally["disagree"] += 1
                    problems.append(
                        f"check '{step.node}' answered {show_label(step.answer)} in code "
                        f"({step.reason}); the label says {show_label(expected[step.node])}")
    for nid in expected:
        if nid not in reached:
            agree.setdefault(nid, Counter())["unused"] += 1
    if result.error is not None:
        problems.insert(0, f"error: {result.error}")
        return problems
    want = case.expected_score
    if want is not None and abs(result.score - want) > TOLERANCE:
        problems.insert(0, f"score {result.score:.2f} but expected_score is {want:.2f}")
        unused = [nid for nid in expected if nid not in reached]
        if unused:
            problems.append("labels for nodes this path never reached: "
                            + ", ".join(f"{n}={show_label(expected[n])}" for n in unused))
        return problems
    # a passing score with disagreeing checks still fails: the path is not the one labelled
    return problems


def agreement_table(graph: Any, agree: dict[str, Counter]) -> str:
    rows = ["  node                 reached  labelled  check agrees  unused labels\n"]
    for nid in graph.nodes:
        t = agree.get(nid, Counter())
        checks = (f"{t['agree']}/{t['agree'] + t['disagree']}"
                  if t["agree"] + t["disagree"] else "-")
        rows.append(f"  {nid[:20]:20} {t['reached']:7d} {t['labelled']:9d} {checks:>13} "
                    f"{t['unused']:14d}\n")
    return "".join(rows)

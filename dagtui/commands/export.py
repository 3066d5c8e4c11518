"""`dagtui export GRAPH --to FORMAT [-o FILE]`: DeepEval JSON/Python, Mermaid, DOT.

The graph must be free of errors first (the same diagnostics `validate` prints); then the
DeepEval formats refuse, with a message naming the nodes, anything DeepEval cannot express.
Exit codes: 0 written, 1 graph errors or refused, 2 unreadable graph or unwritable output.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dagtui.diagnostics import Diagnostic, unreadable
from dagtui.exitcodes import ExitCode
from dagtui.graph.model import Graph
from dagtui.text import say

FORMATS = ("deepeval-json", "deepeval-python", "mermaid", "dot")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="export a graph to DeepEval (JSON or Python), Mermaid or DOT",
        description="Export a graph. DeepEval formats refuse what DeepEval cannot express "
        "(check nodes, several roots with a judgement root, ...) and name the nodes.",
    )
    p.add_argument("graph", help="graph file (TOML)")
    p.add_argument("--to", dest="fmt", required=True, choices=FORMATS, metavar="FORMAT",
                   help=f"one of: {', '.join(FORMATS)}")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dagtui.export import DEEPEVAL_FORMATS, ExportRefused, deepeval_notes, export_graph
    from dagtui.suite.sniff import is_suite_file

    graph, diagnostics = check_graph(args.graph)
    errors = [d for d in diagnostics if d.is_error]
    if not unreadable(errors) and is_suite_file(args.graph):  # not "unknown key 'suite'"
        say(f"dagtui export: {args.graph} is a suite file; export takes one graph file "
              "(export each rule's graph; `dagtui edit` draws the rule DAG)", file=sys.stderr)
        return ExitCode.USAGE
    for d in errors:
        say(d.format(), file=sys.stderr)
    if unreadable(errors):
        return ExitCode.USAGE  # unreadable or unparsable input, as every command reports it
    if graph is None or errors:
        say(f"dagtui export: {args.graph} has {len(errors)} error(s); fix them first "
              "(dagtui validate shows them all)", file=sys.stderr)
        return ExitCode.FAILURES
    try:
        text = export_graph(graph, args.fmt, source=_display_path(args.graph))
    except ExportRefused as exc:
        say(f"dagtui export: cannot export {args.graph} to {args.fmt}; DeepEval cannot "
              "express:", file=sys.stderr)
        for refusal in exc.refusals:
            say(f"  {refusal.format()}", file=sys.stderr)
        return ExitCode.FAILURES
    from dagtui.report.outputs import clashes

    clash = clashes({"-o": args.output if args.output != "-" else None},
                    {"graph file": args.graph})
    if clash:
        print(f"dagtui export: {clash[0]}", file=sys.stderr)
        return ExitCode.USAGE
    if args.fmt in DEEPEVAL_FORMATS:
        for note in deepeval_notes(graph, args.fmt):
            say(f"dagtui export: note: {note}", file=sys.stderr)
    if not args.output or args.output == "-":
        sys.stdout.write(text)
        return ExitCode.OK
    from dagtui.safewrite import atomic_write

    try:
        atomic_write(args.output, text)
    except OSError as exc:  # a read-only output (WriteRefused) too: exit 2, nothing written
        say(f"dagtui export: cannot write {args.output}: {exc.strerror or exc}",
              file=sys.stderr)
        return ExitCode.USAGE
    say(f"dagtui export: wrote {args.output} ({args.fmt})", file=sys.stderr)
    return ExitCode.OK


def check_graph(path: str) -> tuple[Graph | None, list[Diagnostic]]:
    """Load and validate exactly as `dagtui validate` does (shape and meaning)."""
    from dagtui.graph.validate import check_file

    report = check_file(path)
    return report.graph, list(report.diagnostics)


def _display_path(path: str) -> str:
    return Path(path).as_posix()

"""`dagtui import DAG.json [-o GRAPH.toml]`: DeepEval DAG JSON to a readable graph file.

Exit codes: 0 written, 1 the document holds something dagtui cannot express (named, nothing
written) or the written graph has validation errors (shown), 2 unreadable or invalid JSON,
or an existing output without `--force`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dagtui.exitcodes import ExitCode
from dagtui.graph.model import Metric
from dagtui.text import say


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import",
        help="import DeepEval DAG JSON as a graph file",
        description="Read DeepEval's dag_to_json output and write a readable TOML graph: "
        "verdicts folded into their judgement, G-Eval children as geval nodes, ids named "
        "after labels and criteria.",
    )
    p.add_argument("source", metavar="DAG.json", help="DeepEval DAG JSON file")
    p.add_argument("-o", "--output", metavar="GRAPH.toml", help="write here (default: stdout)")
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing --output (even a read-only one)")
    # DeepEval's JSON holds the graph only: these settings would otherwise come back as
    # defaults without a word (and a Python export would then differ from the source metric)
    p.add_argument("--name", help="metric name (default: from the file name)")
    p.add_argument("--threshold", type=_threshold, metavar="T",
                   help="pass threshold 0..1 written to [metric] (default: 0.5)")
    p.add_argument("--model", metavar="M",
                   help="judge model written to [metric] (default: none pinned)")
    p.add_argument("--include-reason", action=argparse.BooleanOptionalAction, default=None,
                   help="[metric].include_reason: --no-include-reason when the source metric "
                   "had include_reason=False (default: true)")
    p.add_argument("--multi-turn", action="store_true", default=None,
                   help="read it as a conversational DAG (default: detected from params)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dagtui.export.importer import ImportFailed, import_deepeval_json
    from dagtui.export.toml_text import render_graph
    from dagtui.graph.validate import check_text
    from dagtui.safewrite import atomic_write

    source = Path(args.source)
    out = Path(args.output) if args.output and args.output != "-" else None
    from dagtui.report.outputs import clashes

    clash = clashes({"-o": out}, {"DeepEval DAG JSON": source})
    if clash:  # even with --force: the source is what is being converted
        print(f"dagtui import: {clash[0]}", file=sys.stderr)
        return ExitCode.USAGE
    if out is not None and out.exists() and not args.force:
        say(f"dagtui import: {args.output} exists; use --force to overwrite it",
              file=sys.stderr)
        return ExitCode.USAGE
    from dagtui.inputs import JSON_LIMIT, InputError, read_text

    try:  # a FIFO, /dev/zero or an oversized file is refused before it is read
        text = read_text(source, limit=JSON_LIMIT, what="DeepEval DAG document")
    except InputError as exc:
        say(f"dagtui import: cannot read {exc}", file=sys.stderr)
        return ExitCode.USAGE
    name = args.name or _name_from(source)
    try:
        graph = import_deepeval_json(text, name=name, multi_turn=args.multi_turn)
    except ImportFailed as exc:
        lines = str(exc).splitlines() or ["cannot import"]
        if exc.usage:
            say(f"dagtui import: {args.source}: {lines[0]}", file=sys.stderr)
            return ExitCode.USAGE
        say(f"dagtui import: {args.source} holds what a dagtui graph cannot express:",
              file=sys.stderr)
        for line in lines:
            say(f"  {line}", file=sys.stderr)
        return ExitCode.FAILURES
    graph.metric = _settings(graph.metric, args)
    for note in _defaults_note(args):
        say(f"dagtui import: note: {note}", file=sys.stderr)
    toml = render_graph(graph, [f"Imported from {source.name} by `dagtui import`."])
    if out is None:
        sys.stdout.write(toml)
    else:
        try:
            atomic_write(out, toml, force=args.force)  # --force: over a read-only file too
        except OSError as exc:
            say(f"dagtui import: cannot write {args.output}: {exc.strerror or exc}",
                  file=sys.stderr)
            return ExitCode.USAGE
        say(f"dagtui import: wrote {args.output} ({len(graph.nodes)} nodes)",
              file=sys.stderr)
    # DeepEval lets some broken graphs through (a task as the last node, ...): the file is
    # written so it can be fixed here, and what is wrong is said now, with exit 1.
    report = check_text(toml, str(out or "<stdout>"))
    for d in report.diagnostics:
        say(d.format(), file=sys.stderr)
    if report.errors:
        say(f"dagtui import: the imported graph has {len(report.errors)} error(s)",
              file=sys.stderr)
        return ExitCode.FAILURES
    return ExitCode.OK


def _name_from(path: Path) -> str:
    words = path.stem.replace("_", " ").replace("-", " ").split()
    return " ".join(words).capitalize() or "Imported DeepEval DAG"


def _threshold(text: str) -> float:
    """`--threshold`: a number from 0 to 1, refused by the parser otherwise (exit 2)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {text!r}")
    return value


def _settings(metric: Metric, args: argparse.Namespace) -> Metric:
    """The `[metric]` table with what the flags say (the JSON does not carry it)."""
    changes: dict[str, Any] = {}
    if getattr(args, "threshold", None) is not None:
        changes["threshold"] = args.threshold
    if getattr(args, "model", None):
        changes["model"] = args.model
    if getattr(args, "include_reason", None) is not None:
        changes["include_reason"] = args.include_reason
    return metric.replace(**changes) if changes else metric


def _defaults_note(args: argparse.Namespace) -> list[str]:
    """Say which metric settings were not in the JSON and not given, so none is lost
    silently."""
    missing = []
    if not args.name:
        missing.append("name from the file name (--name)")
    if getattr(args, "threshold", None) is None:
        missing.append("threshold 0.5 (--threshold)")
    if not getattr(args, "model", None):
        missing.append("no model pinned (--model)")
    if getattr(args, "include_reason", None) is None:
        missing.append("include_reason true (--no-include-reason)")
    if not missing:
        return []
    return ["DeepEval's JSON does not carry the metric's settings, so these are defaults: "
            + ", ".join(missing)]

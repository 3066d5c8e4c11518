"""`dagtui import DAG.json [-o GRAPH.toml]`: DeepEval DAG JSON to a readable graph file.

Exit codes: 0 written, 1 the document holds something dagtui cannot express (named, nothing
written) or the written graph has validation errors (shown), 2 unreadable or invalid JSON,
or an existing output without `--force`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


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
    p.add_argument("--name", help="metric name (default: from the file name)")
    p.add_argument("--multi-turn", action="store_true", default=None,
                   help="read it as a conversational DAG (default: detected from params)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..export.importer import ImportFailed, import_deepeval_json
    from ..export.toml_text import render_graph
    from ..safewrite import atomic_write
    from ..validate import check_text

    source = Path(args.source)
    out = Path(args.output) if args.output and args.output != "-" else None
    if out is not None and out.exists() and not args.force:
        print(f"dagtui import: {args.output} exists; use --force to overwrite it",
              file=sys.stderr)
        return 2
    from ..inputs import JSON_LIMIT, InputError, read_text

    try:  # a FIFO, /dev/zero or an oversized file is refused before it is read
        text = read_text(source, limit=JSON_LIMIT, what="DeepEval DAG document")
    except InputError as exc:
        print(f"dagtui import: cannot read {exc}", file=sys.stderr)
        return 2
    name = args.name or _name_from(source)
    try:
        graph = import_deepeval_json(text, name=name, multi_turn=args.multi_turn)
    except ImportFailed as exc:
        lines = str(exc).splitlines() or ["cannot import"]
        if exc.usage:
            print(f"dagtui import: {args.source}: {lines[0]}", file=sys.stderr)
            return 2
        print(f"dagtui import: {args.source} holds what a dagtui graph cannot express:",
              file=sys.stderr)
        for line in lines:
            print(f"  {line}", file=sys.stderr)
        return 1
    toml = render_graph(graph, [f"Imported from {source.name} by `dagtui import`."])
    if out is None:
        sys.stdout.write(toml)
    else:
        try:
            atomic_write(out, toml, force=args.force)  # --force: over a read-only file too
        except OSError as exc:
            print(f"dagtui import: cannot write {args.output}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
        print(f"dagtui import: wrote {args.output} ({len(graph.nodes)} nodes)",
              file=sys.stderr)
    # DeepEval lets some broken graphs through (a task as the last node, ...): the file is
    # written so it can be fixed here, and what is wrong is said now, with exit 1.
    report = check_text(toml, str(out or "<stdout>"))
    for d in report.diagnostics:
        print(d.format(), file=sys.stderr)
    if report.errors:
        print(f"dagtui import: the imported graph has {len(report.errors)} error(s)",
              file=sys.stderr)
        return 1
    return 0


def _name_from(path: Path) -> str:
    words = path.stem.replace("_", " ").replace("-", " ").split()
    return " ".join(words).capitalize() or "Imported DeepEval DAG"

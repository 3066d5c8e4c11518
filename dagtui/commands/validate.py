"""`dagtui validate PATH...`: lint graph files like a compiler, for people and for CI.

Each file is read once and validated (`dagtui.graph.analysed`); problems print as
`file:line:col: error DAG012 [node.field] message`, as JSON, or as GitHub annotations, then
one summary line. Directories are searched for `*.toml` graphs and suite files (cases files
are someone else's input and are skipped quietly). Exit codes: 0 no errors (warnings are
fine unless `--strict`), 1 errors, 2 input that cannot be read or parsed at all (as in every
command). Whatever
the input, the command prints messages, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from dagtui.exitcodes import ExitCode
from dagtui.graph.analysed import CheckedGraph
from dagtui.text import escape_controls, say

#: directories never searched (virtualenvs, caches, VCS data)
SKIP_DIRS = {"__pycache__", "node_modules", "site-packages"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate",
        help="check graph files: errors, warnings and paths (exit 1 on errors)",
        description="Check graph files for errors (the graph cannot run) and warnings (it "
        "runs, but probably not as meant). Exit 0 when there are no errors, 1 when there are "
        "(or warnings with --strict), 2 when an input cannot be read or does not parse.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="graph or suite files, or directories (their *.toml graphs and "
                   "suites, recursively)")
    p.add_argument("--format", choices=("text", "json", "github"), default="text",
                   help="text: compiler-style lines (default); json: one document; "
                   "github: workflow annotations for pull requests")
    p.add_argument("--paths", action="store_true", dest="show_paths",
                   help="also print every verdict path with its leaf, score, pass/fail and "
                   "judge calls, and the calls per case (min/max/expected)")
    p.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    p.set_defaults(func=run)


# --------------------------------------------------------------------------------------------
# finding the graphs


def file_kind(path: Path, checked: CheckedGraph | None = None) -> str:
    """"graph", "cases" or "suite", from the file name and its top-level tables. Files that
    do not parse count as graphs, so validation reports them instead of hiding them.
    `checked`: the file already read, whose parse is reused."""
    if path.name.endswith(".cases.toml"):
        return "cases"
    # a FIFO, a device or a huge file is refused unread: the loader then says why
    data = (checked if checked is not None else CheckedGraph.read(path)).load.raw
    if data is None or "metric" in data or "nodes" in data:
        return "graph"
    if "rules" in data or "suite" in data:
        return "suite"
    if "cases" in data:
        return "cases"
    return "graph"


def collect(paths: list[str], read: dict[Path, CheckedGraph] | None = None
            ) -> tuple[list[Path], list[str]]:
    """Files to check (a directory: its graphs and suite files), and one-line problems with
    the arguments themselves. `read` gets the files a directory search read to know what
    they are, so they are not read again."""
    files: list[Path] = []
    problems: list[str] = []
    for raw in paths:
        if not raw.strip():
            problems.append("'': error DAG022 an empty path names no file")
            continue
        p = Path(raw)
        try:
            is_dir = p.is_dir()
        except OSError as exc:  # e.g. a name too long for the file system
            problems.append(f"{raw}: error DAG022 cannot read path: {exc.strerror or exc}")
            continue
        if not is_dir:
            files.append(p)  # missing or unreadable files are reported by the loader
            continue
        found = []
        for f in _walk_toml(p):
            checked = CheckedGraph.read(f)
            if file_kind(f, checked) in ("graph", "suite"):
                found.append(f)
                if read is not None:
                    read[f] = checked
        if not found:
            problems.append(f"{raw}: error DAG022 no graph files (*.toml graphs or suites) "
                            "in this directory")
        files.extend(found)
    return files, problems


def _walk_toml(root: Path) -> list[Path]:
    """`*.toml` files under `root`, sorted, without descending into hidden or tool dirs
    (a `.venv` holds thousands of files and no graphs)."""
    from dagtui.inputs import regular_files

    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS]
        out.extend(Path(dirpath) / f for f in filenames if f.endswith(".toml"))
    return regular_files(out, lambda line: print(line, file=sys.stderr))


# --------------------------------------------------------------------------------------------
# running


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except BrokenPipeError:
        raise  # `dagtui validate ... | head`: the dispatcher ends quietly
    except Exception as exc:  # the last line of defence: never a traceback
        print(f"dagtui validate: internal error: {type(exc).__name__}: {exc} "
              "(please report this with the input file)", file=sys.stderr)
        return ExitCode.USAGE


def _run(args: argparse.Namespace) -> int:
    from dagtui.graph.validate import ValidationResult

    read: dict[Path, CheckedGraph] = {}
    files, problems = collect(args.paths, read)
    reports: list[tuple[Path, ValidationResult | None, str | None]] = []
    for f in files:
        try:
            reports.append((f, _check_one(f, read.pop(f, None)), None))
        except Exception as exc:  # one broken file must not hide the others
            reports.append((f, None, f"{type(exc).__name__}: {exc}"))

    errors = warnings = notes = 0
    unreadable = len(problems)
    for _, report, _crash in reports:
        if report is None:
            unreadable += 1
            continue
        if report.unreadable:
            unreadable += 1
        errors += len(report.errors)
        warnings += len(report.warnings)
        notes += len(report.notes)

    fmt = args.format
    if fmt == "json":
        print(_json_document(reports, problems, args.show_paths, errors, warnings, notes))
    else:
        for line in problems:
            say(line, file=sys.stderr, one_line=True)  # a path can hold anything
        for path, report, crash in reports:
            if report is None:
                say(f"{path}: error DAG022 internal error while checking: {crash}",
                    file=sys.stderr, one_line=True)
                continue
            for d in report.diagnostics:
                print(d.github() if fmt == "github" else d.format())
            if args.show_paths and fmt == "text" and report.paths is not None \
                    and report.graph is not None:
                _print_paths(path, report)
        checked = len(reports)
        summary = (
            f"{checked} file{'s' if checked != 1 else ''} checked: "
            f"{errors} error{'s' if errors != 1 else ''}, "
            f"{warnings} warning{'s' if warnings != 1 else ''}"
            + (f", {notes} note{'s' if notes != 1 else ''}" if notes else "")
            + (f"; {unreadable} unreadable input{'s' if unreadable != 1 else ''}"
               if unreadable else "")
        )
        print(summary, file=sys.stderr if fmt == "github" else sys.stdout)
    if unreadable:
        return ExitCode.USAGE
    if errors or (args.strict and warnings):
        return ExitCode.FAILURES
    return ExitCode.OK


def _check_one(path: Path, checked: CheckedGraph | None = None) -> Any:
    """A file, read once (`checked`: already read): a graph, or a suite file (its report
    has the same shape, so output and exit codes work alike)."""
    checked = checked if checked is not None else CheckedGraph.read(path)
    if path.is_file() and file_kind(path, checked) == "suite":
        from dagtui.suite.loader import check_suite_file

        return check_suite_file(path, read=checked.load)
    return checked.report


def _print_paths(path: Path, report: Any) -> None:
    from rich.console import Console

    from dagtui.graph.paths import render_table

    console = Console(file=sys.stdout, highlight=False, soft_wrap=False)
    pr = report.paths
    console.print(escape_controls(f"{path}: verdict paths"), markup=False)
    console.print(render_table(pr, report.graph))
    scores = ", ".join(f"{s:g}" for s in pr.reachable_scores) or "none"
    if pr.geval_leaves:
        scores += f"; scored at run time (G-Eval, metric): {', '.join(pr.geval_leaves)}"
    lines = [
        f"  judge calls: {pr.calls_text()}",
        f"  reachable scores: {scores}",
        f"  dead nodes: {', '.join(pr.dead_nodes) or 'none'}",
    ]
    if pr.bad_paths:
        lines.append(f"  invalid paths: {len(pr.bad_paths)}")
    if not pr.complete and pr.proven:
        lines.append(f"  the table lists the first {len(pr.paths)} paths; every combination "
                     "was still checked (run states searched instead)")
    elif not pr.proven:
        lines.append(f"  not proven: {pr.reason}")
    for line in lines:
        console.print(line, markup=False)


def _paths_json(report: Any) -> dict[str, Any] | None:
    pr = report.paths
    if pr is None:
        return None

    return {
        "complete": pr.complete,
        "proven": pr.proven,
        "reason": pr.reason or None,
        "min_calls": pr.min_calls,
        "max_calls": pr.max_calls,
        "expected_calls": pr.expected_calls,
        "reachable_scores": pr.reachable_scores,
        "geval_leaves": pr.geval_leaves,
        "dead_nodes": pr.dead_nodes,
        "paths": [
            {
                "choices": [{"node": n, "verdict": v} for n, v in p.choices],
                "leaves": [
                    {"node": lf.node, "verdict": lf.verdict, "score": lf.score}
                    for lf in p.leaves
                ],
                "score": p.score,
                "passes": p.passes,
                "calls": p.calls,
                "nodes_run": list(p.nodes_run),
                "ok": p.ok,
            }
            for p in pr.paths
        ],
    }


def _json_document(
    reports: list[tuple[Path, Any, str | None]],
    problems: list[str],
    show_paths: bool,
    errors: int,
    warnings: int,
    notes: int,
) -> str:
    files = []
    for path, report, crash in reports:
        if report is None:
            files.append({"file": str(path), "ok": False, "internal_error": crash,
                          "diagnostics": []})
            continue
        entry: dict[str, Any] = {
            "file": str(path),
            "ok": report.ok,
            "errors": len(report.errors),
            "warnings": len(report.warnings),
            "diagnostics": [d.to_dict() for d in report.diagnostics],
        }
        if show_paths:
            entry["paths"] = _paths_json(report)
        files.append(entry)
    doc = {
        "files": files,
        "problems": problems,
        "summary": {"files": len(reports), "errors": errors, "warnings": warnings,
                    "notes": notes},
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str)

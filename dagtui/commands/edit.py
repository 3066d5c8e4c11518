"""`dagtui edit GRAPH.toml`: open the Textual editor (creates the file from a starter)."""

from __future__ import annotations

import argparse
import os
import sys

from dagtui.commands.python_opts import add_python_options, python_consent
from dagtui.exitcodes import ExitCode
from dagtui.text import say


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "edit",
        help="edit a graph (or a suite's rule DAG) in the terminal UI (live validation, graph view, comment-keeping save)",
        description="Open GRAPH.toml in the dagtui editor. A missing file is started from a "
        "starter graph (chosen in the UI, or --starter NAME) and written on the first save.",
    )
    p.add_argument("graph", metavar="GRAPH.toml", nargs="?",
                   help="graph file to edit (created if missing; not needed with --list-starters "
                        "or --list-keys)")
    p.add_argument("--starter", metavar="NAME",
                   help="starter graph for a missing file (see --list-starters)")
    p.add_argument("--list-starters", action="store_true", help="list starter graphs and exit")
    p.add_argument("--list-keys", action="store_true",
                   help="list every key binding id (what DAGTUI_KEYS and keys.toml remap) "
                        "with its key, and exit")
    p.add_argument("--calibration", metavar="FILE",
                   help="a `dagtui calibrate --json` result to show (default: the one saved "
                        "under .dagtui/calibration/ for this graph)")
    add_python_options(p)
    p.set_defaults(func=run)


def target_refusal(command: str, graph: str | None, starter: str | None) -> str | None:
    """Why `dagtui edit` / `dagtui serve` must not open `graph` (an unknown starter, or a
    file the editor would overwrite), as the one line to print, or None."""
    from dagtui.graph.starters import STARTERS

    if starter is not None and starter not in STARTERS:
        return f"dagtui {command}: unknown starter {starter!r}; known: {', '.join(STARTERS)}"
    return None if graph is None else _not_a_graph(command, graph)


def _not_a_graph(command: str, path: str) -> str | None:
    """The one-line error for a path the editor must not open: a directory (no graph to
    show, and nothing a save could write), or DeepEval JSON (saving it as a graph would
    overwrite the user's document with TOML; `dagtui import` converts it). Any other file
    that does not parse opens read-only with its error."""
    from dagtui.graph.loader import DEEPEVAL_JSON, load_file

    if os.path.isdir(path):
        return (f"dagtui {command}: {path} is a directory; name a graph file in it "
                f"(dagtui {command} {os.path.join(path, 'GRAPH.toml')})")
    if not path.endswith(".json"):
        return None
    for d in load_file(path).diagnostics:
        if d.message == DEEPEVAL_JSON:
            return d.format()
    return None


def _in_browser() -> bool:
    """Started by `dagtui serve` (textual-serve): the screen goes to a browser page through
    pipes, which are not terminals, yet a user is at the keys."""
    return "web_driver" in os.environ.get("TEXTUAL_DRIVER", "")


def run(args: argparse.Namespace) -> int:
    from dagtui.tui.startup import pause_collector, resume_collector

    pause_collector()  # until the app's first frame: see dagtui/tui/startup.py
    try:
        return _run(args)
    finally:
        resume_collector()  # the app did at its first frame, unless it never got there


def _run(args: argparse.Namespace) -> int:
    from dagtui.graph.starters import STARTERS, starter_description

    if args.list_starters:  # as the chooser shows them: the name, then what it is for
        import textwrap

        width = max(map(len, STARTERS)) + 2
        for name in STARTERS:  # wrapped under itself at 80 columns
            print(textwrap.fill(starter_description(name), 80, initial_indent=name.ljust(width),
                                subsequent_indent=" " * width))
        return ExitCode.OK
    if args.list_keys:
        from dagtui.tui.keys import list_keys

        sys.stdout.write(list_keys())
        return ExitCode.OK
    refusal = target_refusal("edit", args.graph, args.starter)
    if refusal is None and args.graph is None:
        say("dagtui edit: which file? dagtui edit GRAPH.toml (or --list-starters)",
              file=sys.stderr)
        return ExitCode.USAGE
    if refusal:
        say(refusal, file=sys.stderr)
        return ExitCode.USAGE
    from dagtui.keyfile import KeymapError
    from dagtui.tui.keys import user_keymap

    try:  # DAGTUI_KEYS / keys.toml: one file for every screen
        keymap = user_keymap()
    except KeymapError as exc:
        say(f"dagtui edit: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    if not (sys.stdout.isatty() and sys.stdin.isatty()) and not _in_browser():
        say("dagtui edit: needs an interactive terminal", file=sys.stderr)
        return ExitCode.USAGE
    from dagtui.suite.sniff import is_suite_file
    from dagtui.tui.app import editor_app, suite_app

    if is_suite_file(args.graph):  # a suite file opens the rule-dependencies view
        suite_app(args.graph, keymap=keymap).run()
    else:
        # without a flag the editor reads the environment itself, when a python check
        # first asks (the check kinds are not imported before its first frame)
        python = python_consent(args) if args.allow_python or args.python_path else None
        editor_app(args.graph, starter=args.starter, python=python,
                   calibration=args.calibration, keymap=keymap).run()
    return ExitCode.OK

"""`dagtui serve GRAPH.toml`: the editor (and, through F5, the debugger) in a web browser.

`textual-serve` (the `serve` extra) runs a small web server; every browser tab that opens the
page starts its own `dagtui edit GRAPH.toml` process whose screen is drawn in the page, so the
browser shows exactly the terminal UI, from the same code. The server binds 127.0.0.1 unless
`--host` says otherwise: whoever reaches the page can edit the file (and, with
`--allow-python`, run its python checks).
"""

from __future__ import annotations

import argparse
import shlex
import sys

from ..exitcodes import ExitCode
from . import flags
from .python_opts import add_python_options

#: what a missing `textual-serve` prints
MISSING = ("dagtui serve: needs textual-serve, which is not installed: "
           "pip install 'dagtui[serve]'")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="open the editor in a web browser (textual-serve: the dagtui[serve] extra)",
        description="Serve the dagtui editor for GRAPH.toml over HTTP: open the printed "
        "address in a browser to get the same editor (F5: the debugger). Each page load "
        "starts its own editor process. Needs the serve extra: pip install 'dagtui[serve]'.",
    )
    p.add_argument("graph", metavar="GRAPH.toml",
                   help="graph file to edit (created from a starter if missing)")
    p.add_argument("--port", type=flags.port, default=8000, metavar="N",
                   help="TCP port to listen on (default 8000)")
    p.add_argument("--host", default="127.0.0.1", metavar="HOST",
                   help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--starter", metavar="NAME",
                   help="starter graph for a missing file (see dagtui edit --list-starters)")
    add_python_options(p)
    p.set_defaults(func=run)


def edit_command(args: argparse.Namespace) -> list[str]:
    """The `dagtui edit` command line each browser tab runs (this Python, this dagtui)."""
    argv = [sys.executable, "-m", "dagtui", "edit", args.graph]
    if args.starter:
        argv += ["--starter", args.starter]
    if args.allow_python:
        argv.append("--allow-python")
    for directory in args.python_path:
        argv += ["--python-path", directory]
    return argv


def run(args: argparse.Namespace) -> int:
    from .edit import target_refusal

    refusal = target_refusal("serve", args.graph, args.starter)
    if refusal:
        print(refusal, file=sys.stderr)
        return ExitCode.USAGE
    try:
        from textual_serve.server import Server
    except ImportError:
        print(MISSING, file=sys.stderr)
        return ExitCode.USAGE
    server = Server(shlex.join(edit_command(args)), host=args.host, port=args.port,
                    title=f"dagtui {args.graph}")
    print(f"dagtui serve: http://{args.host}:{args.port}/ (ctrl+c stops)", file=sys.stderr,
          flush=True)
    server.serve()
    return ExitCode.OK

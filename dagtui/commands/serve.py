"""`dagtui serve GRAPH.toml`: the editor (and, through F5, the debugger) in a web browser.

`textual-serve` (the `serve` extra) runs a small web server; every browser tab that opens the
page starts its own `dagtui edit GRAPH.toml` process whose screen is drawn in the page, so the
browser shows exactly the terminal UI, from the same code. The server binds 127.0.0.1 unless
`--host` says otherwise. Whoever drives the page can edit the file (and, with `--allow-python`,
run its python checks), so only a browser that opened the printed address with its per-launch
secret may: serve_guard.py has the rules (secret, Host, Origin), serve_web.py applies them.
"""

from __future__ import annotations

import argparse
import shlex
import socket
import sys

from dagtui.commands import flags
from dagtui.commands.python_opts import add_python_options
from dagtui.exitcodes import ExitCode
from dagtui.text import say

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
    """The `dagtui edit` command line each browser tab runs (this Python, this dagtui).

    `-P`: `python -m` would put the working directory first on the import path, so a
    `rich.py` or `textual.py` lying there would run as soon as a page loads (plain `dagtui
    edit` from the same folder runs nothing). `-P` keeps it off the path and leaves the rest as
    is (the environment, site-packages with an editable install's .pth); `-I` would also drop
    PYTHONPATH and the user's site-packages, where dagtui itself may live."""
    argv = [sys.executable, "-P", "-m", "dagtui", "edit", args.graph]
    if args.starter:
        argv += ["--starter", args.starter]
    if args.allow_python:
        argv.append("--allow-python")
    for directory in args.python_path:
        argv += ["--python-path", directory]
    return argv


def _listen_refusal(host: str, port: int) -> str | None:
    """Why `host`:`port` cannot be listened on (the port is taken, the address is not this
    machine's), asked by binding it as aiohttp will; None: it can."""
    try:
        for family, kind, proto, _, address in socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE):
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind(address)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def run(args: argparse.Namespace) -> int:
    from dagtui.commands.edit import target_refusal

    refusal = target_refusal("serve", args.graph, args.starter)
    if refusal:
        print(refusal, file=sys.stderr)
        return ExitCode.USAGE
    try:
        import textual_serve.server  # noqa: F401  (the serve extra, before serve_web needs it)
    except ImportError:
        print(MISSING, file=sys.stderr)
        return ExitCode.USAGE
    from dagtui.commands.serve_guard import Guard
    from dagtui.commands.serve_web import GuardedServer

    where = f"{args.host}:{args.port}"
    why = _listen_refusal(args.host, args.port)
    if why:  # before an address that will not answer is printed
        say(f"dagtui serve: cannot listen on {where}: {why}", file=sys.stderr, one_line=True)
        return ExitCode.USAGE
    server = GuardedServer(shlex.join(edit_command(args)), host=args.host, port=args.port,
                           title=f"dagtui {args.graph}",
                           guard=Guard.for_address(args.host, args.port))
    try:
        server.serve()
    except OSError as exc:  # taken meanwhile
        say(f"dagtui serve: cannot listen on {where}: {exc.strerror or exc}",
            file=sys.stderr, one_line=True)
        return ExitCode.USAGE
    return ExitCode.OK

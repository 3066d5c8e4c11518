"""The `dagtui` command line: a thin dispatcher over `dagtui.commands.*`.

Each subcommand lives in its own module exposing `register(subparsers)` (adds its parser and
sets `func`) so commands can grow without touching each other. Nothing heavy is imported
until a command runs. Exit codes (SPEC §8): 0 ok, 1 failures found, 2 usage or input error,
3 judge errors prevented a verdict.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from . import __version__

#: subcommand modules, in the order `--help` lists them
COMMANDS = ("edit", "step", "validate", "run", "test", "calibrate", "export", "import_",
            "fmt")

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_JUDGE = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one line (argparse's default is also 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"dagtui: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dagtui",
        description="Edit, validate, debug, run and export LLM-judge decision graphs.",
    )
    parser.add_argument("--version", action="version", version=f"dagtui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        module = importlib.import_module(f"dagtui.commands.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("dagtui: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK

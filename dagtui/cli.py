"""The `dagtui` command line: a thin dispatcher over `dagtui.commands.*`.

Each subcommand lives in its own module exposing `register(subparsers)` (adds its parser and
sets `func`) so commands can grow without touching each other. Nothing heavy is imported
until a command runs. Exit codes (`dagtui.exitcodes.ExitCode`, the README's table): 0 ok,
1 failures found, 2 usage or input error, 3 judge errors prevented a verdict; Ctrl+C gives
130, as a shell reports any interrupted program. Usage errors leave through argparse's
SystemExit(2), as in any argparse program; everything else is `main`'s return value. Output
to a reader that went away (`| head -1`) is dropped, and the command still answers with its
own exit code (`dagtui.commands.closed_pipe`): a closed pipe never turns a failure into success.
"""

from __future__ import annotations

import argparse
import importlib
import re
import signal
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from dagtui import __version__
from dagtui.exitcodes import ExitCode
from dagtui.text import for_terminal, say, suggest

#: subcommand modules, in the order `--help` lists them
COMMANDS = ("edit", "serve", "step", "validate", "run", "merge", "test", "calibrate", "align", "label", "export",
            "import_", "fmt", "cache", "schema", "demo_judge")

_INVALID_CHOICE = re.compile(r"argument .*: invalid choice: '(.*)' \(choose from (.*)\)$")


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one line (argparse's default is also 2), and no
    abbreviated flags: `--con` would silently mean `--concurrency` until a second `--con...`
    flag is added and scripts break; a misspelt flag gets a suggestion instead
    (`unrecognized`). What it prints passes `for_terminal`: an error quotes the argument
    as typed, and an argument can hold any escape sequence."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        choice = _INVALID_CHOICE.match(message)
        if choice:  # a misspelt command or --to/--judge value
            options = re.findall(r"'([^']*)'", choice.group(2))
            message += suggest(choice.group(1), options, abbreviations=True)
        # what was wrong first, then a one-line usage: argparse's own usage of a command
        # with twenty flags is ten lines that push the error off a small screen
        self.exit(ExitCode.USAGE, f"dagtui: error: {message}\n{self.short_usage()}\n")

    def short_usage(self) -> str:
        """`usage: dagtui run graph [options] (dagtui run --help lists them)`."""
        words = [self.prog]
        for action in self._actions:
            if action.option_strings or action.help == argparse.SUPPRESS:
                continue
            name = action.metavar if isinstance(action.metavar, str) else action.dest
            shapes = {"?": f"[{name}]", "*": f"[{name} ...]", "+": f"{name} ...",
                      argparse.PARSER: f"{name} ..."}
            words.append(shapes.get(action.nargs, name) if isinstance(action.nargs, str)
                         else name)
        words.append("[options]")
        return f"usage: {' '.join(words)} ({self.prog} --help lists them)"

    def _print_message(self, message: str, file: Any = None) -> None:
        super()._print_message(for_terminal(message) if message else message, file)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only` (a command's module name) just that command's
    subparser: building all of them imports every command module, ~25 ms that `dagtui
    edit` paid before its first frame."""
    parser = _Parser(
        prog="dagtui",
        description="Edit, validate, debug, run and export LLM-judge decision graphs.",
    )
    parser.add_argument("--version", action="version", version=f"dagtui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS if only is None else (only,):
        module = importlib.import_module(f"dagtui.commands.{name}")
        module.register(sub)
    return parser


def _command_module(argv: Sequence[str]) -> str | None:
    """The module of the command `argv` starts with (`import` -> `import_`,
    `demo-judge` -> `demo_judge`), or None: no command first, or not one of ours."""
    if not argv:
        return None
    word = argv[0].replace("-", "_")
    for name in (word, f"{word}_"):
        if name in COMMANDS:
            return name
    return None


def unrecognized(extras: list[str], parser: argparse.ArgumentParser) -> str:
    """argparse's "unrecognized arguments" message, plus the closest flag of `parser` for
    each unknown one (`--concurency` -> did you mean '--concurrency'?)."""
    flags = [s for action in parser._actions for s in action.option_strings]
    unknown = [arg.split("=", 1)[0] for arg in extras if arg.startswith("-")]
    hints = [(word, suggest(word, flags, abbreviations=True)) for word in unknown]
    hints = [(word, hint) for word, hint in hints if hint]
    message = f"unrecognized arguments: {' '.join(extras)}"
    if len(hints) == 1:
        return message + hints[0][1]
    return message + "".join(f"; {word}{hint}" for word, hint in hints)


def _subcommand(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser:
    """The subcommand's own parser (its flags are the ones to suggest), else `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from dagtui.commands.closed_pipe import guarded_output

    try:
        with guarded_output():  # `--help | head` too
            return _dispatch(argv)
    except KeyboardInterrupt:
        say("dagtui: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT  # as a shell reports a program Ctrl+C stopped
    except BrokenPipeError:  # a stream the guard does not cover: never a false success
        return 128 + signal.SIGPIPE  # as a shell reports a program a closed pipe stopped


def _dispatch(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # a command named first needs only its own parser (its errors and --help are its own);
    # anything else (--help, --version, a misspelt command) gets the whole command line
    only = _command_module(words)
    parser = build_parser(only)
    if only is not None and _subcommand(parser, words[0]) is parser:
        parser = build_parser()  # its module registers it under another name
    args, extras = parser.parse_known_args(words)
    if extras:
        command = _subcommand(parser, getattr(args, "command", None))
        command.error(unrecognized(extras, command))
    if not getattr(args, "func", None):
        parser.print_help()
        return ExitCode.USAGE
    return int(args.func(args) or ExitCode.OK)

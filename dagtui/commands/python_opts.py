"""`--allow-python` / `--python-path`: the user's consent for python check nodes, on every
command that can run a graph (`run`, `test`, `step`, `edit`).

A python check runs code from a module beside the graph; a graph (say, from an untrusted pull
request) must not be able to run code just by being tested, so the permission comes only
from the command line or the environment, never from the file. See `dagtui.graph.checks`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from dagtui.graph.python_env import ALLOW_ENV, PATH_ENV

if TYPE_CHECKING:  # imported when a command asks for the consent, not to build its parser
    from dagtui.graph.checks import PythonConsent


def add_python_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-python", action="store_true",
                   help="let python check nodes run their module (a file beside the graph); "
                        f"also {ALLOW_ENV}=1. Without it such a step fails, naming the node")
    p.add_argument("--python-path", action="append", default=[], metavar="DIR",
                   help="also look for python check modules in DIR (repeatable; also "
                        f"{PATH_ENV}); installed modules are never used")


def python_consent(args: argparse.Namespace) -> PythonConsent:
    """The consent the command line (and the environment) gives."""
    from dagtui.graph.checks import PythonConsent

    return PythonConsent.from_env(bool(args.allow_python), args.python_path or ())

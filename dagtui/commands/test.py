"""`dagtui test`: not built yet (its issue is open)."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("test", help="(not yet available)")
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print("dagtui test: not yet available in this version", file=sys.stderr)
    return 2

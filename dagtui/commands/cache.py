"""`dagtui cache stats|clear`: look into the judge-answer cache, and prune it.

`stats` prints the entries, the size on disk, the entries per model and the oldest and
newest entry; `clear` removes the entries of one model (`--model`), those older than a
number of days (`--older-than`), both, or all when neither is given, and says how many went.
Both read `.dagtui/cache.sqlite` under the current directory unless `--cache-dir` says
otherwise, and neither creates a cache that is not there. A damaged cache file is set aside
and replaced as it would be by a run (`dagtui.cache`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..cache import DEFAULT_DIR, FILENAME, Cache
from ..exitcodes import ExitCode
from ..text import say
from . import flags

DAY = 86400.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cache", help="the judge-answer cache: stats, or clear by model or age",
        description="Show or prune the cache of judge answers that `dagtui run` and "
        "`dagtui step` keep (default .dagtui/cache.sqlite).",
    )
    actions = p.add_subparsers(dest="cache_action", metavar="ACTION")
    stats = actions.add_parser("stats", help="entries, size, entries per model, oldest/newest",
                               description="Show what the cache holds.")
    clear = actions.add_parser("clear", help="remove entries (all, or by --model/--older-than)",
                               description="Remove cached answers: those of --model, those "
                               "older than --older-than days, both filters together, or all "
                               "when neither is given.")
    clear.add_argument("--model", metavar="M",
                       help="only entries of this litellm model string (as sent, e.g. "
                            "openai/gpt-4.1-mini)")
    clear.add_argument("--older-than", metavar="DAYS", type=flags.positive_float,
                       help="only entries stored more than DAYS days ago (fractions allowed)")
    for action in (stats, clear):
        action.add_argument("--cache-dir", metavar="DIR",
                            help="cache directory (default .dagtui)")
    p.set_defaults(func=run, cache_parser=p)


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "cache_action", None)
    if action is None:
        args.cache_parser.print_help(sys.stderr)
        return ExitCode.USAGE
    directory = Path(args.cache_dir) if args.cache_dir else Path.cwd() / DEFAULT_DIR
    path = directory / FILENAME
    if not path.is_file():
        say(f"no cache at {path}" + ("; nothing removed" if action == "clear" else ""))
        return ExitCode.OK
    cache = Cache(directory)
    try:
        if action == "stats":
            print_stats(cache)
            return ExitCode.OK
        older = args.older_than * DAY if args.older_than is not None else None
        removed = cache.prune(model=args.model, older_than=older)
        if removed is None:
            say(f"dagtui cache: cannot change {path}: nothing removed", file=sys.stderr)
            return ExitCode.USAGE
        left = len(cache)
        say(f"removed {removed} {_entries(removed)} from {path} ({left} left)")
        return ExitCode.OK
    finally:
        cache.close()


def print_stats(cache: Cache) -> None:
    """The `stats` lines, plain text."""
    st = cache.stats()
    say(f"cache {st.path}: {st.entries} {_entries(st.entries)}, {_size(st.size)}")
    if st.oldest is not None and st.newest is not None:
        say(f"oldest {_when(st.oldest)}, newest {_when(st.newest)}")
    if st.models:
        width = max(len(m) for m in st.models)
        say("entries per model:")
        for model, count in st.models.items():
            say(f"  {model:<{width}}  {count:>7}")


def _entries(n: int) -> str:
    return "entry" if n == 1 else "entries"


def _size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(stamp))

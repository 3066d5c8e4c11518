"""`dagtui cache stats|clear`: look into the judge-answer cache, and prune it.

`stats` prints the entries, the size on disk, the entries per model and the oldest and
newest entry; `clear` removes the entries of one model (`--model`), those older than a
number of days (`--older-than`), both, or all when neither is given, and says how many went.
Both read the `cache.sqlite` of `--graph FILE`'s `.dagtui/` (the one its runs use), else the
nearest `.dagtui/` from the current directory upwards (`dagtui.workdir`), unless
`--cache-dir` says otherwise, and neither creates a cache that is not there. A damaged cache file is set aside
and replaced as it would be by a run (`dagtui.judges.cache`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from dagtui.commands import flags
from dagtui.exitcodes import ExitCode
from dagtui.judges.cache import FILENAME, Cache
from dagtui.text import say
from dagtui.workdir import workdir_for, workdir_from

DAY = 86400.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cache", help="the judge-answer cache: stats, or clear by model or age",
        description="Show or prune the cache of judge answers that `dagtui run` and "
        "`dagtui step` keep (default: the nearest .dagtui/cache.sqlite from here upwards).",
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
        where = action.add_mutually_exclusive_group()
        where.add_argument("--cache-dir", metavar="DIR",
                           help="cache directory (default: the nearest .dagtui from here "
                                "upwards)")
        where.add_argument("--graph", metavar="FILE",
                           help="the cache a graph's runs use (its .dagtui, see docs/files.md)")
    p.set_defaults(func=run, cache_parser=p)


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "cache_action", None)
    if action is None:
        args.cache_parser.print_help(sys.stderr)
        return ExitCode.USAGE
    directory = (Path(args.cache_dir) if args.cache_dir
                 else workdir_for(args.graph) if args.graph else workdir_from(Path.cwd()))
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

"""`dagtui merge REPORT.json...`: one summary, JUnit and exit code from a sharded run.

Each machine of a CI matrix runs `dagtui run ... --shard I/N --json shard-I.json`; a last
job merges the reports (`dagtui.report.merge`) and prints, writes and exits exactly as the whole run
would have: exit 0 all passed, 1 a case failed, 3 judge errors or a halted judge, 2 when the
reports cannot be read or are not the shards of one run (a shard missing or given twice).
"""

from __future__ import annotations

import argparse
import sys

from dagtui.exitcodes import ExitCode
from dagtui.text import say


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "merge", help="merge the JSON reports of a sharded run (--shard I/N) into one",
        description="Merge the JSON reports of `dagtui run --shard I/N` (graph or suite) "
                    "into one summary, JUnit XML and exit code, as the whole run gives.",
    )
    p.add_argument("reports", nargs="+", metavar="REPORT.json",
                   help="the JSON report of every shard (dagtui run --json)")
    p.add_argument("--junit", metavar="FILE", help="write the merged JUnit XML")
    p.add_argument("--json", metavar="FILE", dest="json_out",
                   help="write the merged JSON report")
    p.set_defaults(func=run)


def err(msg: str) -> None:
    say(f"dagtui merge: {msg}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from dagtui.report.merge import MergeError, describe, merge_files
    from dagtui.report.outputs import report_target_problems

    problems = report_target_problems(
        json_out=args.json_out, junit=args.junit,
        inputs={f"report #{k}": path for k, path in enumerate(args.reports, 1)})
    for problem in problems:
        err(problem)
    if problems:
        return ExitCode.USAGE
    try:
        merged, reports = merge_files(args.reports)
    except MergeError as exc:
        err(str(exc))
        return ExitCode.USAGE
    say(describe(reports), file=sys.stderr)
    from dagtui.report.summary import print_summary
    from dagtui.report.write import write_outcome

    for line in merged.halts():
        err(line)
    print_summary(merged, sys.stdout)
    try:
        write_outcome(merged, junit=args.junit, json_out=args.json_out)
    except OSError as exc:
        err(f"cannot write a report: {exc}")
        return ExitCode.USAGE
    return merged.exit_code()

"""`dagtui label GRAPH.toml`: label cases node by node, each label written as it is given.

Checked before the screen opens, so a mistake is one line and exit 2: the graph loads and
validates, the cases file loads (a cases file, not `[metric].cases` alone: the labels are
written into it), `--order uncertain` follows `calibrate --plan`. Labels already in the file that
`dagtui.labels.check` refuses are listed as warnings: those nodes are asked again.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from dagtui.exitcodes import ExitCode
from dagtui.text import say

if TYPE_CHECKING:
    from dagtui.run.spec import RunSpec


def register(sub: argparse._SubParsersAction) -> None:
    from dagtui.labels.session import ORDERS

    p = sub.add_parser(
        "label",
        help="label cases node by node in the terminal UI (the labels calibrate compares with)",
        description="Walk each case along your own path through GRAPH.toml: the verdict you "
        "give a node decides which node comes next (as calibrate's teacher forcing does). "
        "Each label is written into the cases file as it is given; labelling resumes at the "
        "first case with a node still to label.",
    )
    p.add_argument("graph", metavar="GRAPH.toml", help="graph file")
    p.add_argument("--cases", metavar="FILE",
                   help="cases file (JSONL, JSON or TOML) to label; default: [metric].cases")
    p.add_argument("--annotator", metavar="NAME",
                   help="write your labels as NAME's entry of each case's annotations list "
                   "(default: the case's own expected labels)")
    p.add_argument("--order", choices=ORDERS, default="file",
                   help="case order: file (default), disagreement (cases where the judge's "
                   "cached verdict differs from a label first), uncertain (calibrate --plan's "
                   "list first)")
    p.add_argument("--reveal", action="store_true",
                   help="show the judge's cached answer from the start (hidden by default, "
                   "so it does not anchor you; r toggles it)")
    p.add_argument("--relabel", action="store_true",
                   help="visit every node again, labelled or not")
    p.add_argument("--model", help="the judge model whose cached answers are shown "
                   "(default: as run and calibrate pick it)")
    p.add_argument("--api-base", help="the judge's endpoint (its cached answers are per "
                   "endpoint)")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="cache directory (default: the graph's .dagtui, see docs/files.md)")
    p.add_argument("--no-cache", action="store_true",
                   help="do not read the judge cache (no judge answers are shown)")
    p.set_defaults(func=run)


def err(msg: str) -> None:
    say(f"dagtui label: {msg}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from dagtui.commands.flags import run_spec
    from dagtui.commands.run import load_graph_and_cases
    from dagtui.labels.check import scan
    from dagtui.labels.session import cached_judge, open_session
    from dagtui.run.cases import CaseError, cases_source

    graph, cases, code = load_graph_and_cases(args.graph, args.cases)
    if code:
        return code
    path = cases_source(graph, args.graph, args.cases)
    assert path is not None  # load_graph_and_cases refused a graph without one
    for problem in scan(graph, cases):
        say(f"warning: {problem.format()} (asked again)", file=sys.stderr)
    spec = run_spec(args)  # the judge whose cached answers are shown, and its cache
    judge = None if spec.no_cache else cached_judge(graph, model=spec.model,
                                                    api_base=spec.api_base,
                                                    cache_dir=spec.cache_dir)
    planned = None
    if args.order == "uncertain":
        planned = _planned(args.graph, spec, graph, cases)
    try:
        session = open_session(graph, path, cases, order=args.order, judge=judge,
                               planned=planned, annotator=args.annotator,
                               relabel=args.relabel)
    except (OSError, ValueError) as exc:
        err(f"{path}: {exc}")
        return ExitCode.USAGE
    from dagtui.tui.app import label_app

    try:
        label_app(session, reveal=args.reveal, title=f"{args.graph} · {path}").run()
    except CaseError as exc:
        err(str(exc))
        return ExitCode.USAGE
    labelled = sum(len(labels.expected) for labels in session.labels)
    say(f"{path}: {labelled} labels in {len(cases)} cases "
        f"({session.done_cases()} fully labelled)")
    return ExitCode.OK


def _planned(shown: str, spec: RunSpec, graph: Any, cases: list[Any]) -> list[str]:
    """The case names in `calibrate --plan`'s order (`dagtui.calibration.plan`): the
    unlabelled cases to label first, then the rest; file order without a saved calibration.
    `shown`: the graph as named on the command line; `spec`: the command's run settings."""
    from dagtui.calibration.plan import uncertain_order
    from dagtui.calibration.saved import read_saved
    from dagtui.commands.calibrate_plan import plan_judge
    from dagtui.run.execute import open_run_cache
    from dagtui.workdir import calibration_file

    saved = read_saved(str(calibration_file(graph.path or shown)))
    cache = open_run_cache(spec, shown)
    judge = plan_judge(graph, saved, cache, model=spec.model, api_base=spec.api_base,
                       temperature=None)
    return uncertain_order(graph, cases, saved, judge)

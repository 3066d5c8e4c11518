"""`dagtui step GRAPH`: the step-through debugger for one test case (README "The debugger").

Everything that can be checked before the terminal UI opens is checked here, so a typo in a
flag or a case name is a one-line error with exit code 2, not a broken screen: the graph
loads and validates, the cases file loads, `--case` names a case, the judge can be built.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from dagtui.commands import flags
from dagtui.commands.python_opts import add_python_options
from dagtui.exitcodes import ExitCode
from dagtui.judges.factory import JUDGE_NAMES
from dagtui.text import say

if TYPE_CHECKING:
    from dagtui.run.spec import RunSpec


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "step",
        help="step through one test case in the terminal UI (prompts, verdicts, what-if)",
        description="Open the step debugger on GRAPH.toml with one case: each node's exact "
        "prompt, evidence, verdict and reason, usage; breakpoints, verdict overrides, edit a "
        "node and re-run from it.",
    )
    p.add_argument("graph", metavar="GRAPH.toml", help="graph file")
    p.add_argument("--case", metavar="NAME|INDEX",
                   help="case to step (name or 0-based index; default: the first)")
    p.add_argument("--cases", metavar="FILE",
                   help="cases file (JSONL, JSON or TOML); default: [metric].cases")
    p.add_argument("--judge", choices=JUDGE_NAMES, default=None,
                   help="who answers each node (default: labels when the cases carry labels, "
                   "else human); litellm uses --model")
    p.add_argument("--model", help="litellm model (implies --judge litellm)")
    p.add_argument("--api-base", help="API base URL for the litellm judge")
    cached = p.add_mutually_exclusive_group()
    cached.add_argument("--no-cache", action="store_true",
                        help="litellm judge: neither read nor write the response cache")
    cached.add_argument("--refresh", action="store_true",
                        help="litellm judge: ask again and overwrite the cached answers")
    p.add_argument("--trace", metavar="FILE",
                   help="open a saved trace read-only (with --judge replay: replay it live)")
    add_python_options(p)
    p.set_defaults(func=run)


def err(msg: str) -> None:
    say(f"dagtui step: {msg}", file=sys.stderr)


def prepare(args: argparse.Namespace) -> tuple[dict[str, Any] | None, int]:
    """Everything the app needs, or (None, exit code) after printing why not."""
    from dagtui.commands.run import refusal
    from dagtui.graph.analysed import CheckedGraph
    from dagtui.judges.factory import default_judge_name, make_judge
    from dagtui.report.trace import Trace
    from dagtui.run.cases import CaseError, select_case
    from dagtui.tui.debugger.cases import graph_cases
    from dagtui.tui.debugger.human import TuiHumanJudge

    checked = CheckedGraph.read(args.graph)
    code = refusal(checked)
    if code:
        return None, code
    graph = checked.require()
    cases, source, problem = graph_cases(graph, args.graph, args.cases)
    if problem:
        err(problem)
        return None, ExitCode.USAGE
    case = None
    if args.case is not None:
        if not cases:
            err("--case given but there is no cases file (--cases or [metric].cases)")
            return None, ExitCode.USAGE
        try:
            case = select_case(cases, args.case)
        except CaseError as exc:
            err(str(exc))
            return None, ExitCode.USAGE
    trace = None
    if args.trace:
        try:
            trace = Trace.load(args.trace)
        except (OSError, ValueError) as exc:
            err(f"cannot read trace {args.trace}: {exc}")
            return None, ExitCode.USAGE
    name = args.judge or ("litellm" if args.model else default_judge_name(cases))
    spec = flags.run_spec(args)

    def factory(which: str) -> Any:  # the screen gives the human judge its app when shown
        return make_judge(which, graph, model=spec.model, api_base=spec.api_base,
                          trace=trace, cache=_cache_for(which, spec, args.graph),
                          human=TuiHumanJudge)

    try:
        judge = factory(name)
    except ValueError as exc:
        err(str(exc))
        return None, ExitCode.USAGE

    return {
        "graph": graph, "graph_path": args.graph, "cases": cases, "case": case,
        "cases_source": source, "judge": judge, "judge_factory": factory,
        "trace": trace if name != "replay" else None, "python": spec.python,
        "checked": checked,  # the debugger's run trusts this check
    }, ExitCode.OK


def _cache_for(judge: str, spec: RunSpec, graph_path: str) -> Any:
    """The cache a litellm judge gets (`--no-cache`: none; `--refresh`: ask again and
    overwrite); opened only for that judge, so stepping with labels touches no file."""
    if judge != "litellm":
        return False
    from dagtui.run.execute import open_run_cache

    return open_run_cache(spec, graph_path)


def run(args: argparse.Namespace) -> int:
    ready, code = prepare(args)
    if ready is None:
        return code
    from dagtui.keyfile import KeymapError
    from dagtui.tui.keys import user_keymap

    try:  # DAGTUI_KEYS / keys.toml: one file for every screen
        keymap = user_keymap()
    except KeymapError as exc:
        err(str(exc))
        return ExitCode.USAGE
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        err("needs an interactive terminal")
        return ExitCode.USAGE
    from dagtui.tui.app import debugger_app

    graph = ready.pop("graph")
    path = ready.pop("graph_path")
    debugger_app(graph, path, keymap=keymap, **ready).run()
    return ExitCode.OK

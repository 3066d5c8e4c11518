"""`dagtui align GRAPH.toml --node N`: find wording or worked examples that make node N agree
better with the labels, prove it on held-out cases, and (`--write`) write it into the graph.

What is measured and how: `dagtui.calibration.align`. The judge flags are calibrate's. Exit
codes: 0 held-out kappa improved (and, with `--write`, the graph was written), 1 it did not
(nothing written unless `--force`) or `--budget` was spent first (the requests sent so far
are cached: the same command again resumes), 2 bad input or too few labels, 3 the judge could
not be used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from dagtui.commands.calibrate import cost_line
from dagtui.commands.flags import (
    add_call_flags,
    non_negative_int,
    positive_int,
    run_spec,
    temperature,
)
from dagtui.commands.python_opts import add_python_options
from dagtui.commands.run import err, halt_lines, load_graph_and_cases
from dagtui.exitcodes import ExitCode
from dagtui.report.outputs import write_document
from dagtui.text import say


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "align", help="improve one node's agreement with the labels, proven on held-out cases",
        description="Split node N's labelled cases into train and held-out, measure candidate "
                    "wordings and worked examples on train by teacher forcing, and measure the "
                    "best once on held-out (kappa and agreement before -> after, with 95 %% "
                    "intervals, and an exact McNemar test).")
    p.add_argument("graph", help="graph TOML file")
    p.add_argument("--node", required=True, help="the node to align")
    p.add_argument("--cases", help="labelled cases file; default: [metric].cases")
    p.add_argument("--holdout", type=_fraction, default=0.3,
                   help="share of each label's cases held out (0.3)")
    p.add_argument("--seed", type=int, default=None, help="split and bootstrap seed")
    p.add_argument("--method", choices=("examples", "rewrite", "both", "gepa"),
                   help="candidate kinds (default both, or only --try wordings when given); "
                        "gepa: GEPA's reflective search (pip install 'dagtui[align]')")
    p.add_argument("--candidates", type=positive_int, default=4, metavar="K",
                   help="example sets and rewrites each (4)")
    p.add_argument("--proposer", metavar="MODEL", help="rewriting model (default: the judge's)")
    p.add_argument("--try", dest="tries", action="append", default=[], metavar="TEXT",
                   help="a wording of your own to measure (repeatable)")
    p.add_argument("--budget", type=non_negative_int, metavar="CALLS",
                   help="send at most this many requests (cache hits are free); when spent, "
                        "stop and exit 1: the same command again resumes from the cache")
    p.add_argument("--dry-run", action="store_true", help="print the plan's calls, make none")
    p.add_argument("--write", action="store_true",
                   help="write the change into the graph when held-out kappa improved")
    p.add_argument("--force", action="store_true", help="with --write: write it anyway")
    p.add_argument("--json", metavar="FILE", dest="json_out", help="write everything as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write a pull-request-ready report")
    p.add_argument("--model", help="litellm model string (else DAGTUI_MODEL, else [metric].model)")
    p.add_argument("--api-base", help="API base URL (local or proxy endpoints)")
    p.add_argument("--temperature", type=temperature, default=0.0, help="judge temperature (0)")
    add_call_flags(p)
    add_python_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dagtui.calibration import stats
    from dagtui.calibration.align import (
        AlignRefused,
        a_align,
        plan_alignment,
        planned_calls,
        resolve_methods,
    )
    from dagtui.graph.analysed import CheckedGraph

    checked = CheckedGraph.read(args.graph)
    if checked.is_suite and not checked.unreadable:
        err(f"{args.graph} is a suite: align a node of one of its rule graphs")
        return ExitCode.USAGE
    graph, cases, code = load_graph_and_cases(checked, args.cases)
    if code:
        return code
    from dagtui.judges.factory import model_for

    spec = run_spec(args)  # the judge's settings and the cache as a run's
    model = model_for(graph, spec.model)
    seed = stats.SEED if args.seed is None else args.seed
    consent = spec.python
    methods = resolve_methods(args.method, args.tries)
    try:
        plan = plan_alignment(graph, args.node, cases, holdout=args.holdout, seed=seed,
                              python=consent)
    except AlignRefused as exc:
        err(f"{args.graph}: {exc}")
        return ExitCode.USAGE
    most = planned_calls(plan, tries=len(args.tries), methods=methods,
                         candidates=args.candidates)
    if args.dry_run:
        pool = len(args.tries) + args.candidates * len(methods)
        say(f"{graph.metric.name}: align {args.node}, dry run, model {model}\n"
            f"  split: {len(plan.split.train)} train, {len(plan.split.held_out)} held-out\n"
            f"  up to {most} calls (cache hits are free: --budget counts only requests sent): "
            f"the node as it is and {pool} candidate(s) on train, "
            f"{'1 proposer call, ' if 'rewrite' in methods else ''}2 measurements on "
            f"held-out, {plan.upstream_calls} task call(s) above the node\n"
            f"  {cost_line(model, plan.prompts, 1 + pool, most)}")
        return ExitCode.OK
    from dagtui.calibration.align_report import render_markdown, render_text
    from dagtui.report.outputs import report_target_problems, safe_json, safe_text
    from dagtui.run.execute import open_run_cache

    bad = report_target_problems(json_out=args.json_out, files={"--markdown": args.markdown},
                                 inputs={"graph file": args.graph})
    for problem in bad:
        err(problem)
    if bad:
        return ExitCode.USAGE
    original = Path(args.graph).read_text(encoding="utf-8") if args.write else None
    cache: Any = open_run_cache(spec, args.graph)
    try:
        result = asyncio.run(a_align(
            checked, args.node, cases, judge=model, holdout=args.holdout, seed=seed,
            method=args.method, candidates=args.candidates, proposer=args.proposer,
            tries=args.tries, concurrency=spec.concurrency, python=consent,
            api_base=spec.api_base, cache=False if cache is None else cache,
            timeout=spec.timeout, retries=spec.retries, temperature=spec.temperature or 0.0,
            budget=args.budget))
    except AlignRefused as exc:
        err(f"{args.graph}: {exc}")
        return ExitCode.USAGE
    if result.judge_unusable:
        for line in halt_lines(result.halt or "the judge could not be used", model):
            err(line)
        return ExitCode.JUDGE
    say(render_text(result), end="")
    if result.budget_spent:
        say(f"not finished: --budget {args.budget} spent after {result.calls} calls "
            f"({result.cache_hits} cache hits, free); the same command again resumes from the "
            "cache")
        return ExitCode.FAILURES
    for path, text in ((args.json_out, safe_json(result.to_dict()) + "\n"),
                       (args.markdown, safe_text(render_markdown(result)) if args.markdown
                        else "")):
        if path:
            write_document(Path(path), text)
    if not args.write:
        return ExitCode.OK if result.improved else ExitCode.FAILURES
    if result.aligned_graph is None or not (result.improved or args.force):
        say("not written: " + ("nothing to write" if result.aligned_graph is None
                               else "held-out kappa did not improve (--force writes anyway)"))
        return ExitCode.FAILURES
    return _write_back(args.graph, graph.path or args.graph, original or "", result)


def _write_back(shown: str, graph_path: str, original: str, result: Any) -> int:
    """The graph changed only at N (comments and the rest byte-identical: the
    comment-keeping render of the editor's save), and a saved calibration updated."""
    from dagtui.calibration.align_report import replace_in_calibration
    from dagtui.graph.tomlio import save_graph
    from dagtui.graph.tomlio.errors import SaveError
    from dagtui.report.outputs import safe_json
    from dagtui.safewrite import WriteRefused
    from dagtui.workdir import calibration_file

    try:
        save_graph(result.aligned_graph, graph_path, original_text=original)
    except (SaveError, WriteRefused, OSError) as exc:
        err(f"{shown}: not written: {exc}")
        return ExitCode.USAGE
    say(f"wrote {shown} (node {result.node})")
    target = calibration_file(graph_path)
    if target.is_file():
        try:
            saved = json.loads(target.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            err(f"could not update {target}: {exc}")
            return ExitCode.OK
        write_document(target, safe_json(replace_in_calibration(saved, result)) + "\n")
        say(f"updated {target}")
    return ExitCode.OK if result.improved else ExitCode.FAILURES

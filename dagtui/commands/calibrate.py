"""`dagtui calibrate GRAPH.toml`: how far each node's judge agrees with the human labels, and
with itself (see `dagtui.calibration.core` for what is measured and how).

Prints a per-node report; `--markdown F` writes the same for a pull-request comment, `--json F`
everything. The latest result is also saved in the graph's `.dagtui/` (where its cache lives:
`.dagtui/calibration/<graph's path from there>.json`, `dagtui.workdir`), for the editor to
show later, whichever directory either runs from. `--min-kappa K`
is a CI guard for a judge-model change: exit 1 when any judgement node's kappa is below K.
`--dry-run` makes no call: it walks the labels' path of every case and prints the calls the
teacher-forced passes would make (and their cost where litellm knows the model's price).
`--check` makes no call either: it compares the saved calibration (or `--calibration FILE`)
with the graph, the judge (`--model`, `--api-base`, `--temperature`, as a run would use
them) and the labels of now, and says per node fresh, stale (why) or missing; exit 1 when
any node is stale or missing (or below `--min-kappa`): a CI gate an edit cannot slip past
(`dagtui.calibration.fingerprint`).
`--plan [--target-width W]` makes no call either: from the saved calibration and the judge
cache, the labels each node still needs and the unlabelled cases to label first
(`dagtui.calibration.plan`). `--annotator NAME` compares the judge with one person's labels
(a case's `annotations`); every report shows each pair of annotators' agreement beside the
judge's (`dagtui.calibration.annotators`).
`--probes order,padding` asks every labelled judgement node again with its options reordered
and its case material padded by neutral filler (`dagtui.calibration.probes`); `--max-flip R`
exits 1 when a node's verdicts flip more often than R under a probe.
Bad labels (`dagtui.labels.check`) are exit 2 before any call; `--lenient` ignores them with a
warning each, counted in the report.
Exit codes: 0 ok, 1 a node below `--min-kappa` or above `--max-flip` (or an invalid graph), 2 bad input, 3 judge
errors left no node measurable or ended every case.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from dagtui.commands import flags
from dagtui.commands.flags import (
    add_call_flags,
    interval_width,
    kappa,
    positive_int,
    share,
    temperature,
)
from dagtui.commands.label_opts import add_lenient_option, checked_case_list
from dagtui.commands.python_opts import add_python_options
from dagtui.commands.run import err, halt_lines, load_graph_and_cases
from dagtui.exitcodes import ExitCode
from dagtui.report.outputs import write_document
from dagtui.text import counted, say

#: completion tokens assumed per answer when estimating cost (a reason plus a verdict)
ANSWER_TOKENS = 80


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate", help="per-node agreement of the judge with human labels (and itself)",
        description="Judge every labelled node with teacher forcing, run the judge's own path "
                    "against expected_score with blame, and measure self-agreement over "
                    "--samples.",
    )
    p.add_argument("graph", help="graph TOML file")
    p.add_argument("--cases", help="labelled cases file; default: [metric].cases")
    p.add_argument("--model", help="litellm model string (else DAGTUI_MODEL, else [metric].model)")
    p.add_argument("--api-base", help="API base URL (local or proxy endpoints)")
    p.add_argument("--samples", type=positive_int, default=1,
                   help="answers per node and case (sample index in the cache key) (1)")
    p.add_argument("--temperature", type=temperature, default=0.0,
                   help="judge temperature (0: samples measure only provider nondeterminism)")
    p.add_argument("--min-kappa", type=kappa, metavar="K",
                   help="exit 1 when any judgement node's Cohen's kappa is below K")
    p.add_argument("--probes", metavar="LIST",
                   help="bias probes, comma-separated: order (non-binary options reversed and "
                        "rotated), padding (case text padded by neutral filler, +50%%)")
    p.add_argument("--max-flip", type=share, metavar="R",
                   help="with --probes: exit 1 when any node's verdicts flip under a probe "
                        "more often than R (0..1)")
    p.add_argument("--json", metavar="FILE", dest="json_out", help="write everything as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write a pull-request-ready report")
    p.add_argument("--dry-run", action="store_true",
                   help="print the calls it would make (and their cost), make none")
    p.add_argument("--check", action="store_true",
                   help="make no call: is the saved calibration still fresh for this graph, "
                        "judge and labels? exit 1 when a node is stale, missing or below "
                        "--min-kappa")
    p.add_argument("--annotator", metavar="NAME",
                   help="compare the judge with this annotator's labels (a case's "
                        "'annotations') instead of the adjudicated 'expected'")
    p.add_argument("--plan", action="store_true",
                   help="make no call: per node, labelled cases, the kappa interval's width "
                        "and the labels still needed to reach --target-width, then the "
                        "unlabelled cases to label first (from the saved calibration and "
                        "the judge cache)")
    p.add_argument("--target-width", type=interval_width, metavar="W",
                   help="with --plan: the kappa interval width to aim at (0.2)")
    p.add_argument("--calibration", metavar="FILE",
                   help="with --check or --plan: the calibration to read (a --json file) "
                        "instead of the one saved under .dagtui/calibration/")
    add_call_flags(p)
    add_lenient_option(p)
    add_python_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.temperature < 0:
        err("--temperature must be >= 0")
        return ExitCode.USAGE
    from dagtui.graph.analysed import CheckedGraph

    checked = CheckedGraph.read(args.graph)  # read and parsed once, for both questions
    # a suite that parses is refused in one line; one that does not gets its syntax error
    if checked.is_suite and not checked.unreadable:
        err(f"{args.graph} is a suite: calibrate one of its rule graphs (each has its own "
            "nodes and labels)")
        return ExitCode.USAGE
    probes, code = _probes_of(args)
    code = code or _plan_flags(args)
    if code:
        return code
    if args.check:
        from dagtui.commands.calibrate_check import check

        return check(args, checked)
    graph, cases, code = load_graph_and_cases(checked, args.cases)
    if code:
        return code
    spec = flags.run_spec(args)
    cases, ignored, code = checked_case_list(graph, cases, spec.lenient)
    if code:
        return code
    if args.plan:
        from dagtui.commands.calibrate_plan import plan_command

        return plan_command(args, spec, graph, cases)
    labelled, code = _compared(cases, args.annotator)
    if code:
        return code
    if not any(c.expected for c in labelled):
        whose = f"annotator {args.annotator!r}" if args.annotator else "'expected'"
        err(f"{args.graph}: no case has labels ({whose}): nothing to calibrate against")
        return ExitCode.USAGE
    from dagtui.judges.factory import model_for

    model = model_for(graph, spec.model)
    if args.dry_run:
        # the metric's name and the model come from a file and a flag: shown, never obeyed
        say(dry_run(checked, labelled, model, spec.samples, spec.python, probes), end="")
        return ExitCode.OK
    from dagtui.calibration.core import a_calibrate, note_ignored
    from dagtui.calibration.report import render_markdown, render_text
    from dagtui.report.outputs import report_target_problems, safe_json, safe_text
    from dagtui.run.cases import CaseError, cases_source
    from dagtui.run.execute import open_run_cache

    bad_outputs = report_target_problems(
        json_out=args.json_out, files={"--markdown": args.markdown},
        inputs={"graph file": args.graph,
                "cases file": cases_source(graph, graph.path or args.graph, args.cases)})
    for problem in bad_outputs:  # found now, not after every judge call
        err(problem)
    if bad_outputs:
        return ExitCode.USAGE
    cache: Any = open_run_cache(spec, args.graph)
    bar = _progress_bar()
    try:  # the judge's settings as a run's (`dagtui.run.spec.RunSpec`)
        cal = asyncio.run(a_calibrate(
            checked, cases, judge=model, samples=spec.samples, concurrency=spec.concurrency,
            api_base=spec.api_base, cache=False if cache is None else cache,
            timeout=spec.timeout, retries=spec.retries, temperature=spec.temperature or 0.0,
            python=spec.python, progress=bar.update if bar is not None else None,
            probes=probes, annotator=args.annotator))
    except CaseError as exc:
        err(str(exc))
        return ExitCode.USAGE
    finally:
        if bar is not None:
            bar.close()
    note_ignored(cal, ignored)
    if cal.judge_unusable:  # the probe failed: one line, not a report of nothing
        for line in halt_lines(cal.halt or "the judge could not be used", model):
            err(line)
        return ExitCode.JUDGE
    say(render_text(cal), end="")  # names, labels, judge text: shown, never obeyed
    data = safe_json(cal.to_dict()) + "\n"
    saved = save_latest(graph.path or args.graph, data)
    for path, text in ((args.json_out, data),
                       (args.markdown, safe_text(render_markdown(cal, min_kappa=args.min_kappa,
                                                          max_flip=args.max_flip)))):
        if path:
            write_document(Path(path), text)
    if saved:
        say(f"saved {saved}")
    failed = False
    if args.min_kappa is not None:
        below = cal.below(args.min_kappa)
        if below:
            say(f"below --min-kappa {args.min_kappa:g}: " + ", ".join(
                f"{n} ({cal.nodes[n].kappa:.2f})" for n in below))
            failed = True
    if args.max_flip is not None and cal.probes is not None:
        above = cal.probes.above(args.max_flip)
        if above:
            say(f"above --max-flip {args.max_flip:g}: " + ", ".join(
                f"{n} ({probe} {rate:.0%})" for n, probe, rate in above))
            failed = True
    return ExitCode.FAILURES if failed else calibration_exit(cal)


def _compared(cases: list[Any], annotator: str | None) -> tuple[list[Any], int]:
    """(the cases labelled as the judge is compared with them, 0), or an error printed and
    exit 2 when no case is annotated by `annotator` (`--annotator`)."""
    from dagtui.calibration.annotators import compared
    from dagtui.run.cases import CaseError

    try:
        return compared(cases, annotator), ExitCode.OK
    except CaseError as exc:
        err(str(exc))
        return [], ExitCode.USAGE


def _plan_flags(args: argparse.Namespace) -> int:
    """0, or an error printed and exit 2: `--plan` with a flag that measures or checks,
    `--target-width` without `--plan`."""
    clash = [flag for flag, on in (("--check", args.check), ("--dry-run", args.dry_run),
                                   ("--probes", args.probes is not None),
                                   ("--min-kappa", args.min_kappa is not None)) if on]
    if args.plan and clash:
        err(f"--plan makes no call and measures nothing: it does not take {clash[0]}")
        return ExitCode.USAGE
    if args.target_width is not None and not args.plan:
        err("--target-width needs --plan")
        return ExitCode.USAGE
    return ExitCode.OK


def _probes_of(args: argparse.Namespace) -> tuple[list[str], int]:
    """`--probes` as a list (and 0), or an error printed and exit 2: an unknown probe,
    `--max-flip` without probes, probes with `--check` (which makes no call)."""
    from dagtui.calibration.probes import parse_probes

    if args.probes is None:
        if args.max_flip is not None:
            err("--max-flip needs --probes (e.g. --probes order,padding)")
            return [], ExitCode.USAGE
        return [], ExitCode.OK
    if args.check:
        err("--probes asks the judge again; --check makes no call: use one or the other")
        return [], ExitCode.USAGE
    try:
        return parse_probes(args.probes), ExitCode.OK
    except ValueError as exc:
        err(f"--probes: {exc}")
        return [], ExitCode.USAGE


def calibration_exit(cal: Any) -> int:
    """3 (`ExitCode.JUDGE`) when judge errors left nothing measured: no node measured, or
    every case's own path ended in an error (a judge that answers the first node and fails
    the rest measures one node but scores no case); else 0."""
    measured = any(n.cases for n in cal.nodes.values())
    errors = any(n.errors for n in cal.nodes.values())
    all_failed = bool(cal.outcomes) and all(o.error is not None for o in cal.outcomes)
    return ExitCode.JUDGE if errors and (not measured or all_failed) else ExitCode.OK


class _Bar:
    """A transient rich progress bar over every case run (teacher forcing per sample, and
    the free run), on a terminal only: CI logs get the report, not a thousand lines."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self.bar = Progress("calibrating", BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), transient=True)
        self.task = self.bar.add_task("runs", total=None)
        self.bar.start()

    def update(self, done: int, total: int) -> None:
        self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        self.bar.stop()


def _progress_bar() -> _Bar | None:
    import os

    return _Bar() if sys.stdout.isatty() and not os.environ.get("CI") else None


def save_latest(graph_path: str, data: str) -> Path | None:
    """Keep the latest result where the editor looks for it, in the graph's `.dagtui/`
    (`dagtui.workdir.calibration_file`; None if it cannot be written: saving is a
    convenience and must not fail a CI run that printed its report)."""
    from dagtui.workdir import calibration_file

    target = calibration_file(graph_path)
    try:
        write_document(target, data)
    except OSError as exc:
        err(f"could not save {target}: {exc}")
        return None
    return target


def dry_run(graph: Any, cases: list[Any], model: str, samples: int, consent: Any = None,
            probes: list[str] | None = None) -> str:
    """The calls calibration would make, from the labels' path of every case (no calls).
    `graph`: a Graph, or a `CheckedGraph` (then not validated again). `probes`: the bias
    probes asked for (their calls are counted on their own line)."""
    from dagtui.calibration.core import check_labels
    from dagtui.judges.labels import LabelsJudge
    from dagtui.kinds import kind_of
    from dagtui.run.engine import Engine

    engine = Engine(graph, LabelsJudge(), python=consent)
    graph = engine.graph

    async def walk() -> list[Any]:
        return [await engine.run(c, overrides=check_labels(graph, c), check=False)
                for c in cases]

    results = asyncio.run(walk())
    prompts: list[list[dict[str, str]]] = []
    off_path = 0
    llm_nodes = [n for n, node in graph.nodes.items() if kind_of(node).run is None]
    for r in results:
        on_path = [s for s in r.steps if s.node in llm_nodes and s.prompt]
        prompts += [s.prompt for s in on_path]
        off_path += len(llm_nodes) - len(on_path)
    steps_calls = sum(1 for node in graph.nodes.values()
                      if kind_of(node).steps and not getattr(node, "evaluation_steps", None))
    forced = len(prompts) * samples
    lines = [f"{graph.metric.name}: dry run, {counted(len(cases), 'case')}, "
             f"{counted(samples, 'sample')}, "
             f"model {model}",
             f"  teacher forcing: {len(prompts)} calls per sample x {samples} = {forced} calls",
             f"  free run: at most {off_path} more (nodes off the labelled path, asked only "
             "where the judge leaves it); the rest are shared with sample 0"]
    if steps_calls:
        lines.append(f"  G-Eval steps generation: {steps_calls} call(s)")
    probe_calls = 0
    if probes:
        from dagtui.calibration.probes import variants

        judged = [graph.nodes[s.node] for r in results for s in r.steps if s.prompt]
        probe_calls = sum(v.applies(node) for v in variants(graph, probes) for node in judged)
        lines.append(f"  bias probes ({', '.join(probes)}): at most {probe_calls} calls "
                     "(sample 0; a request two cases share is asked once)")
    lines.append("  " + cost_line(model, prompts, samples,
                                   forced + off_path + steps_calls + probe_calls))
    return "\n".join(lines) + "\n"


def cost_line(model: str, prompts: list[list[dict[str, str]]], samples: int,
              most: int) -> str:
    """The dry run's cost line: `samples` samples of `prompts` priced by litellm's token
    counter and price map (unknown where it has no price), and `most` calls at most
    (calibrate's and align's dry runs print it)."""
    from dagtui.judges.litellm_judge import import_litellm

    litellm = import_litellm()
    try:
        tokens = sum(litellm.token_counter(model=model, messages=p) for p in prompts)
        cin, cout = litellm.cost_per_token(model=model, prompt_tokens=tokens,
                                           completion_tokens=ANSWER_TOKENS * len(prompts))
    except Exception:  # noqa: BLE001 - litellm does not know this model's price
        return f"cost: unknown (litellm has no price for {model}); up to {most} calls"
    per_sample = cin + cout
    return (f"cost: about ${per_sample * samples:.4f} for teacher forcing ({tokens} prompt "
            f"tokens per sample, {ANSWER_TOKENS} answer tokens per call assumed; cache hits "
            f"cost nothing), up to {most} calls in all")

"""`dagtui run GRAPH --cases FILE`: a dataset through a real judge, for CI.

Checks the graph (errors: exit 1) and every case (missing fields: exit 2) before the first
call, runs cases concurrently (in this process, or spread over Dask workers — `--workers`
processes or a `--scheduler` cluster — so litellm's per-call CPU is not bound to one core;
see `dagtui.run.cluster`) with a progress bar
on a terminal (one plain line per case when not a terminal or when `CI` is set), prints a
summary, writes JUnit / JSON / traces on request. Cases that carry labels have them checked
first (`dagtui.labels.check`: a bad one is exit 2, `--lenient` ignores it with a warning).
Exit codes: 0 all passed; 1 a case failed or the graph is invalid; 2 bad input (files,
flags, cases, labels); 3 no case failed but at least one ended in a judge error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, TextIO

from dagtui.commands import flags
from dagtui.commands.label_opts import add_lenient_option, checked_case_stream
from dagtui.commands.python_opts import add_python_options, python_consent
from dagtui.exitcodes import ExitCode
from dagtui.graph.analysed import CheckedGraph
from dagtui.text import counted, for_markup, for_terminal, say, shorten


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run", help="run a cases file through a judge model (CI: JUnit/JSON, exit codes)",
        description="Run every case of a cases file through the graph with a litellm judge.",
    )
    p.add_argument("graph", help="graph TOML file")
    p.add_argument("--cases", help="cases file (JSONL, JSON or TOML); default: [metric].cases")
    p.add_argument("--model", help="litellm model string (else DAGTUI_MODEL, else [metric].model)")
    p.add_argument("--api-base", help="API base URL (local or proxy endpoints)")
    p.add_argument("--via", choices=("auto", "litellm"), default="auto",
                   help="how requests reach the model: auto (OpenAI and openai/NAME models "
                        "over a plain HTTP client, every other provider through litellm) or "
                        "litellm (everything through litellm)")
    p.add_argument("--concurrency", type=flags.positive_int, default=8,
                   help="cases and calls in flight (8)")
    p.add_argument("--workers", type=flags.workers, default="1", metavar="N",
                   help="Dask worker processes (a LocalCluster; needs dagtui[dask]) sharing "
                        "the cases, --concurrency and --rpm, so litellm's "
                        "per-call CPU uses several cores; 'auto' = min(cores, 4) for 160+ "
                        "cases at --concurrency 32+ (for a suite: each rule's admitted cases), "
                        "else 1: in process")
    p.add_argument("--shard", type=flags.shard, metavar="I/N",
                   help="run only shard I of N (a stable split by case name, for a CI "
                        "matrix); `dagtui merge` joins the shards' --json reports")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the cases on the Dask cluster at ADDRESS (tcp://host:8786; "
                        "else DAGTUI_SCHEDULER), using all its workers; needs dagtui[dask]")
    p.add_argument("--timeout", type=flags.positive_float, default=60.0,
                   help="seconds per judge call (60)")
    p.add_argument("--retries", type=flags.non_negative_int, default=3,
                   help="retries per call on 429/5xx/timeouts (3)")
    p.add_argument("--rpm", type=flags.rpm, metavar="N",
                   help="at most N judge requests a minute over the whole run (with --workers "
                        "each worker keeps to its share)")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML")
    p.add_argument("--json", metavar="FILE", dest="json_out", help="write the report as JSON")
    p.add_argument("--trace-dir", metavar="DIR", help="write one trace JSON per case (for a suite: per evaluated case and rule)")
    flags.add_cache_flags(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no per-case lines")
    p.add_argument("--fail-on-unscored", action="store_true",
                   help="exit 1 when a case is unscored (a judge could not tell, and the "
                        "node's unsure ends the case); else such cases are counted apart")
    p.add_argument("--measure-ungated", action="store_true",
                   help="suites: also run every active rule on every case, cache off, to "
                        "measure the calls gating saved (else they are estimated)")
    add_lenient_option(p)
    add_python_options(p)
    p.set_defaults(func=run)


#: the cases of a list whose fields are looked at, and the warnings shown
MISSPELT_CHECKED = 10_000
MISSPELT_SHOWN = 10


def err(msg: str) -> None:
    """One error line on stderr, terminal-safe (`dagtui.text.say`): names, paths and judge
    text in it are shown, never obeyed."""
    say(f"dagtui: {msg}", file=sys.stderr)


def refusal(checked: CheckedGraph) -> int:
    """0 when the graph can run; else its errors go to stderr and the exit code says why:
    2 when the file did not read or parse, 1 when the graph has errors."""
    if checked.ok:
        return ExitCode.OK
    for d in checked.errors:
        say(d.format(), file=sys.stderr)
    return ExitCode.USAGE if checked.unreadable else ExitCode.FAILURES


def load_graph_and_cases(graph: str | CheckedGraph, cases_arg: str | None, *,
                         lazy: bool = False) -> tuple[Any, Any, int]:
    """(graph, cases, exit code): exit code is 0 when both loaded. `graph` is a path or a
    graph file already read (`dagtui.graph.analysed`), checked here once. `lazy`: the cases as a
    checked `dagtui.run.case_stream.CaseStream` (read again per pass), else a list."""
    from dagtui.run.case_stream import open_cases
    from dagtui.run.cases import CaseError, cases_source, load_cases

    checked = graph if isinstance(graph, CheckedGraph) else CheckedGraph.read(graph)
    graph_path = checked.file or ""
    code = refusal(checked)
    if code:
        return None, None, code
    loaded = checked.require()
    cases_path = cases_source(loaded, graph_path, cases_arg)
    if cases_path is None:
        err(f"{graph_path}: no --cases given and [metric].cases is not set")
        return loaded, None, ExitCode.USAGE
    try:
        cases = open_cases(cases_path) if lazy else load_cases(cases_path)
    except CaseError as exc:
        err(str(exc))
        return loaded, None, ExitCode.USAGE
    if not cases:
        err(f"{cases_path}: no cases")
        return loaded, None, ExitCode.USAGE
    warn_misspelt(loaded, cases)
    return loaded, cases, ExitCode.OK


#: the widest line of the run's summary (a terminal's or CI log's 80 columns)
SUMMARY_WIDTH = 80
#: how much of a judge's halt (often the provider's whole error text) a message shows
HALT_WIDTH = 200


def halt_lines(halt: str, model: Any = None) -> list[str]:
    """Why the judge could not be used, cut to `HALT_WIDTH` (litellm's provider text runs to
    hundreds of characters), and, when `model` looks like a misspelling of a model litellm
    lists (DAG118), that model: the one line that says what to fix."""
    from dagtui.graph.validate.models import unknown_model

    lines = [shorten(halt, HALT_WIDTH, flat="squash")]
    near = unknown_model(model) if isinstance(model, str) else None
    if near is not None:
        lines.append(f"model '{model}' is not in litellm's model list: did you mean "
                     f"'{near}'? (set [metric].model, --model or DAGTUI_MODEL)")
    return lines


def warn_misspelt(graph: Any, cases: Any) -> None:
    """A warning line for each case field that looks like a misspelt one (`actual_ouput`),
    unless the graph reads that name itself (a check's `param`): the field is kept, but
    the one meant stays empty, and the run would say only that it is missing."""
    from dagtui.kinds import kind_of
    from dagtui.run.cases import misspelt_fields

    read: set[str] = set()
    for node in graph.nodes.values():
        inputs = kind_of(node).inputs
        read.update(getattr(node, "params", None) or [], inputs(node) if inputs else [])
    found = cases.misspelt if hasattr(cases, "misspelt") else [
        pair for case in cases[:MISSPELT_CHECKED] for pair in misspelt_fields(case)]
    lines = [line for key, line in found if key not in read]
    for line in lines[:MISSPELT_SHOWN]:
        print(f"dagtui: warning: {line}", file=sys.stderr)
    if len(lines) > MISSPELT_SHOWN:
        print("dagtui: warning: ... and more fields like these", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from dagtui.run.cases import CaseError

    checked = CheckedGraph.read(args.graph)  # read and parsed once, for both questions
    if checked.is_suite:  # a suite of rules: dagtui.suite runs it
        from dagtui.commands.suite_run import run_suite_command

        return run_suite_command(args, read=checked)
    graph, cases, code = load_graph_and_cases(checked, args.cases, lazy=True)
    if code:
        return code
    cases, positions = take_shard(cases, getattr(args, "shard", None))
    try:  # labels (`expected`, `expected_score`) feed the agreement lines: checked first
        cases, ignored, code = checked_case_stream(graph, cases,
                                                     getattr(args, "lenient", False))
    except CaseError as exc:  # a line that turned bad since the first pass
        err(str(exc))
        return ExitCode.USAGE
    if code:
        return code
    from dagtui.report.outputs import report_target_problems, write_report
    from dagtui.run.cases import cases_source

    bad_outputs = report_target_problems(
        json_out=args.json_out, junit=args.junit, trace_dir=args.trace_dir, results_file=True,
        inputs={"graph file": args.graph,
                "cases file": cases_source(graph, graph.path or args.graph, args.cases)})
    for problem in bad_outputs:  # found now, not after an hour of judge calls
        err(problem)
    if bad_outputs:
        return ExitCode.USAGE
    if args.concurrency < 1 or args.retries < 0 or args.timeout <= 0:
        err("--concurrency must be >= 1, --retries >= 0, --timeout > 0")
        return ExitCode.USAGE
    from dagtui.run.cluster import (
        ClusterError,
        DaskMissing,
        evaluate_in_workers,
        parse_workers,
        require_dask,
        resolve_workers,
        scheduler_address,
    )

    try:
        workers_arg = parse_workers(args.workers)
    except ValueError as exc:
        err(str(exc))
        return ExitCode.USAGE
    from dagtui.judges.cache import open_cache
    from dagtui.judges.factory import make_judge
    from dagtui.run.engine import Engine

    cache = open_cache(args.cache_dir, enabled=not args.no_cache, refresh=args.refresh,
                       graph=args.graph)
    judge = make_judge(args.model, graph, api_base=args.api_base, cache=cache,
                       concurrency=args.concurrency, timeout=args.timeout, retries=args.retries,
                       via=getattr(args, "via", "auto"),
                       **({"rpm": args.rpm} if getattr(args, "rpm", None) else {}))
    engine = Engine(checked, judge, python=python_consent(args))  # checked once, above
    workers = resolve_workers(workers_arg, len(cases), judge)
    from dagtui.judges.litellm_judge import LiteLLMJudge

    scheduler = scheduler_address(getattr(args, "scheduler", None))
    on_dask = isinstance(judge, LiteLLMJudge) and (workers > 1 or scheduler is not None)
    if on_dask:
        try:
            require_dask()
        except DaskMissing as exc:
            err(str(exc))
            return ExitCode.USAGE
    out = sys.stdout
    from dagtui.calibration.summary import Agreement  # labelled cases: no extra calls
    from dagtui.labels.check import ignored_summary
    from dagtui.report.stream import Finished, ResultLog, ResultsStream, results_path

    try:  # --json out.json: out.results.jsonl gets each case as it finishes
        stream = ResultsStream(results_path(args.json_out)) if args.json_out else None
    except OSError as exc:
        err(f"cannot write {results_path(args.json_out)}: {exc}")
        return ExitCode.USAGE
    progress = Progress(len(cases), out, quiet=args.quiet,
                        note=getattr(judge, "rate_note", None))

    traces = None
    if args.trace_dir:  # written as each case ends, while its details are in memory
        from dagtui.report.trace import Trace, trace_file_name

        def traces(i: int, case: Any, r: Any) -> None:
            Trace.of(graph, case, judge, r).save(Path(args.trace_dir) / trace_file_name(i, r.case))

    agreement = Agreement(graph)
    finished = Finished(stream, progress, traces=traces, agreement=agreement)
    log = ResultLog()  # the results on disk, in dataset order: memory stays flat

    try:
        if on_dask:  # a LocalCluster of `workers` processes, or the cluster at `scheduler`
            report = evaluate_in_workers(engine, cases, workers=workers, scheduler=scheduler,
                                         concurrency=args.concurrency, on_case=finished,
                                         log=log)
        else:
            report = asyncio.run(_go(engine, cases, args.concurrency, finished, log))
    except (CaseError, ClusterError) as exc:
        progress.close()
        err(str(exc))
        return ExitCode.USAGE
    finally:
        if stream is not None:
            stream.close()
    progress.close()
    if positions is not None:
        from dagtui.report.merge import shard_info

        report.shard = shard_info(args.shard, positions)
    report.fail_on_unscored = bool(getattr(args, "fail_on_unscored", False))
    from dagtui.calibration.saved import run_calibration, summary_lines

    report.calibration = run_calibration(graph, judge.describe(), report.count("pass"),
                                         report.count("fail"))
    try:
        for failed in (finished.error, stream.error if stream is not None else None):
            if failed is not None:  # a line, or putting the results file in place
                raise failed
        if args.junit:
            write_report(args.junit, report.junit_parts())
        if args.json_out:
            write_report(args.json_out, report.json_parts(steps=True))
    except OSError as exc:  # changed since the check before the run (full disk, ...)
        err(f"cannot write a report: {exc}")
        print_summary(report, out)
        return ExitCode.USAGE
    from dagtui.judges.health import is_unusable

    if is_unusable(report.halt) and not (report.count("pass") or report.count("fail")):
        for line in halt_lines(report.halt or "", getattr(judge, "model", None)):
            err(line)  # the judge never worked: a line or two, not a page of zeros
        return report.exit_code()
    print_summary(report, out)
    for line in [*summary_lines(report.calibration), *agreement.lines()]:
        say(_wrapped(line), file=out)
    if ignored:
        say(_wrapped(ignored_summary(ignored)), file=out)
    return report.exit_code()


def take_shard(cases: Any, shard: Any) -> tuple[Any, list[int] | None]:
    """(the cases of `--shard I/N`, their positions in the dataset); (cases, None) unsharded.
    Says on stderr how many cases the shard holds (it may hold none: that run passes)."""
    if shard is None:
        return cases, None
    from dagtui.run.case_stream import CaseStream

    if isinstance(cases, CaseStream):  # still streamed: the shard's cases, read per pass
        part = cases.sharded(shard)
        say(f"shard {shard}: {len(part)} of {counted(part.total or 0, 'case')}",
            file=sys.stderr)
        return part, part.positions
    positions = [i for i, case in enumerate(cases) if shard.holds(case.name)]
    say(f"shard {shard}: {len(positions)} of {counted(len(cases), 'case')}", file=sys.stderr)
    return [cases[i] for i in positions], positions


async def _go(engine: Any, cases: Any, concurrency: int, on_case: Any, log: Any) -> Any:
    """The in-process batch. A model judge loads litellm on its first call the cache cannot
    answer, and the report's clock leaves that out: a rerun from the cache imports nothing."""
    from dagtui.run.batch import evaluate_cases

    return await evaluate_cases(engine, cases, concurrency=concurrency, on_case=on_case,
                                log=log)


class Progress:
    """A rich progress bar on a terminal; plain per-case lines otherwise (or under CI). Each
    update shows the judge calls per second so far and the time left at that pace (ETA), so
    a long run on a large dataset says when it will end."""

    def __init__(self, total: int, out: TextIO, *, quiet: bool = False,
                 note: Any = None) -> None:
        import time

        self.total = total
        self.done = 0
        self.calls = 0
        self.started = time.perf_counter()
        self.out = out
        self.quiet = quiet
        #: () -> str shown with each update when not empty ("rpm 60" while that binds)
        self.note = note
        self.bar: Any = None
        tty = hasattr(out, "isatty") and out.isatty() and not os.environ.get("CI")
        if tty and not quiet:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self.bar = Progress("[progress.description]{task.description}", BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(), transient=True)
            self.task = self.bar.add_task("cases", total=total)
            self.bar.start()

    def add(self, result: Any) -> None:
        self.done += 1
        self.calls += result.calls
        note = ", ".join(n for n in (self.note() if self.note is not None else "",
                                     self.pace()) if n)
        if self.bar is not None:
            self.bar.update(self.task, advance=1,
                            description=f"{result.status:5} {for_markup(result.case[:30])}"
                            + (f" \\[{for_markup(note)}]" if note else ""))
            return
        if self.quiet or result.status == "not_run":  # the summary says why, once
            return
        score = "  -  " if result.score is None else f"{result.score:.2f}"
        line = f"[{self.done}/{self.total}] {result.status.upper():5} {score} {result.case}"
        if note:
            line += f"  [{note}]"
        if result.error:
            text = shorten(result.error, 160)
            line += f"  ({result.error_kind}: {text})"
        say(line, file=self.out, flush=True)  # case names, judge errors: shown, not obeyed

    def pace(self) -> str:
        """"12.5 calls/s, ETA 3m20s" from the cases done so far ("" before any call)."""
        import time

        elapsed = time.perf_counter() - self.started
        if not self.done or elapsed <= 0:
            return ""
        parts = [f"{self.calls / elapsed:.1f} calls/s"] if self.calls else []
        left = self.total - self.done
        if left > 0:
            eta = round(elapsed / self.done * left)
            parts.append("ETA " + (f"{eta // 60}m{eta % 60:02d}s" if eta >= 60 else f"{eta}s"))
        return ", ".join(parts)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _fmt_s(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f}ms" if value < 1 else f"{value:.2f}s"


def _wrapped(text: str) -> str:
    """Each line of `text` longer than `SUMMARY_WIDTH` wrapped at a space, its rest indented
    under its start (a terminal's own wrap at the edge would break words and tables)."""
    lines = []
    for line in text.split("\n"):
        if len(line) <= SUMMARY_WIDTH:
            lines.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        lines.append(textwrap.fill(line, SUMMARY_WIDTH, subsequent_indent=indent,
                                   break_on_hyphens=False, break_long_words=False))
    return "\n".join(lines)


def print_summary(report: Any, out: TextIO) -> None:
    """The summary table, plain text (readable in CI logs and terminals alike)."""
    from dagtui.text import verdict_text

    def w(text: str) -> None:  # names, labels and judge text: shown, never obeyed
        out.write(for_terminal(_wrapped(text)))

    n = len(report.results)
    rate = report.pass_rate
    not_run = report.count("not_run")
    unscored = report.count("unscored")
    w(f"\n{report.graph_name}: {counted(n, 'case')}, {report.count('pass')} passed, "
      f"{report.count('fail')} failed, {report.count('error')} judge errors"
      + (f", {unscored} unscored" if unscored else "")
      + (f", {not_run} not run" if not_run else "")
      + (f" — pass rate {rate:.0%}" if rate is not None else "") + "\n")
    if report.halt:
        w(f"{shorten(report.halt, HALT_WIDTH, flat='squash')}; {counted(not_run, 'case')} "
          "not run\n")
    cost = report.cost
    w(f"calls {report.calls} (cache hits {report.cache_hits}), tokens {report.tokens}, cost "
      f"{'-' if cost is None else f'${cost:.4f}'}, wall {report.wall_time:.2f}s, threshold "
      f"{report.threshold:g}\n")
    hist = report.histogram()
    peak = max((c for _, _, c in hist), default=0) or 1
    w("\nscores\n")
    for lo, hi, c in hist:
        bar = "█" * max(1 if c else 0, round(20 * c / peak))
        w(f"  {lo:.1f}–{hi:.1f} {c:4d} {bar}\n")
    # 80 columns at most: the figures on the node's line, its verdicts wrapped under it
    w(f"\n{'node':18} reached  calls   tokens      cost     p50     p95\n")
    for nid, st in report.node_stats().items():
        # no priced call in the run: the total says `-`, so no node claims `0.0000`
        node_cost = f"{st.cost:9.4f}" if cost is not None else f"{'-':>9}"
        verdicts = ", ".join(f"{verdict_text(k)}:{v}" for k, v in st.verdicts.most_common())
        if st.errors:
            verdicts += (", " if verdicts else "") + ", ".join(
                f"error {k}:{v}" for k, v in st.errors.items())
        w(f"  {shorten(nid, 16):16} {st.reached:7d} {st.calls:6d} "
          f"{st.prompt_tokens + st.completion_tokens:8d} {node_cost} "
          f"{_fmt_s(st.p50):>7} {_fmt_s(st.p95):>7}\n")
        if verdicts:
            w(f"    verdicts {verdicts}\n")
        if st.unsure:
            w(f"    unsure {st.unsure} of {st.reached} ({st.unsure / st.reached:.0%})\n")
    kinds = report.error_kinds()
    retried = report.retried_kinds()
    if kinds or retried or report.corrections():
        w("\njudge errors (cases without a verdict, not failures): "
          + (", ".join(f"{k}: {v}" for k, v in sorted(kinds.items())) or "none") + "\n")
        w("retried and recovered or not, by kind: "
          + (", ".join(f"{k}: {v}" for k, v in sorted(retried.items())) or "none")
          + f"; corrective turns: {report.corrections()}\n")
    failing = report.first("fail")
    if failing:
        w("\nfailing cases\n")
        for r in failing:
            w(f"  {r.case}: score {r.score:.2f} — {r.describe_path()}\n")
    for r in report.first("error"):
        w(f"  error {r.case}: {r.error_kind}: {r.error}\n")
    for r in report.first("unscored"):
        w(f"  unscored {r.case}: {r.unscored}\n")

"""`dagtui run TARGET --cases FILE`: a dataset through a real judge, for CI. The target is a
graph file (`run_graph`) or a suite file (`run_suite`, its exit codes below); both run
through the one pipeline, `dagtui.run.execute`, on the `RunSpec` the flags give
(`dagtui.commands.flags.run_spec`).

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
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dagtui.commands import flags
from dagtui.commands.label_opts import add_lenient_option, checked_case_stream
from dagtui.commands.python_opts import add_python_options
from dagtui.diagnostics import sort_key
from dagtui.exitcodes import ExitCode
from dagtui.graph.analysed import CheckedGraph
from dagtui.report.summary import HALT_WIDTH, print_summary
from dagtui.report.summary import wrapped as _wrapped
from dagtui.run.sinks import BaseSink
from dagtui.run.spec import RunSpec
from dagtui.text import counted, for_markup, say, shorten

if TYPE_CHECKING:
    from dagtui.suite.loader import SuiteLoad


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
    """`dagtui run TARGET`: the target is a graph or a suite file, told apart once here
    (read and parsed once, for both questions)."""
    spec = flags.run_spec(args, stream_results=True)
    checked = CheckedGraph.read(args.graph)
    if checked.is_suite:  # a suite of rules: its graphs run as `run_graph` runs one
        return run_suite(args.graph, args.cases, spec, read=checked)
    return run_graph(checked, args.cases, spec)


def run_graph(checked: CheckedGraph, cases_arg: str | None, spec: RunSpec) -> int:
    """Run a graph file's cases as `spec` says; the exit code (module docstring)."""
    from dagtui.run.cases import CaseError

    graph, cases, code = load_graph_and_cases(checked, cases_arg, lazy=True)
    if code:
        return code
    cases, positions = take_shard(cases, spec.shard)
    try:  # labels (`expected`, `expected_score`) feed the agreement lines: checked first
        cases, ignored, code = checked_case_stream(graph, cases, spec.lenient)
    except CaseError as exc:  # a line that turned bad since the first pass
        err(str(exc))
        return ExitCode.USAGE
    if code:
        return code
    from dagtui.run.cases import cases_source

    graph_file = checked.file or ""
    code = refuse_outputs(spec, {"graph file": graph_file, "cases file": cases_source(
        graph, graph.path or graph_file, cases_arg)})
    if code:
        return code
    from dagtui.run.sinks import AgreementSink

    out = sys.stdout
    agreement = AgreementSink(graph)
    progress = Progress(len(cases), out, quiet=spec.quiet)
    sinks, code = open_sinks(spec, [agreement, progress])
    if code:
        return code
    report = _executed(checked, cases, spec, sinks, positions)
    if report is None:
        return ExitCode.USAGE
    from dagtui.calibration.saved import summary_lines
    from dagtui.report.outputs import write_report
    from dagtui.run.sinks import first_error

    try:
        failed = first_error(sinks)
        if failed is not None:  # a line, a trace, or putting the results file in place
            raise failed
        if spec.junit:
            write_report(spec.junit, report.junit_parts())
        if spec.json_out:
            write_report(spec.json_out, report.json_parts(steps=True))
    except OSError as exc:  # changed since the check before the run (full disk, ...)
        err(f"cannot write a report: {exc}")
        print_summary(report, out)
        return ExitCode.USAGE
    from dagtui.judges.health import is_unusable

    if is_unusable(report.halt) and not (report.count("pass") or report.count("fail")):
        for line in halt_lines(report.halt or "", report.judge.get("model")):
            err(line)  # the judge never worked: a line or two, not a page of zeros
        return report.exit_code()
    print_summary(report, out)
    for line in [*summary_lines(report.calibration), *agreement.lines()]:
        say(_wrapped(line), file=out)
    if ignored:
        from dagtui.labels.check import ignored_summary

        say(_wrapped(ignored_summary(ignored)), file=out)
    return report.exit_code()


def refuse_outputs(spec: RunSpec, inputs: dict[str, str | None],
                   tell: Callable[[str], None] = err) -> int:
    """2 after naming each report, trace or results file of `spec` that cannot be written
    (or would overwrite one of `inputs`): found now, not after an hour of judge calls."""
    from dagtui.report.outputs import report_target_problems

    problems = report_target_problems(json_out=spec.json_out, junit=spec.junit,
                                      trace_dir=spec.trace_dir, results_file=True,
                                      inputs=inputs)
    for problem in problems:
        tell(problem)
    return ExitCode.USAGE if problems else ExitCode.OK


def open_sinks(spec: RunSpec, others: list[Any], cases: Any = None,
               tell: Callable[[str], None] = err) -> tuple[list[Any], int]:
    """The run's sinks: the results stream and the traces `spec` asks for, then `others`
    (exit 2, and none, when a file cannot be opened). `cases`: a suite's, to number its
    traces by (`dagtui.run.sinks.TraceSink`)."""
    from dagtui.run.sinks import StreamSink, TraceSink

    sinks: list[Any] = []
    try:  # --json out.json: out.results.jsonl gets each case as it finishes
        if spec.stream:
            sinks.append(StreamSink(spec.stream))
    except OSError as exc:
        tell(f"cannot write {spec.stream}: {exc}")
        return [], ExitCode.USAGE
    try:  # written as each case ends, while its details are in memory
        if spec.trace_dir:
            sinks.append(TraceSink(spec.trace_dir, cases))
    except OSError as exc:
        tell(f"cannot write traces to {spec.trace_dir}: {exc}")
        for sink in sinks:
            sink.close()
        return [], ExitCode.USAGE
    return [*sinks, *others], ExitCode.OK


def _executed(target: Any, cases: Any, spec: RunSpec, sinks: list[Any],
              positions: list[int] | None = None, tell: Callable[[str], None] = err) -> Any:
    """`dagtui.run.execute.execute`, or None after saying why the run could not start or
    stopped (a case the graph cannot run, Dask missing or unreachable, a judge not made)."""
    from dagtui.run.cases import CaseError
    from dagtui.run.cluster import ClusterError, DaskMissing
    from dagtui.run.execute import execute

    try:
        return execute(target, cases, spec, sinks, positions=positions)
    except (CaseError, ClusterError, DaskMissing, ValueError) as exc:
        for sink in sinks:
            sink.close()
        tell(str(exc))
        return None


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


class Progress(BaseSink):
    """A rich progress bar on a terminal; plain per-case lines otherwise (or under CI). Each
    update shows the judge calls per second so far and the time left at that pace (ETA), so
    a long run on a large dataset says when it will end. A sink of the run
    (`dagtui.run.sinks`): it shows each finished case, with the judge's rate note
    ("rpm 60" while that binds) when it has one."""

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

    def starting(self, total: int, judges: list[Any]) -> None:
        """The run starts: its judge's rate note joins each update."""
        if self.note is None and judges:
            self.note = getattr(judges[0], "rate_note", None)

    def finished(self, done: Any) -> bool:
        self.add(done.result)
        return False

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


# -- suites: `dagtui run SUITE.toml` -----------------------------------------------------
#
# Exit codes as for graphs: 0 every rule passed every case it judged; 1 a judged case failed
# (score below its graph's threshold; a check that does not hold) or the suite is invalid;
# 2 usage or input error; 3 nothing failed but judge errors prevented a verdict, or a judge
# halted (could not be used, or went down mid-run) and pairs were left not run. `--trace-dir`
# writes one trace per evaluated (case, rule) pair (`dagtui.suite.traces`); `--workers` (or
# `--scheduler`) runs each LLM rule's admitted cases on Dask workers, one cluster for the
# whole run, except rules with `max_calls`, which admit case by case and stay in process.


def suite_err(msg: str) -> None:
    """One error line of a suite run on stderr, terminal-safe."""
    say(f"dagtui run: {msg}", file=sys.stderr)


class RuleLines(BaseSink):
    """A suite's progress: one line on stderr as each rule ends its level."""

    def rule_done(self, stats: Any, note: str) -> None:
        st = stats
        say(f"level {st.level} {st.rule}: {st.evaluated}/{st.candidates} evaluated, "
            f"{st.passed} passed, {st.calls} calls"
            + (f", {st.not_run} not run" if st.not_run else "")
            + (f"  [{note}]" if note else ""), file=sys.stderr)


def run_suite(target: str, cases_arg: str | None, spec: RunSpec, *,
              read: CheckedGraph | None = None) -> int:
    """Run a suite file as `spec` says; returns the exit code. `read`: the file as
    `dagtui run` read it to learn it is a suite (not read again)."""
    from dagtui.suite.report import SuiteOutcome, write_json, write_junit

    load, cases, code = load_suite_and_cases(target, cases_arg, "dagtui run", read=read)
    if load is None or cases is None:
        return code
    cases, positions = take_shard(cases, spec.shard)
    code = refuse_outputs(spec, {
        "suite file": target, "cases file": suite_cases_path(load, target, cases_arg),
        **{f"graph of rule {rid!r}": g.path for rid, g in load.graphs.items() if g.path}},
        suite_err)
    if code:
        return code
    sinks, code = open_sinks(spec, [] if spec.quiet else [RuleLines()], cases, suite_err)
    if code:
        return code
    result = _executed(load, cases, spec, sinks, tell=suite_err)
    if result is None:
        return ExitCode.USAGE
    from dagtui.judges.health import is_unusable
    from dagtui.run.sinks import first_error

    halts = result.halts()
    for line in halts:  # a judge that never worked, or went down: said once, on stderr
        suite_err(line)
    if not (result.calls == 0 and halts and all(is_unusable(h) for h in halts)):
        print_summary(SuiteOutcome(result), sys.stdout)
    try:
        failed = first_error(sinks)
        if failed is not None:
            raise failed
        if spec.json_out:
            from dagtui.report.merge import shard_info

            write_json(result, spec.json_out, file=str(target),
                       shard=None if positions is None else shard_info(spec.shard, positions))
        if spec.junit:
            write_junit(result, spec.junit)
    except OSError as exc:
        suite_err(f"cannot write report: {exc}")
        return ExitCode.USAGE
    return result.exit_code()


def load_suite_and_cases(
    target: str, cases_arg: str | None, command: str, *, labels: bool = False,
    read: CheckedGraph | None = None,
) -> tuple[SuiteLoad | None, list[Any] | None, int]:
    """(load, cases, exit code) for a suite command, after printing the suite's diagnostics;
    load and cases are None (and the code says why) when nothing should run: an unreadable
    suite or cases file (2), a suite with errors (1). `cases_arg` defaults to `[suite].cases`
    (with `labels`, for `dagtui test`: `[suite].labels` first), relative to the suite file.
    `read`: the suite file as the command already read (and parsed) it, used as it is."""
    from dagtui.run.cases import CaseError, load_cases
    from dagtui.suite.loader import load_suite_file, load_suite_text

    if read is not None and read.text is not None:
        load = load_suite_text(read.text, target, raw=read.load.raw)
    else:
        load = load_suite_file(target)
    diags = sorted(load.diagnostics, key=sort_key)
    for d in diags:
        say(d.format(), file=sys.stderr)
    if load.suite is None:
        return None, None, ExitCode.USAGE
    if any(d.is_error for d in diags):
        say(f"{command}: {target}: the suite has errors; nothing was run", file=sys.stderr)
        return None, None, ExitCode.FAILURES
    cases_arg = suite_cases_path(load, target, cases_arg, labels=labels)
    if cases_arg is None:
        say(f"{command}: no cases: pass --cases FILE or set cases = \"...\" in [suite]",
            file=sys.stderr)
        return load, None, ExitCode.USAGE
    try:
        cases = load_cases(cases_arg)
    except CaseError as exc:
        say(f"{command}: {exc}", file=sys.stderr)
        return load, None, ExitCode.USAGE
    if not cases:
        say(f"{command}: {cases_arg}: no cases", file=sys.stderr)
        return load, None, ExitCode.USAGE
    return load, cases, ExitCode.OK


def suite_cases_path(load: SuiteLoad, target: str, cases_arg: str | None, *,
                     labels: bool = False) -> str | None:
    """The cases file a suite command reads: `cases_arg` (`--cases`), else `[suite].cases`
    (with `labels`: `[suite].labels` first) beside the suite file; None when none is named."""
    if cases_arg is not None or load.suite is None:
        return cases_arg
    meta = load.suite.meta
    default = meta.labels if labels and meta.labels else meta.cases
    return str(Path(target).parent / default) if default else None

"""`dagtui run SUITE.toml`: the suite half of the run command.

`dagtui.commands.run` owns the `run` parser (the suite-only `--measure-ungated` included);
when its target is a suite file (`dagtui.suite.is_suite_file`) it hands its parsed arguments
to `run_suite_command`. Options are read defensively (`getattr`) so the graph parser's flags
(`--cases`, `--model`, `--api-base`, `--concurrency`, `--junit`, `--json`, `--no-cache`,
`--refresh`, `--cache-dir`) work here as they do for graphs. `--trace-dir DIR`
writes one trace per evaluated (case, rule) pair (`dagtui.suite.traces`); `--workers N|auto`
(or `--scheduler ADDRESS`) runs each LLM rule's admitted cases on Dask workers
(`dagtui.run.cluster`; one cluster for the whole run, started at the first such rule), except
rules with `max_calls`, which admit case by case and so stay in process. `--shard I/N` runs
one part of the cases (`dagtui.run.shard`); `dagtui merge` joins the parts' JSON reports.

Exit codes as for graphs: 0 every rule passed every case it judged; 1 a judged case failed
(score below its graph's threshold; a check that does not hold) or the suite is invalid;
2 usage or input error; 3 nothing failed but judge errors prevented a verdict, or a judge
halted (could not be used, or went down mid-run) and pairs were left not run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagtui.diagnostics import sort_key
from dagtui.exitcodes import ExitCode
from dagtui.suite.loader import SuiteLoad, load_suite_file, load_suite_text
from dagtui.suite.model import Rule
from dagtui.text import say

if TYPE_CHECKING:
    from dagtui.graph.analysed import CheckedGraph

#: attribute names the run parser may use for its positional file argument
TARGET_ATTRS = ("graph", "target", "file", "path", "suite")


def _opt(args: argparse.Namespace, *names: str, default: Any = None) -> Any:
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            return value
    return default


def _target(args: argparse.Namespace) -> str | None:
    value = _opt(args, *TARGET_ATTRS)
    if isinstance(value, list):
        value = value[0] if value else None
    return value


def make_judge_factory(args: argparse.Namespace, *, cache: bool = True) -> Any:
    """Judges for graph rules, made as `dagtui run` makes them (`dagtui.api.make_judge`):
    `--model`, else DAGTUI_MODEL, else the graph's pinned model; `--judge labels` answers
    from the cases' labels. Rules on the same model share one judge (one concurrency limit)
    and every judge shares one cache. `--rpm N` is one limit over every judge of the run; a
    rule's own `rpm` gives it a judge of its own under that limit too."""
    judge_name = _opt(args, "judge")
    api_base = _opt(args, "api_base")
    concurrency = int(_opt(args, "concurrency", default=8))
    no_cache = bool(_opt(args, "no_cache", default=False)) or not cache
    shared: dict[str, Any] = {}
    rpm = _opt(args, "rpm")
    if rpm:
        from dagtui.judges.health import RateLimiter

        shared["limiters"] = [RateLimiter(float(rpm))]

    def judge_for(rule: Rule, graph: Any) -> Any:
        from dagtui.api import make_judge, model_for
        from dagtui.judges.cache import open_cache

        if "cache" not in shared:  # --refresh: ask again and overwrite, as for graphs
            shared["cache"] = open_cache(_opt(args, "cache_dir"), enabled=not no_cache,
                                         refresh=bool(_opt(args, "refresh", default=False)),
                                         graph=_target(args))
        choice = judge_name or _opt(args, "model")
        key = "labels" if choice == "labels" else f"{model_for(graph, choice)}|{api_base}"
        rule_rpm = getattr(rule, "rpm", None)
        limits: dict[str, Any] = {}
        if rule_rpm and key != "labels":
            key += f"|rpm of {rule.id}"
            limits["rpm"] = rule_rpm
        if shared.get("limiters") and key != "labels":
            limits["limiters"] = shared["limiters"]
        if key not in shared:
            shared[key] = make_judge(
                choice, graph, api_base=api_base, api_key=_opt(args, "api_key"),
                cache=shared["cache"], concurrency=concurrency,
                timeout=float(_opt(args, "timeout", default=60.0)),
                retries=int(_opt(args, "retries", default=3)),
                via=str(_opt(args, "via", default="auto")), **limits,
            )
        return shared[key]

    return judge_for


async def execute(
    load: SuiteLoad,
    cases: list[Any],
    args: argparse.Namespace,
    *,
    measure_ungated: bool = False,
    on_rule_done: Any = None,
    traces: Any = None,
    results: Any = None,
) -> Any:
    """Run the suite (and the ungated baseline when asked); returns the SuiteResult.

    `traces` (a `dagtui.suite.traces.TraceWriter`) saves one trace per evaluated (case,
    rule) pair of the gated run, and `results` (a `dagtui.report.stream.ResultsStream`) its result
    line; the baseline run writes neither."""
    from dagtui.commands.python_opts import python_consent
    from dagtui.run.cluster import Cluster, cluster_size, scheduler_address
    from dagtui.suite.gating import attach_baseline, estimate_baseline, run_suite
    from dagtui.suite.runner import EngineRuleRunner

    assert load.suite is not None
    concurrency = int(_opt(args, "concurrency", default=load.suite.meta.concurrency or 8))
    workers = workers_option(args)
    scheduler = scheduler_address(_opt(args, "scheduler"))
    # one cluster for the whole run (gated and baseline); no worker starts until a rule
    # sends it a batch, and it is closed however the run ends (errors, Ctrl+C)
    size = cluster_size(workers)
    pool = Cluster(size, scheduler=scheduler) if size > 1 or scheduler else None
    python = python_consent(args)  # --allow-python / --python-path, for every rule
    try:
        runner = EngineRuleRunner(load, make_judge_factory(args), traces=traces,
                                  workers=workers, concurrency=concurrency, pool=pool,
                                  python=python, scheduler=scheduler, results=results)
        done = None
        if on_rule_done is not None:
            def done(st: Any) -> None:  # with what held calls back meanwhile ("rpm 60")
                notes = (getattr(j, "rate_note", str)() for j in runner.judges)
                on_rule_done(st, ", ".join(dict.fromkeys(n for n in notes if n)))
        try:
            result = await run_suite(load.suite, cases, runner, concurrency=concurrency,
                                     kinds=load.kinds, on_rule_done=done)
        finally:
            await runner.aclose()
        if measure_ungated:
            # cache off: a cached answer is a call the gated run already paid for
            base_runner = EngineRuleRunner(load, make_judge_factory(args, cache=False),
                                           workers=workers, concurrency=concurrency,
                                           pool=pool, python=python, scheduler=scheduler)
            try:
                if on_rule_done is not None:
                    say("measuring the ungated baseline (every active rule on every "
                          "case)...", file=sys.stderr)
                baseline = await run_suite(load.suite, cases, base_runner,
                                           concurrency=concurrency, gated=False,
                                           kinds=load.kinds)
            finally:
                await base_runner.aclose()
            attach_baseline(result, baseline)
        else:
            estimate_baseline(result)
    finally:
        if pool is not None:
            await asyncio.to_thread(pool.close)
    return result


def workers_option(args: argparse.Namespace) -> int | str:
    """`--workers` (1 when the parser has no such flag); raises ValueError when invalid."""
    from dagtui.run.cluster import parse_workers

    return parse_workers(_opt(args, "workers", default=1))


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


def run_suite_command(args: argparse.Namespace, path: str | None = None, *,
                      read: CheckedGraph | None = None) -> int:
    """Run a suite file from the command line; returns the exit code. `read`: the file as
    `dagtui run` read it to learn it is a suite (not read again)."""
    from dagtui.report.summary import print_summary
    from dagtui.suite.report import SuiteOutcome, write_json, write_junit

    target = path or _target(args)
    if not target:
        say("dagtui run: no suite file given", file=sys.stderr)
        return ExitCode.USAGE
    load, cases, code = load_suite_and_cases(target, _opt(args, "cases"), "dagtui run",
                                             read=read)
    if load is None or cases is None:
        return code
    from dagtui.commands.run import take_shard

    shard = _opt(args, "shard")
    cases, positions = take_shard(cases, shard)
    try:
        workers = workers_option(args)
    except ValueError as exc:
        say(f"dagtui run: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    from dagtui.run.cluster import DaskMissing, cluster_size, require_dask, scheduler_address

    if cluster_size(workers) > 1 or scheduler_address(_opt(args, "scheduler")):
        try:
            require_dask()
        except DaskMissing as exc:
            say(f"dagtui run: {exc}", file=sys.stderr)
            return ExitCode.USAGE
    measure = bool(_opt(args, "measure_ungated", default=False)) or (
        os.environ.get("DAGTUI_MEASURE_UNGATED", "") not in ("", "0")
    )
    quiet = bool(_opt(args, "quiet", default=False))

    def rule_done(st: Any, note: str = "") -> None:
        say(f"level {st.level} {st.rule}: {st.evaluated}/{st.candidates} evaluated, "
              f"{st.passed} passed, {st.calls} calls"
              + (f", {st.not_run} not run" if st.not_run else "")
              + (f"  [{note}]" if note else ""), file=sys.stderr)

    traces = None
    trace_dir = _opt(args, "trace_dir")
    json_out = _opt(args, "json", "json_out")
    junit_out = _opt(args, "junit", "junit_out")
    from dagtui.report.outputs import report_target_problems

    inputs: dict[str, str | None] = {
        "suite file": target, "cases file": suite_cases_path(load, target, _opt(args, "cases")),
        **{f"graph of rule {rid!r}": g.path for rid, g in load.graphs.items() if g.path}}
    bad_outputs = report_target_problems(json_out=json_out, junit=junit_out,
                                         trace_dir=trace_dir, results_file=True,
                                         inputs=inputs)
    for problem in bad_outputs:  # found now, not after every rule has run
        say(f"dagtui run: {problem}", file=sys.stderr)
    if bad_outputs:
        return ExitCode.USAGE
    if trace_dir:
        from dagtui.suite.traces import TraceWriter

        try:
            traces = TraceWriter(trace_dir, cases)
        except OSError as exc:
            say(f"dagtui run: cannot write traces to {trace_dir}: {exc}", file=sys.stderr)
            return ExitCode.USAGE
    from dagtui.report.stream import ResultsStream, results_path

    try:  # --json out.json: out.results.jsonl gets each (rule, case) pair as it ends
        stream = ResultsStream(results_path(json_out)) if json_out else None
    except OSError as exc:
        say(f"dagtui run: cannot write {results_path(json_out)}: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    try:
        result = asyncio.run(execute(load, cases, args, measure_ungated=measure,
                                     on_rule_done=None if quiet else rule_done,
                                     traces=traces, results=stream))
    finally:
        if stream is not None:
            stream.close()
    from dagtui.judges.health import is_unusable

    halts = result.halts()
    for line in halts:  # a judge that never worked, or went down: said once, on stderr
        say(f"dagtui run: {line}", file=sys.stderr)
    if not (result.calls == 0 and halts and all(is_unusable(h) for h in halts)):
        print_summary(SuiteOutcome(result), sys.stdout)
    try:
        if stream is not None and stream.error is not None:
            raise stream.error
        if json_out:
            from dagtui.report.merge import shard_info

            write_json(result, json_out, file=str(target),
                       shard=None if positions is None else shard_info(shard, positions))
        if junit_out:
            write_junit(result, junit_out)
    except OSError as exc:
        say(f"dagtui run: cannot write report: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    return result.exit_code()


def _width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 120

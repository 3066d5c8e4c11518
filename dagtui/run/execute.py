"""One run pipeline: `execute(target, cases, spec, sinks)` for a graph and a suite alike.

Every way of running cases comes here: `dagtui run` (a graph or a suite file), the API's
`dagtui.evaluate`, and, one case at a time through `execute_one`, `assert_graph`, the
DeepEval and Inspect integrations. It makes the judge and its cache from the `RunSpec`
(`dagtui.run.spec`), builds the engine, decides in process or on Dask
(`dagtui.run.cluster.workers_for`: the one rule), runs the cases and tells each sink
(`dagtui.run.sinks`: results stream, traces, agreement, progress) about each finished case.
It returns the run's tally: a `dagtui.run.batch.BatchResult` for a graph, a
`dagtui.suite.gating.SuiteResult` for a suite. Writing the reports and printing the summary
stay with the caller (the command line prints; the API returns).

Raises `dagtui.run.cases.CaseError` (a case the graph cannot run, found before the first
call), `dagtui.run.cluster.DaskMissing` (workers asked for without Dask),
`dagtui.run.cluster.ClusterError` (the cluster cannot be used) and ValueError (a judge that
cannot be made).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.model import Graph
from dagtui.run.sinks import Done, Sink
from dagtui.run.spec import RunSpec

if TYPE_CHECKING:
    from dagtui.judges.base import Judge
    from dagtui.judges.cache import Cache
    from dagtui.report.trace import RunResult
    from dagtui.run.batch import BatchResult
    from dagtui.run.engine import Engine
    from dagtui.suite.gating import SuiteResult
    from dagtui.suite.loader import SuiteLoad
    from dagtui.suite.model import Rule

def open_run_cache(spec: RunSpec, graph_path: str | os.PathLike[str] | None) -> Cache | None:
    """The judge cache `spec` asks for: none with `no_cache`, else `cache_dir`, else the
    `.dagtui/` of the graph (or suite) file, refreshing with `refresh`."""
    from dagtui.judges.cache import open_cache
    from dagtui.workdir import workdir_for

    directory = spec.cache_dir if spec.cache_dir is not None else workdir_for(
        os.fspath(graph_path) if graph_path is not None else None)
    return open_cache(directory, enabled=not spec.no_cache, refresh=spec.refresh)


def make_run_judge(spec: RunSpec, graph: Graph, cache: Any) -> Judge:
    """The judge of a graph run (`dagtui.judges.factory.make_judge`, the one factory)."""
    from dagtui.judges.factory import make_judge

    options = spec.judge_kwargs(cache=cache)
    model = options.pop("model")  # `--model labels` names the labels judge, as ever
    return make_judge(spec.judge if spec.judge is not None else model, graph, **options)


def build_engine(target: Any, spec: RunSpec) -> Engine:
    """The engine of a graph run: `target` itself when it is one, else a new engine on the
    judge `spec` names (a `CheckedGraph` is trusted, a bare `Graph` validated here)."""
    from dagtui.run.engine import Engine

    if isinstance(target, Engine):
        return target
    checked = target if isinstance(target, CheckedGraph) else CheckedGraph.of_graph(target)
    graph = checked.require()
    wants_cache = "cache" not in spec.judge_options
    cache = open_run_cache(spec, graph.path) if wants_cache and _model_judged(spec) else None
    return Engine(checked, make_run_judge(spec, graph, cache), python=spec.python)


def _model_judged(spec: RunSpec) -> bool:
    """True when `spec` names a model judge (the only kind with a cache to open)."""
    from dagtui.judges.base import Judge
    from dagtui.judges.factory import JUDGE_NAMES

    judge = spec.judge if spec.judge is not None else spec.model
    return not isinstance(judge, Judge) and (judge is None or judge == "litellm"
                                             or judge not in JUDGE_NAMES)


def execute(target: Any, cases: Any, spec: RunSpec, sinks: Sequence[Sink] = (), *,
            positions: list[int] | None = None) -> Any:
    """Run `cases` through `target` as `spec` says, telling `sinks` about
    each finished case; the run's tally (`BatchResult` or `SuiteResult`). `target`: a graph
    (a `CheckedGraph`, trusted; a bare `Graph`, validated at the engine), an `Engine`
    already built (its judge and cache kept across calls) or a `SuiteLoad`. Blocking: not from
    inside a running event loop (await `a_execute` there). `positions`: the cases' places
    in the whole dataset when they are one shard of it (`spec.shard`)."""
    from dagtui.suite.loader import SuiteLoad

    if isinstance(target, SuiteLoad):
        return asyncio.run(_suite(target, cases, spec, list(sinks)))
    engine = build_engine(target, spec)
    if _on_dask(engine, cases, spec):  # blocking already: Dask runs in its own threads
        return _graph_done(engine, _in_workers(engine, cases, spec, list(sinks)), spec,
                           positions)
    return asyncio.run(_graph(engine, cases, spec, list(sinks), positions))


async def a_execute(target: Any, cases: Any, spec: RunSpec, sinks: Sequence[Sink] = (), *,
                    positions: list[int] | None = None) -> Any:
    """`execute` for async callers (inside a running event loop)."""
    from dagtui.suite.loader import SuiteLoad

    if isinstance(target, SuiteLoad):
        return await _suite(target, cases, spec, list(sinks))
    engine = build_engine(target, spec)
    return await _graph(engine, cases, spec, list(sinks), positions)


async def execute_one(engine: Engine, case: Any, sinks: Sequence[Sink] = ()) -> RunResult:
    """One case through `engine` (its judge and cache kept by the caller across cases: a
    test session's assertions), each sink told: the integrations' and `assert_graph`'s run."""
    result = await engine.run(case)
    _tell(list(sinks), Done(0, case, result, engine.judge, engine.graph))
    return result


# -- graphs ------------------------------------------------------------------------------

def _on_dask(engine: Engine, cases: Any, spec: RunSpec) -> bool:
    """True when the cases go to Dask workers (`workers_for`); Dask must then be there."""
    from dagtui.run.cluster import require_dask, workers_for

    if workers_for(spec.workers, len(cases), engine.judge, spec.scheduler) <= 1:
        return False
    require_dask()
    return True


def _tell(sinks: list[Sink], done: Done) -> None:
    """Each sink in turn; the result slimmed when one keeps its details on disk."""
    kept = [sink.finished(done) for sink in sinks]
    if any(kept):
        from dagtui.report.stream import slim

        slim(done.result)


def _on_case(engine: Engine, sinks: list[Sink]) -> Any:
    def done(position: int, case: Any, result: Any) -> None:
        _tell(sinks, Done(position, case, result, engine.judge, engine.graph))

    return done


def _log(spec: RunSpec) -> Any:
    """Results on disk in dataset order (flat memory) when `spec` says so, else None."""
    if not spec.results_on_disk:
        return None
    from dagtui.report.stream import ResultLog

    return ResultLog()


def _start(sinks: list[Sink], total: int, judges: list[Any]) -> None:
    for sink in sinks:
        sink.starting(total, judges)


async def _graph(engine: Engine, cases: Any, spec: RunSpec, sinks: list[Sink],
                 positions: list[int] | None) -> BatchResult:
    if _on_dask(engine, cases, spec):  # `a_execute`: the blocking batch in a thread
        report = await asyncio.to_thread(_in_workers, engine, cases, spec, sinks)
        return _graph_done(engine, report, spec, positions)
    from dagtui.run.batch import evaluate_cases

    _start(sinks, len(cases), [engine.judge])
    try:
        report = await evaluate_cases(engine, cases, concurrency=spec.concurrency,
                                      on_case=_on_case(engine, sinks), log=_log(spec))
    finally:
        _close(sinks)
    return _graph_done(engine, report, spec, positions)


def _in_workers(engine: Engine, cases: Any, spec: RunSpec, sinks: list[Sink]) -> BatchResult:
    from dagtui.run.cluster import evaluate_in_workers, workers_for

    workers = workers_for(spec.workers, len(cases), engine.judge, spec.scheduler)
    _start(sinks, len(cases), [engine.judge])
    try:
        return evaluate_in_workers(engine, cases, workers=workers, scheduler=spec.scheduler,
                                   concurrency=spec.concurrency,
                                   on_case=_on_case(engine, sinks), log=_log(spec))
    finally:
        _close(sinks)


def _close(sinks: list[Sink]) -> None:
    for sink in sinks:
        sink.close()


def _graph_done(engine: Engine, report: BatchResult, spec: RunSpec,
                positions: list[int] | None) -> BatchResult:
    """The shard and the calibration the report records."""
    if positions is not None and spec.shard is not None:
        from dagtui.report.merge import shard_info

        report.shard = shard_info(spec.shard, positions)
    if spec.calibration is not False:
        from dagtui.calibration.saved import run_calibration

        path = spec.calibration if isinstance(spec.calibration, str | os.PathLike) else None
        report.calibration = run_calibration(engine.graph, engine.judge.describe(),
                                             report.count("pass"), report.count("fail"),
                                             results=report.results, path=path)
    return report


# -- suites ------------------------------------------------------------------------------

def suite_judges(spec: RunSpec, suite_path: str | None, *, cache: bool = True) -> Any:
    """Judges for a suite's graph rules, made as a graph run makes them (`make_run_judge`):
    rules on the same model share one judge (one concurrency limit) and every judge one
    cache. `spec.rpm` is one limit over every judge of the run; a rule's own `rpm` gives it
    a judge of its own under that limit too. `cache=False`: none (the ungated baseline)."""
    from dagtui.judges.factory import model_for

    shared: dict[str, Any] = {}
    limiters: list[Any] = []
    if spec.rpm:
        from dagtui.judges.health import RateLimiter

        limiters.append(RateLimiter(float(spec.rpm)))
    base = spec.replace(rpm=None, no_cache=spec.no_cache or not cache)

    def judge_for(rule: Rule, graph: Graph) -> Judge:
        if "cache" not in shared:  # opened once, at the first rule that needs a judge
            shared["cache"] = open_run_cache(base, suite_path)
        choice: Any = spec.judge if spec.judge is not None else spec.model
        key = "labels" if choice == "labels" else f"{model_for(graph, choice)}|{spec.api_base}"
        limits: dict[str, Any] = {}
        if rule.rpm and key != "labels":
            key += f"|rpm of {rule.id}"
            limits["rpm"] = rule.rpm
        if limiters and key != "labels":
            limits["limiters"] = limiters
        if key not in shared:
            shared[key] = make_run_judge(
                base.replace(judge=choice, model=None,
                             judge_options={**base.judge_options, **limits}),
                graph, shared["cache"])
        return shared[key]

    return judge_for


async def _suite(load: SuiteLoad, cases: list[Any], spec: RunSpec,
                 sinks: list[Sink]) -> SuiteResult:
    """Run the suite (and the ungated baseline with `spec.measure_ungated`; else it is
    estimated). One cluster serves the whole run (gated and baseline) when workers are asked
    for; no worker starts until a rule sends it a batch, and it is closed however the run
    ends. The sinks get the gated run's pairs; the baseline tells none."""
    from dagtui.run.cluster import Cluster, cluster_size, require_dask
    from dagtui.suite.gating import attach_baseline, estimate_baseline, run_suite
    from dagtui.suite.runner import EngineRuleRunner

    assert load.suite is not None
    size = cluster_size(spec.workers)
    if size > 1 or spec.scheduler:
        require_dask()
    pool = Cluster(size, scheduler=spec.scheduler) if size > 1 or spec.scheduler else None
    path = load.file

    def runner(judges: Any, emit: Any) -> EngineRuleRunner:
        return EngineRuleRunner(load, judges, emit=emit, workers=spec.workers,
                                concurrency=spec.concurrency, pool=pool, python=spec.python,
                                scheduler=spec.scheduler)

    try:
        gated = runner(suite_judges(spec, path), lambda done: _tell(sinks, done))
        _start(sinks, len(cases), gated.judges)

        def rule_done(stats: Any) -> None:  # with what held calls back meanwhile ("rpm 60")
            notes = (getattr(j, "rate_note", str)() for j in gated.judges)
            note = ", ".join(dict.fromkeys(n for n in notes if n))
            for sink in sinks:
                sink.rule_done(stats, note)

        try:
            result = await run_suite(load.suite, cases, gated, concurrency=spec.concurrency,
                                     kinds=load.kinds, on_rule_done=rule_done)
        finally:
            await gated.aclose()
            _close(sinks)
        if spec.measure_ungated:
            # cache off: a cached answer is a call the gated run already paid for
            base = runner(suite_judges(spec, path, cache=False), None)
            try:
                if not spec.quiet:
                    print("measuring the ungated baseline (every active rule on every "
                          "case)...", file=sys.stderr)
                baseline = await run_suite(load.suite, cases, base,
                                           concurrency=spec.concurrency, gated=False,
                                           kinds=load.kinds)
            finally:
                await base.aclose()
            attach_baseline(result, baseline)
        else:
            estimate_baseline(result)
    finally:
        if pool is not None:
            await asyncio.to_thread(pool.close)
    return result

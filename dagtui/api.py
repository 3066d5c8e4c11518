"""The Python API (README "Python"): load a graph, measure a case, evaluate a dataset.

    import dagtui
    graph = dagtui.load("graphs/meeting_summary.toml")        # raises GraphError
    result = graph.measure(case, judge="gpt-4.1-mini")         # or await graph.a_measure(...)
    result.score, result.success, result.reason, result.path, result.steps
    report = dagtui.evaluate(graph, cases, judge=..., concurrency=16, workers=1)

It is a thin layer over the same `Engine` the CLI and the TUI use, and makes judges with
the same factory (`dagtui.judges.factory.make_judge`): `judge` may be a litellm model string,
`"labels"` (the case's own labels, no calls), `"replay"` (with `trace=FILE`: a saved trace's
answers), or any `Judge` instance.
Python check nodes run code, so they run only when the caller says so: `allow_python=True`
on `load` or `evaluate` (or DAGTUI_ALLOW_PYTHON=1), never because the graph file asks.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.checks import PythonConsent
from dagtui.graph.loader import GraphError  # noqa: F401 - re-exported: `except dagtui.api.GraphError`
from dagtui.graph.model import Graph
from dagtui.judges.base import Judge
from dagtui.judges.factory import make_judge, model_for  # noqa: F401 - model_for: the API's name too
from dagtui.labels.check import (
    LabelProblem,
    check_cases,
    scan,
    warn_ignored,
)
from dagtui.report.trace import RunResult
from dagtui.run.batch import BatchResult
from dagtui.run.cases import Case, case_from_dict
from dagtui.run.cases import cases_for as _cases
from dagtui.run.engine import Engine
from dagtui.run.spec import RunSpec

if TYPE_CHECKING:
    from dagtui.calibration.align import Alignment


def load_checked(path: str | os.PathLike[str]) -> tuple[Graph, list[Any]]:
    """Load and validate a graph file: (graph, warnings); GraphError on any error."""
    checked = CheckedGraph.read(path)
    return checked.require(), list(checked.warnings)


def _case(case: Case | Mapping[str, Any]) -> Case:
    return case if isinstance(case, Case) else case_from_dict(dict(case))


class LoadedGraph:
    """A validated graph, ready to measure cases with. Made from a `CheckedGraph` (as
    `load` does), its engines trust that check; from a bare `Graph`, it is validated once,
    when the first engine is built."""

    def __init__(self, graph: Graph | CheckedGraph, warnings: list[Any] | None = None, *,
                 python: PythonConsent | None = None) -> None:
        self.checked = graph if isinstance(graph, CheckedGraph) else CheckedGraph.of_graph(graph)
        self.graph: Graph = graph.require() if isinstance(graph, CheckedGraph) else graph
        self.warnings = warnings if warnings is not None else (
            list(graph.warnings) if isinstance(graph, CheckedGraph) else [])
        #: consent for python check nodes (see `load`)
        self.python = python if python is not None else PythonConsent.from_env()
        self._engines: dict[tuple[Any, ...], Engine] = {}

    @property
    def path(self) -> str | None:
        return self.graph.path

    def engine(self, judge: str | Judge | None = None, **opts: Any) -> Engine:
        """The engine for a judge (kept, so its cache and geval steps are reused)."""
        if isinstance(judge, Judge):
            key: tuple[Any, ...] = ("instance", id(judge))
        else:
            key = (str(judge), repr(sorted(opts.items())))
        eng = self._engines.get(key)
        if eng is None:  # the run pipeline's engine (`dagtui.run.execute.build_engine`)
            from dagtui.run.execute import build_engine

            eng = build_engine(self.checked, run_spec(judge, concurrency=8,
                                                      python=self.python, **opts))
            self._engines[key] = eng
        return eng

    async def a_measure(self, case: Case | Mapping[str, Any], judge: str | Judge | None = None,
                        **opts: Any) -> RunResult:
        return await self.engine(judge, **opts).run(_case(case))

    def measure(self, case: Case | Mapping[str, Any], judge: str | Judge | None = None,
                **opts: Any) -> RunResult:
        """Run one case synchronously (not from inside a running event loop: use a_measure)."""
        return asyncio.run(self.a_measure(case, judge, **opts))

    def __repr__(self) -> str:
        return f"<dagtui graph {self.graph.metric.name!r} ({len(self.graph.nodes)} nodes)>"


def load(path: str | os.PathLike[str], *, allow_python: bool = False,
         python_path: Iterable[str | os.PathLike[str]] = ()) -> LoadedGraph:
    """Load and validate a graph; raises GraphError (with `.diagnostics`) on errors.

    `allow_python=True` lets its python check nodes run (their modules are files beside the
    graph, or in a `python_path` directory); without it such a step fails, naming the node."""
    return LoadedGraph(CheckedGraph.read(path),
                       python=PythonConsent.from_env(allow_python, python_path))


def check_labels(graph: LoadedGraph | Graph | str | os.PathLike[str], cases: Any = None
                 ) -> list[LabelProblem]:
    """Every bad label of `cases` (a list of Case/dicts, a cases file, or None for the
    graph's `[metric].cases`), without running anything: what `evaluate`, `calibrate` and
    the CLI refuse (see `dagtui.labels.check`). Each has `.format()`, `.kind`, `.case`."""
    if isinstance(graph, str | os.PathLike):
        graph = load(graph)
    g = graph.graph if isinstance(graph, LoadedGraph) else graph
    return scan(g, _cases(cases, g))


#: `evaluate`'s keyword arguments that are `RunSpec` fields (the rest go to the judge)
_SPEC_OPTIONS = ("model", "api_base", "api_key", "via", "temperature", "rpm", "timeout",
                 "retries", "cache_dir", "no_cache", "refresh")


def run_spec(judge: str | Judge | None = None, *, concurrency: int = 16,
             workers: int | str = 1, allow_python: bool = False,
             python_path: Iterable[str | os.PathLike[str]] = (),
             scheduler: str | None = None, lenient: bool = False,
             calibration: str | os.PathLike[str] | bool | None = None,
             stream: str | os.PathLike[str] | None = None,
             trace_dir: str | os.PathLike[str] | None = None, shard: str | None = None,
             python: PythonConsent | None = None, **opts: Any) -> RunSpec:
    """The `RunSpec` of `evaluate`'s arguments (environment fallbacks included); options
    that are not run settings (`max_tokens`, `extra`, a `cache` object, ...) go to the
    judge. `shard`: "I/N" (`dagtui.run.shard`); ValueError when it does not parse."""
    from dagtui.run.shard import parse_shard

    settings = {k: opts.pop(k) for k in _SPEC_OPTIONS if k in opts}
    consent: dict[str, Any] = {"python": python} if python is not None else {}
    return RunSpec.from_env(
        judge=judge, concurrency=int(opts.pop("concurrency", concurrency)), workers=workers,
        scheduler=scheduler, lenient=lenient,
        calibration=os.fspath(calibration) if isinstance(calibration, os.PathLike)
        else calibration, stream=os.fspath(stream) if stream is not None else None,
        trace_dir=os.fspath(trace_dir) if trace_dir is not None else None,
        shard=parse_shard(shard) if shard is not None else None,
        allow_python=allow_python, python_path=python_path, judge_options=opts,
        **consent, **settings)


def _sinks(spec: RunSpec, sinks: Iterable[Any]) -> list[Any]:
    """The sinks `spec` asks for (its results stream and traces), then the caller's."""
    from dagtui.run.sinks import StreamSink, TraceSink

    made: list[Any] = [StreamSink(spec.stream)] if spec.stream else []
    if spec.trace_dir:
        made.append(TraceSink(spec.trace_dir))
    return [*made, *sinks]


async def a_evaluate(graph: LoadedGraph | Graph | str | os.PathLike[str], cases: Any = None, *,
                     judge: str | Judge | None = None, concurrency: int = 16,
                     workers: int | str = 1, allow_python: bool = False,
                     python_path: Iterable[str | os.PathLike[str]] = (),
                     scheduler: str | None = None, lenient: bool = False,
                     calibration: str | os.PathLike[str] | bool | None = None,
                     stream: str | os.PathLike[str] | None = None,
                     trace_dir: str | os.PathLike[str] | None = None,
                     shard: str | None = None, sinks: Iterable[Any] = (),
                     **opts: Any) -> BatchResult:
    """`evaluate` for async callers (inside a running event loop)."""
    from dagtui.run.execute import a_execute
    from dagtui.run.sinks import first_error

    if isinstance(graph, str | os.PathLike):
        graph = load(graph)
    g = graph.graph if isinstance(graph, LoadedGraph) else graph
    checked = graph.checked if isinstance(graph, LoadedGraph) else CheckedGraph.of_graph(graph)
    dirs = tuple(python_path)
    loaded_consent = isinstance(graph, LoadedGraph) and not allow_python and not dirs
    spec = run_spec(judge, concurrency=concurrency, workers=workers,
                    allow_python=allow_python, python_path=dirs, scheduler=scheduler,
                    lenient=lenient, calibration=calibration, stream=stream,
                    trace_dir=trace_dir, shard=shard,
                    python=graph.python if isinstance(graph, LoadedGraph) and loaded_consent
                    else None, **opts)
    # bad labels are refused (or, lenient, dropped with a warning) before a judge exists
    batch, ignored = check_cases(g, _cases(cases, g), lenient=lenient)
    warn_ignored(ignored)
    positions = None
    if spec.shard is not None:
        positions = [i for i, case in enumerate(batch) if spec.shard.holds(case.name)]
        batch = [batch[i] for i in positions]
    outputs = _sinks(spec, sinks)
    report: BatchResult = await a_execute(checked, batch, spec, outputs, positions=positions)
    failed = first_error(outputs)
    if failed is not None:  # a results line or a trace that could not be written
        raise failed
    return report


def evaluate(graph: LoadedGraph | Graph | str | os.PathLike[str], cases: Any = None, *,
             judge: str | Judge | None = None, concurrency: int = 16, workers: int | str = 1,
             allow_python: bool = False, python_path: Iterable[str | os.PathLike[str]] = (),
             scheduler: str | None = None, lenient: bool = False,
             calibration: str | os.PathLike[str] | bool | None = None,
             stream: str | os.PathLike[str] | None = None,
             trace_dir: str | os.PathLike[str] | None = None, shard: str | None = None,
             sinks: Iterable[Any] = (), **opts: Any) -> BatchResult:
    """Run many cases; `cases` is a list of Case/dicts, a cases file, or None (the graph's
    `[metric].cases`). Returns a batch BatchResult (pass rate, per-node stats, results).
    Labels the cases carry are checked first (`dagtui.labels.check`): a bad one raises
    `LabelError` (a `CaseError`) before any call, or with `lenient=True` is dropped with a
    `LabelWarning`.

    `workers` > 1 (or "auto") spreads the cases over a Dask `LocalCluster` of that many
    processes, each with its own litellm judge on a share of `concurrency` (litellm judges
    only; others run in process; needs `dagtui[dask]`); `scheduler="tcp://host:8786"` (or
    DAGTUI_SCHEDULER) uses an existing Dask cluster instead. Call it under
    `if __name__ == "__main__":`.
    `allow_python=True` lets python check nodes run (see `load`).
    `calibration`: the calibration to judge the run by (a `dagtui calibrate --json` file;
    default the one `dagtui calibrate` saved for the graph under `.dagtui/calibration/`;
    False for none): `report.calibration` says whether it is fresh and, when it is, the
    pass rate corrected for the judge's measured errors (docs/calibration.md).
    As `dagtui run` does: `stream="out.results.jsonl"` writes each case's result as one
    JSON line the moment it finishes, `trace_dir="traces"` one trace per case (open it with
    `dagtui step GRAPH --trace FILE`), `shard="2/4"` runs only that part of the cases
    (the report records which), and `sinks` are further objects told about each finished
    case (`dagtui.run.sinks.Sink`). A results line or trace that could not be written
    raises its OSError once the run has ended.
    Judge options (`model`, `api_base`, `timeout`, `retries`, `rpm`, `via`, `temperature`,
    `cache`, ...) go to the judge as `dagtui run`'s flags do."""
    return asyncio.run(a_evaluate(graph, cases, judge=judge, concurrency=concurrency,
                                  workers=workers, allow_python=allow_python,
                                  python_path=python_path, scheduler=scheduler,
                                  calibration=calibration, lenient=lenient, stream=stream,
                                  trace_dir=trace_dir, shard=shard, sinks=sinks, **opts))


async def a_align(graph: LoadedGraph | Graph | str | os.PathLike[str], node: str,
                  cases: Any = None, *, judge: str | Judge | None = None,
                  **opts: Any) -> Alignment:
    """Align one node with the labels, proven on held-out cases: an `Alignment`
    (`dagtui.calibration.align.a_align` says what is measured and takes `opts`: holdout,
    seed, method, candidates, proposer, tries, concurrency and the judge's options).
    `result.aligned_graph` is the graph with the change; nothing is written."""
    from dagtui.calibration.align import a_align as run

    return await run(graph, node, cases, judge=judge, **opts)


def align(graph: LoadedGraph | Graph | str | os.PathLike[str], node: str, cases: Any = None,
          *, judge: str | Judge | None = None, **opts: Any) -> Alignment:
    """Synchronous `a_align` (not from inside a running event loop)."""
    return asyncio.run(a_align(graph, node, cases, judge=judge, **opts))

"""What every integration shares: loading a graph once, running a case, saving its trace, and
the explanation a failure shows (the path, then each node's verdict and reason).

Kept apart from the integrations so that pytest, DeepEval and Inspect show one and the same
account of a run, and a fix to it reaches all three.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagtui.run.sinks import BaseSink
from dagtui.text import shorten, verdict_text
from dagtui.workdir import shown_path

if TYPE_CHECKING:
    from dagtui.api import LoadedGraph
    from dagtui.judges.base import Judge
    from dagtui.report.trace import RunResult
    from dagtui.run.cases import Case

#: loaded graphs by (resolved path, mtime, size, allow_python): a test module asserting on
#: fifty cases validates the graph once and keeps one engine (and its cache) per judge
_GRAPHS: dict[tuple[str, int, int, bool], LoadedGraph] = {}


def load_graph(graph: str | os.PathLike[str] | LoadedGraph, *,
               allow_python: bool = False) -> LoadedGraph:
    """A validated graph (GraphError on errors), loaded once per file version."""
    from dagtui.api import LoadedGraph, load

    if isinstance(graph, LoadedGraph):
        return graph
    path = Path(graph).resolve()
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size, allow_python)
    loaded = _GRAPHS.get(key)
    if loaded is None:
        loaded = _GRAPHS[key] = load(path, allow_python=allow_python)
    return loaded


def as_case(case: Case | Mapping[str, Any], default_name: str = "case") -> Case:
    """A Case from a Case or a mapping of its fields (unnamed: `default_name`)."""
    from dagtui.run.cases import Case, case_from_dict

    if isinstance(case, Case):
        return case
    data = dict(case)
    if "name" not in data and "id" not in data:
        data["name"] = default_name
    return case_from_dict(data)


def trace_path(graph: LoadedGraph, case: Case, directory: str | os.PathLike[str] | None = None
               ) -> Path:
    """`.dagtui/traces/GRAPH.CASE.trace.json` in the graph's `.dagtui/`, the name the
    debugger saves under too."""
    from dagtui.workdir import traces_dir

    base = Path(directory) if directory is not None else traces_dir(graph.path)
    stem = Path(graph.path).stem if graph.path else "graph"
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", case.name).strip("-")[:60] or "case"
    return base / f"{stem}.{name}.trace.json"


def save_trace(graph: LoadedGraph, case: Case, judge: Judge, result: RunResult,
               directory: str | os.PathLike[str] | None = None) -> Path | None:
    """Write the run's trace (open it with `dagtui step GRAPH --trace FILE`); None when it
    cannot be written, since a read-only checkout must not turn a verdict into a crash."""
    from dagtui.report.trace import Trace

    try:
        return Trace.of(graph.graph, case, judge, result).save(trace_path(graph, case,
                                                                          directory))
    except OSError:
        return None


async def run_case(graph: LoadedGraph, case: Case, judge: str | Judge | None,
                   judge_options: Mapping[str, Any], *, trace_dir: str | os.PathLike[str] | None
                   = None, save: bool = True) -> tuple[RunResult, Path | None]:
    """Run one case through the graph's engine for `judge` (`dagtui.run.execute.execute_one`,
    the run pipeline's one-case door); the result and, when `save`, its trace file (see
    `save_trace`)."""
    from dagtui.run.execute import execute_one

    engine = graph.engine(judge, **judge_options)
    saved = _SavedTrace(graph, trace_dir)
    result = await execute_one(engine, case, [saved] if save else [])
    return result, saved.path


class _SavedTrace(BaseSink):
    """The sink of an integration's run (`dagtui.run.sinks`): the case's trace, saved
    where the debugger looks (`save_trace`); `path` None until saved, or when it could not
    be."""

    def __init__(self, graph: LoadedGraph, directory: str | os.PathLike[str] | None) -> None:
        self.graph = graph
        self.directory = directory
        self.path: Path | None = None

    def finished(self, done: Any) -> bool:
        self.path = save_trace(self.graph, done.case, done.judge, done.result, self.directory)
        return False


def path_text(result: RunResult) -> str:
    """The path on one line: `extract → present=true → order=Correct order → score 10`."""
    return result.describe_path()


def node_verdicts(result: RunResult) -> dict[str, dict[str, Any]]:
    """Per node on the path: its type, answer (verdict, evidence or G-Eval score), reason,
    where it led and the leaf score; JSON-ready, for metadata and reports."""
    out: dict[str, dict[str, Any]] = {}
    for step in result.steps:
        out[step.node] = {
            "type": step.node_type, "answer": step.answer, "reason": step.reason,
            "then": step.then, "score": step.leaf_score, "source": step.source,
            **({"error": step.error} if step.error else {}),
        }
    return out


def explain(result: RunResult, trace: Path | None = None, *, graph: LoadedGraph | None = None
            ) -> str:
    """The account of a run a failure message shows: outcome, path, each node's answer and
    reason, and the trace to open in the debugger."""
    name = graph.graph.metric.name if graph is not None else "graph"
    if result.status == "error" or result.status == "not_run":
        head = f"{name}: case {result.case!r} ended in an error: {result.error}"
    else:
        verdict = "passed" if result.success else "failed"
        head = (f"{name}: case {result.case!r} {verdict}: score {result.score:.2f} "
                f"(threshold {result.threshold:g})")
    lines = [head, f"  path: {path_text(result)}"]
    for step in result.steps:
        answer = _short(step.answer)
        reason = f" — {_short(step.reason, 160)}" if step.reason else ""
        error = f" [error: {_short(step.error, 160)}]" if step.error else ""
        lines.append(f"  {step.node} ({step.node_type}): {answer}{reason}{error}")
    if result.reason and (not result.steps or result.steps[-1].reason != result.reason):
        lines.append(f"  reason: {_short(result.reason, 240)}")
    if trace is not None:
        shown = shown_path(trace)
        graph_file = shown_path(Path(graph.path)) if graph is not None and graph.path else "GRAPH"
        lines.append(f"  trace: {shown} (dagtui step {graph_file} --trace {shown})")
    return "\n".join(lines)


def _short(value: Any, width: int = 80) -> str:
    """An answer, reason or error on one line, cut to fit the message (`-`: none)."""
    return shorten("-" if value is None else verdict_text(value), width, flat="mark")

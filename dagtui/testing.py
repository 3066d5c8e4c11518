"""Graphs as test assertions: `assert_graph("graph.toml", case, judge=...)`.

    from dagtui.testing import assert_graph

    def test_summary_format():
        assert_graph("graphs/meeting_summary.toml",
                     {"name": "weekly", "actual_output": summary}, judge="gpt-4.1-mini")

A failing case raises `GraphAssertionError` (an AssertionError, so any test runner reports it
as a failure) whose message is the whole account of the run: the score against the
threshold, the path taken, each node's verdict and reason, and the trace file written under
`.dagtui/traces/` to open in the debugger (`dagtui step GRAPH --trace FILE`). A bare `assert`
on a score says only `0.0 >= 0.5`; this says which gate said no and why.

The graph is loaded and validated once per file version and keeps one engine per judge, so
its answer cache and call counting work across the assertions of a test session. pytest users
get the same through the `dagtui_graph` fixture (`dagtui.integrations.pytest_plugin`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagtui.integrations.common import as_case, explain, load_graph, run_case

if TYPE_CHECKING:
    from dagtui.api import LoadedGraph
    from dagtui.judges.base import Judge
    from dagtui.report.trace import RunResult
    from dagtui.run.cases import Case

__all__ = ["GraphAssertionError", "a_assert_graph", "assert_graph"]


class GraphAssertionError(AssertionError):
    """A case the graph did not pass; `result` is the run, `trace` the file written."""

    def __init__(self, message: str, result: RunResult, trace: Path | None) -> None:
        super().__init__(message)
        self.result = result
        self.trace = trace


async def a_assert_graph(
    graph: str | os.PathLike[str] | LoadedGraph,
    case: Case | Mapping[str, Any],
    *,
    judge: str | Judge | None = None,
    passes: bool | None = True,
    score: float | None = None,
    allow_python: bool = False,
    trace_dir: str | os.PathLike[str] | None = None,
    **judge_options: Any,
) -> RunResult:
    """`assert_graph` for async tests (inside a running event loop)."""
    __tracebackhide__ = True  # pytest: the failure points at the test, not at this helper
    run = await _run(graph, case, judge, allow_python, trace_dir, judge_options)
    return _verdict(*run, passes=passes, score=score)


def assert_graph(
    graph: str | os.PathLike[str] | LoadedGraph,
    case: Case | Mapping[str, Any],
    *,
    judge: str | Judge | None = None,
    passes: bool | None = True,
    score: float | None = None,
    allow_python: bool = False,
    trace_dir: str | os.PathLike[str] | None = None,
    **judge_options: Any,
) -> RunResult:
    """Run one case through a graph file and fail, explaining the run, unless it turns out
    as expected. Returns the `RunResult` (score, success, reason, path, steps, calls).

    `judge`: a litellm model string (default: `DAGTUI_MODEL`, else the graph's `[metric]
    model`), `"labels"` (the case's own labels: a logic test, no calls) or a Judge.
    `passes`: True (default) wants the case to pass the graph's threshold, False wants it to
    fail, None checks neither. `score`: the exact score (0..1) wanted. A run that ends in a
    judge error always fails. `judge_options` go to the litellm judge (`api_base`, `cache`,
    `timeout`, `retries`, ...). Not for use inside a running event loop: await
    `a_assert_graph` there.
    """
    __tracebackhide__ = True
    # the run happens in asyncio.run, the raise out here: a failure's traceback then ends
    # at the test's own line instead of inside the event loop
    run = asyncio.run(_run(graph, case, judge, allow_python, trace_dir, judge_options))
    return _verdict(*run, passes=passes, score=score)


async def _run(graph: str | os.PathLike[str] | LoadedGraph, case: Case | Mapping[str, Any],
               judge: str | Judge | None, allow_python: bool,
               trace_dir: str | os.PathLike[str] | None, judge_options: dict[str, Any]
               ) -> tuple[LoadedGraph, RunResult, Path | None]:
    loaded = load_graph(graph, allow_python=allow_python)
    the_case = as_case(case)
    result, trace = await run_case(loaded, the_case, judge, judge_options, trace_dir=trace_dir)
    return loaded, result, trace


def _verdict(loaded: LoadedGraph, result: RunResult, trace: Path | None, *,
             passes: bool | None, score: float | None) -> RunResult:
    __tracebackhide__ = True
    problem = _problem(result, passes, score)
    if problem:
        raise GraphAssertionError(f"{problem}\n{explain(result, trace, graph=loaded)}",
                                  result, trace)
    return result


def _problem(result: RunResult, passes: bool | None, score: float | None) -> str | None:
    """Why the run is not what the test wanted, or None."""
    if result.status in ("error", "not_run"):
        return f"case {result.case!r}: the graph could not judge it ({result.error_kind})"
    if score is not None and (result.score is None or abs(result.score - score) > 1e-9):
        return f"case {result.case!r}: score {result.score:g}, wanted {score:g}"
    if passes is True and not result.success:
        return f"case {result.case!r} failed the graph"
    if passes is False and result.success:
        return f"case {result.case!r} passed the graph, wanted it to fail"
    return None

"""A dagtui graph as an Inspect AI scorer: `graph_scorer("graph.toml")`.

    from inspect_ai import Task, task
    from inspect_ai.solver import generate
    from dagtui.integrations.inspect import graph_scorer

    @task
    def summaries():
        return Task(dataset=..., solver=generate(), scorer=graph_scorer("graphs/meeting_summary.toml"))

Each sample becomes a dagtui case: `input` is the sample's input text, `actual_output` the
model's completion, `expected_output` the target (when there is one), and sample metadata
whose key is a case field (`context`, `retrieval_context`, `tools_called`, `expected_tools`,
`tags`) fills that field; the rest is the case's `metadata`. The graph runs on dagtui's engine
(its judge, cache and traces). The score's value is `{"score": 0..1, "pass": 1 or 0}` (Inspect
reports the mean and stderr of each), its explanation the path taken with every node's verdict
and reason, its metadata the per-node verdicts (`verdicts`), the path, the judge calls and
the trace file. A case the judge could not judge is recorded unscored (left out of the
metrics), with the error as its explanation.

Install with the `inspect` extra (`pip install 'dagtui[inspect]'`). Inspect is imported only
when `graph_scorer` is first used, so this module imports without it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from dagtui.integrations.common import explain, load_graph, node_verdicts, path_text, run_case

if TYPE_CHECKING:
    from dagtui.api import LoadedGraph
    from dagtui.judges.base import Judge

# graph_scorer is a module attribute made on first access (`__getattr__`)
__all__ = ["graph_scorer"]  # noqa: F822

#: case fields a sample's metadata may carry under their own names
CASE_FIELDS = ("context", "retrieval_context", "tools_called", "expected_tools", "tags")

_MADE: dict[str, Any] = {}


def __getattr__(name: str) -> Any:  # PEP 562: the scorer is registered with Inspect when asked for
    if name == "graph_scorer":
        if name not in _MADE:
            _MADE[name] = _make_graph_scorer()
        return _MADE[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _make_graph_scorer() -> Any:
    from inspect_ai.scorer import Score, Target, mean, scorer, stderr
    from inspect_ai.solver import TaskState

    @scorer(metrics={"score": [mean(), stderr()], "pass": [mean()]}, name="graph_scorer")
    def graph_scorer(
        graph: str | os.PathLike[str] | LoadedGraph,
        judge: str | Judge | None = None,
        threshold: float | None = None,
        *,
        allow_python: bool = False,
        trace_dir: str | os.PathLike[str] | None = None,
        save_traces: bool = True,
        **judge_options: Any,
    ) -> Any:
        """Score each sample with a dagtui graph. `judge`: a litellm model string (default:
        `DAGTUI_MODEL`, else the graph's model), `"labels"` or a dagtui Judge;
        `threshold` overrides the graph's; `judge_options` go to the litellm judge
        (`api_base`, `cache`, `timeout`, ...)."""
        loaded = load_graph(graph, allow_python=allow_python)
        settings = loaded.graph.metric
        bar = settings.effective_threshold if threshold is None else threshold

        async def score(state: TaskState, target: Target) -> Score:
            case = case_from_sample(state, target)
            result, trace = await run_case(loaded, case, judge, judge_options,
                                           trace_dir=trace_dir, save=save_traces)
            metadata = {"path": path_text(result), "verdicts": node_verdicts(result),
                        "leaf": result.leaf, "calls": result.calls,
                        "trace": str(trace) if trace else None}
            text = explain(result, trace, graph=loaded)
            if result.status in ("error", "not_run") or result.score is None:
                return Score.unscored(reason=f"dagtui judge error ({result.error_kind})",
                                      answer=state.output.completion, explanation=text,
                                      metadata={**metadata, "error": result.error})
            passed = result.score >= bar
            return Score(value={"score": result.score, "pass": 1.0 if passed else 0.0},
                         answer=state.output.completion, explanation=text, metadata=metadata)

        return score

    return graph_scorer


def case_from_sample(state: Any, target: Any) -> Any:
    """A dagtui Case from an Inspect sample's state and target (see the module docstring)."""
    from dagtui.run.cases import case_from_dict

    data: dict[str, Any] = {"name": str(state.sample_id), "input": state.input_text,
                            "actual_output": state.output.completion}
    expected = getattr(target, "text", "")
    if expected:
        data["expected_output"] = expected
    rest: dict[str, Any] = {}
    for key, value in (state.metadata or {}).items():
        if key in CASE_FIELDS:
            data[key] = value
        else:
            rest[key] = value
    if rest:
        data["metadata"] = rest
    return case_from_dict(data)

"""A dagtui graph as a DeepEval metric: `GraphMetric("graph.toml")`.

    from deepeval import evaluate
    from dagtui.integrations.deepeval import GraphMetric

    evaluate(test_cases, [GraphMetric("graphs/meeting_summary.toml")])

The graph runs on dagtui's own engine, not DeepEval's `DAGMetric`: one call per judgement
with the reason in it, the answer cache in `.dagtui/`, check nodes in code, and a trace per
case under `.dagtui/traces/` to open in the debugger. DeepEval sees an ordinary metric: it
works in `evaluate()`, `assert_test()` and `deepeval test run`, and sets `score` (0..1),
`reason` (the deciding verdict's), `success` (against the graph's threshold, or `threshold=`)
and, beyond DeepEval's fields, `path` (the verdicts taken, on one line), `verdicts` (per node:
answer, reason, next node, score), `calls`, `trace` and `result` (dagtui's `RunResult`).
`verbose_logs` holds the whole account (path, each node's verdict and reason, trace file).

Graphs with `multi_turn = true` take conversations: `ConversationalGraphMetric`.

Install with the `deepeval` extra (`pip install 'dagtui[deepeval]'`). DeepEval is imported
only when `GraphMetric` is first used, so this module imports without it (the metric classes
are built then, since they subclass DeepEval's).
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import json
import os
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagtui.integrations.common import explain, load_graph, node_verdicts, path_text, run_case

if TYPE_CHECKING:
    from dagtui.api import LoadedGraph
    from dagtui.judges.base import Judge
    from dagtui.report.trace import RunResult

# the two metric classes are module attributes made on first access (`__getattr__`)
__all__ = ["ConversationalGraphMetric", "GraphMetric", "case_from_test_case"]  # noqa: F822

#: the classes, built on first use (they subclass DeepEval's, which must be importable then)
_CLASSES: dict[str, type] = {}


def __getattr__(name: str) -> Any:  # PEP 562: GraphMetric is made when first asked for
    if name in ("GraphMetric", "ConversationalGraphMetric"):
        if not _CLASSES:
            _build_classes()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _GraphMetricMixin:
    """Everything both metric classes do; only their DeepEval base class differs."""

    def __init__(
        self,
        graph: str | os.PathLike[str] | LoadedGraph,
        judge: str | Judge | None = None,
        threshold: float | None = None,
        *,
        allow_python: bool = False,
        trace_dir: str | os.PathLike[str] | None = None,
        save_traces: bool = True,
        judge_options: dict[str, Any] | None = None,
        async_mode: bool = True,
        verbose_mode: bool = False,
    ) -> None:
        """`graph`: a graph file (or a `dagtui.load` result). `judge`: a litellm model
        string (default: `DAGTUI_MODEL`, else the graph's model), `"labels"` or a dagtui
        Judge. `threshold`: overrides the graph's. `judge_options`: for the litellm judge
        (`api_base`, `cache`, `timeout`, `retries`, `concurrency`, ...).

        Every argument is kept under its own name: DeepEval copies a metric for each test
        case by calling its class with the attributes named like `__init__`'s arguments."""
        self.graph = graph
        self.judge = judge
        self.allow_python = allow_python
        self.trace_dir = trace_dir
        self.save_traces = save_traces
        self.judge_options = dict(judge_options or {})
        self.async_mode = async_mode
        self.verbose_mode = verbose_mode
        self._loaded = load_graph(graph, allow_python=allow_python)
        settings = self._loaded.graph.metric
        self.threshold = settings.effective_threshold if threshold is None else threshold
        self.strict_mode = settings.strict
        self.include_reason = settings.include_reason
        self.evaluation_model = self._model_name()
        self.path: str | None = None
        self.verdicts: dict[str, dict[str, Any]] = {}
        self.calls = 0
        self.trace: Path | None = None
        self.result: RunResult | None = None

    @property
    def __name__(self) -> str:  # DeepEval names a metric by this in its reports
        return self._loaded.graph.metric.name

    def _model_name(self) -> str:
        if self.judge is None or isinstance(self.judge, str):
            if self.judge == "labels":
                return "labels"
            from dagtui.api import model_for

            return model_for(self._loaded.graph, self.judge)
        return str(getattr(self.judge, "name", type(self.judge).__name__))

    # -- DeepEval's interface ------------------------------------------------------------
    def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float | None:
        """Run the test case through the graph (synchronously); returns the score."""
        return _run_blocking(self.a_measure(test_case))

    async def a_measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float | None:
        """Run the test case through the graph; returns the score (None on a judge error,
        with `error` set and `success` False)."""
        case = case_from_test_case(test_case)
        result, trace = await run_case(self._loaded, case, self.judge, self.judge_options,
                                       trace_dir=self.trace_dir, save=self.save_traces)
        self._record(result, trace)
        return self.score

    def is_successful(self) -> bool:
        if self.error is not None or self.score is None:
            self.success = False
        else:
            self.success = self.score >= self.threshold
        return self.success

    def _record(self, result: RunResult, trace: Path | None) -> None:
        self.result = result
        self.trace = trace
        self.path = path_text(result)
        self.verdicts = node_verdicts(result)
        self.score_breakdown = {node: v["answer"] for node, v in self.verdicts.items()}
        self.calls = result.calls
        self.error = result.error if result.status in ("error", "not_run") else None
        self.score = None if self.error is not None else result.score
        self.reason = result.reason or None
        self.evaluation_cost = result.cost
        self.input_tokens = result.prompt_tokens
        self.output_tokens = result.completion_tokens
        self.verbose_logs = explain(result, trace, graph=self._loaded)
        self.is_successful()


def _build_classes() -> None:
    from deepeval.metrics import BaseConversationalMetric, BaseMetric

    class GraphMetric(_GraphMetricMixin, BaseMetric):
        """A dagtui graph as a DeepEval metric on single-turn test cases (`LLMTestCase`)."""

    class ConversationalGraphMetric(_GraphMetricMixin, BaseConversationalMetric):
        """A multi-turn dagtui graph as a DeepEval metric on `ConversationalTestCase`s."""

    # named here: the mixin's `__name__` property (DeepEval's metric name) hides the class's
    for name, cls in (("GraphMetric", GraphMetric),
                      ("ConversationalGraphMetric", ConversationalGraphMetric)):
        cls.__module__ = __name__
        _CLASSES[name] = cls


def case_from_test_case(test_case: Any) -> Any:
    """A dagtui Case from a DeepEval test case (single-turn or conversational): the fields
    dagtui's params name, tool calls and retrieved contexts as plain data. An unnamed test
    case is named after a hash of its content, so its trace file is its own."""
    from dagtui.run.cases import SINGLE_TURN_FIELDS, case_from_dict

    data: dict[str, Any] = {}
    keys = SINGLE_TURN_FIELDS + ("turns", "scenario", "expected_outcome", "user_description",
                                 "chatbot_role")
    for key in keys:
        value = getattr(test_case, key, None)
        if value is not None:
            data[key] = _plain(value)
    name = getattr(test_case, "name", None)
    if not name:
        blob = json.dumps(data, sort_keys=True, default=str).encode("utf-8")
        name = "case-" + hashlib.sha256(blob).hexdigest()[:10]
    return case_from_dict({"name": str(name), **data})


def _plain(value: Any) -> Any:
    """DeepEval's pydantic objects (ToolCall, Turn, RetrievedContextData) as plain data."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if type(value).__name__ == "RetrievedContextData":
        return value.context
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return {k: _plain(v) for k, v in dump(exclude_none=True).items()}
    if isinstance(value, enum.Enum):
        return value.value
    return value


def _run_blocking(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to its end from synchronous code, even when the caller is inside a
    running event loop (DeepEval's sync mode can be): then on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name="dagtui-graph-metric")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")

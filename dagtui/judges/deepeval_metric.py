"""Run a `metric` leaf: a DeepEval metric (`AnswerRelevancyMetric`, ...) on one case.

DeepEval is an optional dependency (it pins packages the core does not want), so it is
imported here, when a metric leaf first runs with a model judge, never at import time. The
metric gets the run's judge as DeepEval expects it: a `LiteLLMModel` with the same model
name, endpoint and key the litellm judge uses, so a metric leaf is judged by the same
model as every other node. Its 0..1 score, times 10, is the leaf's score (DeepEval's DAG
takes the child metric's score as the result the same way), and its reason is the step's.

DeepEval makes its own calls (AnswerRelevancyMetric makes three); dagtui cannot see them one
by one, so the step records one call carrying the metric's tokens and cost.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from dagtui.judges.base import Ask, CallRecord, JudgeError, Reply
from dagtui.judges.bounds import check_parsed, received
from dagtui.judges.prompts import Parsed
from dagtui.redact import redact_url

#: case fields an `LLMTestCase` takes as plain values (tools need DeepEval's ToolCall)
_CASE_FIELDS = ("input", "actual_output", "expected_output", "context", "retrieval_context",
                "metadata", "tags")


def missing_deepeval(node_id: str, metric: str) -> JudgeError:
    """The step error for a metric leaf where DeepEval is not installed."""
    return JudgeError("graph", f"metric leaf {node_id!r} runs DeepEval's {metric}, and "
                      "DeepEval is not installed here (pip install deepeval)")


async def run_metric(ask: Ask, model: str, *, api_base: str | None = None,
                     api_key: str | None = None, temperature: float = 0.0,
                     timeout: float | None = None) -> Reply:
    """Measure `ask.node` (a MetricNode) on `ask.case` with DeepEval; raises JudgeError.

    `timeout` bounds the whole measurement (all of the metric's own calls): DeepEval's
    retries are its own, and a metric that never answers must still fail the step."""
    node: Any = ask.node
    name = node.metric
    if ask.graph.metric.multi_turn:
        raise JudgeError("graph", f"metric leaf {node.id!r}: metric leaves run on single-turn "
                         "graphs; DeepEval's conversational metrics are not supported")
    try:
        import deepeval.metrics as metrics
        from deepeval.models import LiteLLMModel
        from deepeval.test_case import LLMTestCase
    except ImportError:
        raise missing_deepeval(node.id, name) from None
    cls = getattr(metrics, name, None)
    if not isinstance(cls, type):
        raise JudgeError("graph", f"metric leaf {node.id!r}: deepeval.metrics has no class "
                         f"{name!r} (DeepEval's metrics are named like AnswerRelevancyMetric)")
    judge_kwargs: dict[str, Any] = {"model": model, "temperature": temperature}
    if api_base:
        judge_kwargs["base_url"] = api_base
    if api_key:
        judge_kwargs["api_key"] = api_key
    fields = ask.case.fields
    case_kwargs = {k: fields[k] for k in _CASE_FIELDS if fields.get(k) is not None}
    request = {"deepeval_metric": name, "args": dict(node.args), "model": model,
               "api_base": redact_url(api_base)}
    start = time.perf_counter()
    try:
        metric = cls(**_args(node.args),
                     model=LiteLLMModel(**judge_kwargs))
        test_case = LLMTestCase(**{"input": "", "actual_output": "", **case_kwargs})
        await asyncio.wait_for(metric.a_measure(test_case, _show_indicator=False), timeout)
    except JudgeError:
        raise
    except TimeoutError:
        raise JudgeError("timeout", f"metric leaf {node.id!r}: DeepEval's {name} did not "
                         f"finish within {timeout:g} s") from None
    except Exception as exc:  # noqa: BLE001 - DeepEval raises many kinds; the step shows it
        raise JudgeError("other", f"metric leaf {node.id!r}: DeepEval's {name} failed: "
                         f"{type(exc).__name__}: {exc}") from None
    score = getattr(metric, "score", None)
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise JudgeError("out_of_set", f"metric leaf {node.id!r}: {name} gave score "
                         f"{score!r}, not a number from 0 to 1")
    # a reason as any judge's: bounded, and no key DeepEval's model echoed in it
    reason = received(str(getattr(metric, "reason", None) or "")) or ""
    call = CallRecord(
        request=request,
        raw=None,
        prompt_tokens=int(getattr(metric, "input_tokens", 0) or 0),
        completion_tokens=int(getattr(metric, "output_tokens", 0) or 0),
        cost=getattr(metric, "evaluation_cost", None),
        latency=time.perf_counter() - start,
        purpose="metric",
    )
    value = round(float(score) * 10, 9)  # 0.7 -> 7.0, not 7.000000000000001
    check_parsed(ask.prompt, Parsed(value, reason))
    return Reply(value, reason, raw=f'{{"score": {float(score)!r}}}', calls=[call],
                 method="deepeval", sampled=score)


def _args(args: dict[str, Any]) -> dict[str, Any]:
    """The metric's keyword arguments; `evaluation_params` names become DeepEval's enum
    (single-turn: `run_metric` refuses multi-turn graphs before this)."""
    out = dict(args)
    params = out.get("evaluation_params")
    if isinstance(params, list) and all(isinstance(p, str) for p in params):
        from deepeval.test_case import SingleTurnParams

        out["evaluation_params"] = [SingleTurnParams(p) for p in params]
    return out

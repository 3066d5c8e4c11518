"""The one place a judge is made from what a person names: `dagtui run` and `step`, the
Python API, the suite runner and the debugger's `j` key all come here.

A judge is named `labels` (the case's own labels), `human` (a person answers: the caller
says how, since asking needs a user interface and this module stays free of one), `replay`
(a saved trace), `litellm` (a model), or by a litellm model string; a `Judge` instance is
used as it is. The model a litellm judge calls is resolved by `model_for` only
(`dagtui.judges.default_model`, re-exported here). litellm
itself is not imported here: `LiteLLMJudge` loads it on its first call, so a labels or
human run never pays for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dagtui.judges.base import Judge
from dagtui.judges.default_model import model_for

if TYPE_CHECKING:
    from dagtui.graph.model import Graph
    from dagtui.judges.cache import Cache
    from dagtui.report.trace import Trace

__all__ = ["JUDGE_NAMES", "default_judge_name", "make_judge", "model_for"]

#: the judges a person can name (`dagtui step --judge`, the debugger's `j` key)
JUDGE_NAMES = ("labels", "human", "replay", "litellm")


def make_judge(
    judge: str | Judge | None,
    graph: Graph | None,
    *,
    model: str | None = None,
    human: Callable[[], Judge] | None = None,
    trace: Trace | str | os.PathLike[str] | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    cache: bool | str | os.PathLike[str] | Cache | None = True,
    concurrency: int = 8,
    timeout: float = 60.0,
    retries: int = 3,
    **options: Any,
) -> Judge:
    """A judge from a name, a litellm model string, or an instance (returned as is).

    `judge=None` or `"litellm"` is a litellm judge on `model_for(graph, model)`; any other
    string not in `JUDGE_NAMES` is itself the model. `human` makes the human judge (the
    debugger passes one that asks in its dialogs); `trace` is what the replay judge replays.
    `cache`: True the graph's `.dagtui` cache (`dagtui.workdir.workdir_for`), a directory, a `Cache`, or False/None for
    none. The rest goes to `LiteLLMJudge`. Raises ValueError with a message a person can
    act on when the named judge cannot be made."""
    if isinstance(judge, Judge):
        return judge
    if judge == "labels":
        from dagtui.judges.labels import LabelsJudge

        return LabelsJudge()
    if judge == "human":
        if human is None:
            raise ValueError("the human judge needs a way to ask a person (the debugger)")
        return human()
    if judge == "replay":
        if trace is None:
            raise ValueError("the replay judge needs a saved trace (--trace FILE)")
        from dagtui.judges.replay import ReplayJudge

        return ReplayJudge(trace)
    from dagtui.judges.cache import Cache
    from dagtui.judges.litellm_judge import LiteLLMJudge

    if isinstance(cache, Cache):
        store: Cache | None = cache
    elif cache is True:  # the graph's .dagtui, wherever the caller runs from
        from dagtui.workdir import workdir_for

        store = Cache(workdir_for(graph.path if graph is not None else None))
    elif cache:
        store = Cache(cache)
    else:
        store = None
    named = model if judge in (None, "litellm") else judge
    return LiteLLMJudge(model_for(graph, named), api_base=api_base, api_key=api_key,
                        cache=store, concurrency=concurrency, timeout=timeout,
                        retries=retries, **options)


def default_judge_name(cases: list[Any]) -> str:
    """Offline first: the labels judge when the cases carry labels, else the human judge."""
    return "labels" if any(getattr(c, "expected", None) for c in cases) else "human"

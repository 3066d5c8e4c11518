"""A judge model litellm does not know but nearly does (`gtp-4.1-mini`): DAG118.

A misspelt model passed `validate` and failed only at `run`, with the provider's long error.
litellm ships its model list as data (`model_prices_and_context_window_backup.json` in its
package); it is read as JSON by dagtui/judges/litellm_map.py, found with `importlib.util.find_spec`,
never by importing litellm (seconds). Like DAG113 it is checked for files on disk (`validate` and every command
that reads a graph), not on the editor's every keystroke. A model is flagged only when it is
not in the list and a listed one is close to it: a model newer than the installed litellm,
or one a local server serves (`ollama/...`), has no close neighbour and is left alone.
"""

from __future__ import annotations

import functools
from typing import Any

from dagtui.diagnostics import Diagnostic
from dagtui.graph.loader import Collector, LoadResult
from dagtui.judges.litellm_map import model_map
from dagtui.text import closest

#: how alike a listed name must be to count as what was meant: model names share long runs
#: (`-model`, `-mini`), so the looser 0.6 of other suggestions would name strangers
CUTOFF = 0.8
#: providers that serve whatever model their server has: no list can know the names
OPEN_PROVIDERS = frozenset((
    "ollama", "ollama_chat", "hosted_vllm", "vllm", "lm_studio", "llamafile", "openai_like",
    "custom_openai", "custom", "huggingface", "xinference", "litellm_proxy", "openrouter",
    "together_ai", "replicate", "sagemaker", "bedrock", "azure", "azure_ai",
))


@functools.cache
def known_models() -> frozenset[str] | None:
    """Every model name in litellm's shipped list, and each without its provider prefix;
    None when litellm or its list is not there (then nothing is flagged)."""
    data = model_map()
    if not data:
        return None
    names = {k for k in data if isinstance(k, str) and k != "sample_spec"}
    return frozenset(names | {k.split("/", 1)[1] for k in names if "/" in k})


def unknown_model(model: str) -> str | None:
    """The listed model `model` is probably a misspelling of (with its provider prefix
    kept), or None: it is listed, served by an open provider, or like no listed model."""
    names = known_models()
    if not names or not model or model in names:
        return None
    provider, _, rest = model.rpartition("/")
    if provider and (rest in names or provider.split("/")[0] in OPEN_PROVIDERS):
        return None
    plain = sorted(n for n in names if "/" not in n)
    near = closest(rest, plain, cutoff=CUTOFF)
    return None if near is None else (f"{provider}/{near}" if provider else near)


def misspelt_models(load: LoadResult) -> list[Diagnostic]:
    """DAG118 for `[metric].model` and each node's `model` that looks misspelt."""
    graph = load.graph
    if graph is None or not load.file:
        return []
    places: list[tuple[Any, tuple[str, ...], str | None]] = [
        (graph.metric.model, ("metric", "model"), None)]
    places += [(getattr(node, "model", None), ("nodes", nid, "model"), nid)
               for nid, node in graph.nodes.items()]
    sink = Collector(load.file, load.positions)
    for model, path, nid in places:
        near = unknown_model(model) if isinstance(model, str) else None
        if near is not None:
            sink.add("DAG118", f"model '{model}' is not in litellm's model list (did you mean "
                     f"'{near}'?); a run would fail at its first call", path, node=nid,
                     fld="model", at_value=True)
    return sink.diags

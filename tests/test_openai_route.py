"""The OpenAI-compatible route agrees with litellm: what a model supports.

`dagtui.judges.pricemap` reads litellm's bundled map as data instead of importing litellm;
for every model the OpenAI-compatible route takes, its answer (structured output, logprobs)
must be litellm's own, or the two routes would build different requests and cache keys.
"""

from __future__ import annotations

import pytest

from dagtui.judges import pricemap


def _route_models() -> list[str]:
    names = {"openai/llama3", "openai/meta-llama/Llama-3.1-8B-Instruct", "openai/openai/gpt-4o"}
    for key, value in pricemap.model_map().items():
        if isinstance(value, dict) and value.get("litellm_provider") == "openai":
            names |= {key, f"openai/{key}"}
    return sorted(m for m in names if pricemap.plain_openai_name(m) is not None)


def test_capabilities_from_the_map_are_litellms() -> None:
    from dagtui.judges.litellm_judge import import_litellm

    litellm = import_litellm()
    models = _route_models()
    assert len(models) > 50  # the map was found and read
    differ = []
    for model in models:
        theirs = (bool(litellm.supports_response_schema(model=model)),
                  "logprobs" in (litellm.get_supported_openai_params(model=model) or []))
        ours = (pricemap.supports_schema(pricemap.plain_openai_name(model) or ""), True)
        if ours != theirs:
            differ.append((model, ours, theirs))
    assert differ == []


@pytest.mark.parametrize("model", ["o3-mini", "openai/o1", "gpt-5", "openai/gpt-5-mini",
                                   "anthropic/claude-3-5-sonnet", "ollama/llama3",
                                   "gpt-4o-audio-preview", "not-a-model"])
def test_models_litellm_rewrites_keep_the_litellm_route(model: str) -> None:
    assert pricemap.plain_openai_name(model) is None


def test_bare_openai_names_and_prefixed_ones_take_the_route() -> None:
    assert pricemap.plain_openai_name("gpt-4.1-mini") == "gpt-4.1-mini"
    assert pricemap.plain_openai_name("openai/my-local-model") == "my-local-model"

"""litellm's bundled model map, read as data: prices and capabilities without `import litellm`.

litellm ships `model_prices_and_context_window_backup.json` in its package: per model its
provider, its price per token and what it supports (`supports_response_schema`, ...). The
OpenAI-compatible route (`dagtui.judges.openai_route`) prices its calls and decides whether
to ask for structured output from this file, so it never pays litellm's seconds of import;
the file is found with `importlib.util.find_spec`, which does not import the package, and
read once per process (about 0.1 s), only when a call or a capability lookup needs it
(dagtui/judges/litellm_map.py, which `validate`'s model check reads it with too).

The capability rules here mirror litellm's for the models the OpenAI-compatible route takes
(`plain_openai_name`): tests/test_openai_route.py compares them with litellm's own answers
for every OpenAI entry of the map, so the two routes build the same requests and cache keys.
"""

from __future__ import annotations

from typing import Any

from dagtui.judges.litellm_map import map_path, model_map

#: name fragments of OpenAI models litellm rewrites requests for (reasoning series, audio,
#: search, realtime): those stay on the litellm route, where the rewriting happens
SPECIAL = ("gpt-5", "gpt-6", "audio", "search", "realtime")
#: tiers litellm prices above a prompt size (`input_cost_per_token_above_128k_tokens`)
TIERS = (("above_200k_tokens", 200_000), ("above_128k_tokens", 128_000))


def map_identity() -> str:
    """Which map this is (its size and modification time): a new litellm, a new identity,
    so capabilities remembered from the old one are looked up afresh (`dagtui.judges.cache`)."""
    path = map_path()
    if path is None:
        return "none"
    try:
        st = path.stat()
    except OSError:
        return "none"
    return f"{st.st_size}-{st.st_mtime_ns}"


def _is_finetune_price(key: str) -> bool:
    """`ft:gpt-4o` entries are prices only (litellm does not list them as chat models)."""
    return key.startswith("ft:") and key.count(":") <= 1


def entry(name: str) -> dict[str, Any] | None:
    """The map's entry for an OpenAI model `name` (bare, or under `openai/`), or None."""
    data = model_map()
    for key in (name, f"openai/{name}", name.removeprefix("openai/")):
        found = data.get(key)
        if isinstance(found, dict) and found.get("litellm_provider") == "openai":
            return found
    return None


def plain_openai_name(model: str) -> str | None:
    """The model name sent to the server when litellm would call `model` through its plain
    OpenAI chat path, else None.

    `openai/NAME` is NAME on any OpenAI-compatible server (vLLM, Ollama's /v1, a gateway);
    a bare name is OpenAI's when the map lists it as an OpenAI chat model. The o-series and
    the SPECIAL families are left out: litellm rewrites their requests (drops temperature,
    renames parameters), so they keep the litellm route."""
    if model.startswith("openai/"):
        name = model[len("openai/"):]
    else:
        found = model_map().get(model)
        if not isinstance(found, dict) or found.get("litellm_provider") != "openai" \
                or _is_finetune_price(model):
            return None
        name = model
    if not name or _is_o_series(name) or any(s in name for s in SPECIAL):
        return None
    return name


def _is_o_series(name: str) -> bool:
    last = name.split("/")[-1]
    return len(last) > 1 and last[0] == "o" and last[1].isdigit()


def supports_schema(name: str) -> bool:
    """Structured output (json_schema) for an OpenAI model on the plain chat path, as
    litellm's `supports_response_schema` answers: the map's flag, False when unlisted."""
    found = entry(name)
    return bool(found is not None and found.get("supports_response_schema") is True)


def cost(name: str, prompt_tokens: int, completion_tokens: int,
         cached_tokens: int = 0) -> float | None:
    """USD for one call to the OpenAI model `name` (None when the map has no price): input
    and output tokens at the map's per-token prices, cached prompt tokens at the cache-read
    price when it has one, and the `above_...k_tokens` tier prices past those prompt sizes."""
    found = entry(name)
    if found is None:
        return None
    inp, out = found.get("input_cost_per_token"), found.get("output_cost_per_token")
    if not isinstance(inp, int | float) or not isinstance(out, int | float):
        return None
    for suffix, size in TIERS:
        if prompt_tokens > size:
            inp = found.get(f"input_cost_per_token_{suffix}", inp)
            out = found.get(f"output_cost_per_token_{suffix}", out)
            break
    cached = max(0, min(cached_tokens, prompt_tokens))
    read = found.get("cache_read_input_token_cost")
    read = read if isinstance(read, int | float) and cached else inp
    return float((prompt_tokens - cached) * inp + cached * read + completion_tokens * out)

"""What a model supports (structured output, logprobs), found without importing litellm
when it can be.

The answer decides the request (a `response_format`, `logprobs`), and so the cache key:
a rerun must find it before it can look an answer up. Three sources, cheapest first:

1. the note the cache keeps beside its answers (`dagtui.judges.cache.Cache.note`), written the
   first time the model was asked about, under the identity of litellm's bundled map (a new
   litellm: asked afresh). A rerun from the cache reads it and imports nothing.
2. litellm's map read as data (`dagtui.judges.pricemap`), for the OpenAI models litellm
   sends through its plain chat path: the same answer litellm gives (tested for every
   OpenAI entry), without its seconds of import.
3. litellm itself, for every other provider.
"""

from __future__ import annotations

from typing import Any

from dagtui.judges import pricemap


def support(model: str, memo: Any = None) -> tuple[bool, bool]:
    """(structured output, logprobs) for `model` as litellm would answer; `memo` is the
    judge's cache (anything with `note`/`put_note`, or None)."""
    note = getattr(memo, "note", None)
    key = f"support:{pricemap.map_identity()}:{model}"
    if note is not None:
        got = note(key)
        if isinstance(got, list) and len(got) == 2 and all(isinstance(v, bool) for v in got):
            return got[0], got[1]
    name = pricemap.plain_openai_name(model)
    found = (pricemap.supports_schema(name), True) if name is not None else _ask_litellm(model)
    put = getattr(memo, "put_note", None)
    if put is not None:
        put(key, list(found))
    return found


def _ask_litellm(model: str) -> tuple[bool, bool]:
    """litellm's own answer (imports it: seconds, once per process)."""
    from dagtui.judges.litellm_lib import import_litellm

    litellm = import_litellm()
    try:
        schema = bool(litellm.supports_response_schema(model=model))
    except Exception:  # noqa: BLE001 - a model litellm cannot place: no structured output
        schema = False
    try:
        params = litellm.get_supported_openai_params(model=model) or []
        logprobs = "logprobs" in params
    except Exception:  # noqa: BLE001 - likewise: no logprobs
        logprobs = False
    return schema, logprobs

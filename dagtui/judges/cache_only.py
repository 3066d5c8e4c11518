"""A judge that answers only from the cache, and the read-only cache view that records the hits.

Two passes must walk a graph on what the cache already holds, never calling a model nor
writing the file: the Dask client's look-up before it ships cases (`dagtui.run.cluster`: a
case the cache finishes never leaves the client, and the answers found for the others are
shipped with them, since workers never open the sqlite file), and `calibrate --plan`'s replay
of each case's cached path (`dagtui.calibration.plan`). Both build the judge with
`cache_only_judge(judge, RecordingCache(judge.cache))`: a lookup the cache cannot answer is
a step error, so the engine records the case as unfinished instead of asking the model, and
`RecordingCache.found` says which entries the walk used.
"""

from __future__ import annotations

from typing import Any

from dagtui.judges.base import Ask, JudgeError, Reply
from dagtui.judges.cache import JudgeCache
from dagtui.judges.litellm_judge import LiteLLMJudge
from dagtui.kinds import kind_of

#: the message of the step error a lookup the cache cannot answer becomes
NOT_CACHED = "not in the cache"


class RecordingCache:
    """`cache` read through, never written: what each lookup found is kept in `found`.

    It has no `path` and never refreshes, so a judge over it neither opens nor rewrites the
    sqlite file; `put` and `share` do nothing (the real cache's owner stores what a later run
    learns)."""

    path = None
    refresh = False

    def __init__(self, cache: JudgeCache) -> None:
        self.cache = cache
        #: key -> the entry a lookup found, in lookup order (the caller may reset it per case)
        self.found: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        value = self.cache.get(key)
        if value is not None:
            self.found[key] = value
        return value

    def put(self, key: str, model: str, response: dict[str, Any], *,
            api_base: str | None = None) -> None:
        return None

    def share(self) -> None:
        return None

    def close(self) -> None:
        return None


class CacheOnlyJudge(LiteLLMJudge):
    """A litellm judge whose every send fails: only cached answers come back."""

    async def _send(self, request: dict[str, Any], purpose: str) -> Any:
        raise JudgeError("cache_miss", NOT_CACHED)

    async def answer(self, ask: Ask) -> Reply:
        if kind_of(ask.node).measured:  # it asks for itself: never cached here
            raise JudgeError("cache_miss", NOT_CACHED)
        return await super().answer(ask)


def cache_only_judge(judge: Any, recording: RecordingCache) -> LiteLLMJudge:
    """A copy of `judge` (a `LiteLLMJudge`: same model, endpoint, prompts and parameters, so
    the same cache keys) that answers only through `recording`, without lanes of its own."""
    config = dict(judge.worker_config(), cache=None, lanes=0)
    probe = CacheOnlyJudge.from_worker_config(config)
    probe.cache = recording
    return probe

"""The worker half of `--workers` on Dask: a plugin each Dask worker keeps warm.

Imported only inside Dask worker processes (and by `dagtui.run.cluster` when it registers the
plugin), so nothing else pays for importing `distributed`.

`DagtuiPlugin.setup` starts one event loop in a thread of its own and, on it, imports
litellm and runs one judge warm-up (a mock completion, no network): litellm's seconds of
import and its first-request setup are paid once per worker, not per batch, and every later
call runs on the loop the client state was set up on. Per batch (one graph rule, one run)
the plugin builds the judge and engine once, on the first chunk it is given, and keeps them
(and the judge's health guard: one probe per worker, a judge that goes down halts the rest
of the worker's share) until a chunk of another batch arrives.

The worker never opens the sqlite cache: the client ships, with each case, the answers it
found cached for it (`ShippedCache`), and every new answer goes back with the chunk's results
for the client to store — one writer, however many machines.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from distributed import WorkerPlugin, get_worker

PLUGIN_NAME = "dagtui"
#: set (only) while `dagtui.run.cluster` starts the fork server local workers are forked from
PRELOAD_FLAG = "DAGTUI_PRELOAD_LITELLM"


@dataclass
class BatchSpec:
    """What every chunk of one batch shares: sent to each worker once (scattered)."""

    batch: str
    graph: Any
    judge_config: dict[str, Any]
    concurrency: int
    python: Any = None
    #: the client's API keys and endpoints (`DAGTUI_*`, `*_API_KEY`, ...), for remote workers
    env: dict[str, str] = field(default_factory=dict)
    #: the client caches answers: the worker's judge then keeps what it learns (and shares
    #: identical requests in flight), else it caches nothing, as `--no-cache` asks
    cached: bool = True


class ShippedCache:
    """A judge cache held in memory: the answers the client shipped, plus every answer this
    worker stored since (returned to the client by `take_new`). Duck-types `dagtui.judges.cache.Cache`
    for the judge; it is not a `NullCache`, so identical requests in flight are sent once."""

    path = None
    refresh = False

    def __init__(self) -> None:
        self.known: dict[str, dict[str, Any]] = {}
        self.new: list[tuple[str, str, dict[str, Any], str | None]] = []
        self.hits = 0
        self.misses = 0

    def add(self, entries: dict[str, dict[str, Any]]) -> None:
        self.known.update(entries)

    def get(self, key: str) -> dict[str, Any] | None:
        value = self.known.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: str, model: str, response: dict[str, Any], *,
            api_base: str | None = None) -> None:
        self.known[key] = response
        self.new.append((key, model, response, api_base))

    def take_new(self) -> list[tuple[str, str, dict[str, Any], str | None]]:
        out, self.new = self.new, []
        return out

    def __len__(self) -> int:
        return len(self.known)

    def share(self) -> None:
        return None

    def close(self) -> None:
        self.known.clear()


@dataclass
class _Live:
    """One batch's judge and engine on this worker, and the guard held across its chunks."""

    batch: str
    engine: Any
    cache: ShippedCache | None
    guard: contextlib.ExitStack


class DagtuiPlugin(WorkerPlugin):
    """Keeps litellm, a judge and an engine warm in a Dask worker between chunks."""

    name = PLUGIN_NAME
    idempotent = True

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._warm: Any = None
        self._live: _Live | None = None
        self._lock: threading.Lock | None = None  # made in setup: the plugin is pickled

    def setup(self, worker: Any = None) -> None:
        self._lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                        name="dagtui-judge-loop")
        self._thread.start()
        self._warm = asyncio.run_coroutine_threadsafe(_warm_up(), self.loop)

    def teardown(self, worker: Any = None) -> None:
        loop = self.loop
        if loop is None:
            return
        with contextlib.suppress(Exception):
            self._retire()
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self.loop = None

    def wait_warm(self, timeout: float | None = None) -> bool:
        """Block until the warm-up is over (it failing only costs the time it would save)."""
        if self._warm is not None:
            with contextlib.suppress(Exception):
                self._warm.result(timeout)
        return True

    def _retire(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.guard.close()
            judge = live.engine.judge
            if self.loop is not None:
                with contextlib.suppress(Exception):
                    asyncio.run_coroutine_threadsafe(judge.aclose(), self.loop).result(10)

    def _batch(self, spec: BatchSpec) -> _Live:
        """The batch's judge and engine, built on its first chunk here."""
        if self._live is not None and self._live.batch == spec.batch:
            return self._live
        self._retire()
        from dagtui.judges.litellm_judge import LiteLLMJudge
        from dagtui.run.engine import Engine

        os.environ.update(spec.env)
        config = dict(spec.judge_config, cache=None)
        judge = LiteLLMJudge.from_worker_config(config)
        cache = ShippedCache() if spec.cached else None
        if cache is not None:
            judge.cache = cache
        guard = contextlib.ExitStack()
        guard.enter_context(judge.guarded())  # one probe per worker per batch, not per chunk
        # the graph was validated where the batch was made: not again on every worker
        engine = Engine(spec.graph, judge, validate=False, python=spec.python)
        self._live = _Live(spec.batch, engine, cache, guard)
        return self._live

    def run_chunk(self, spec: BatchSpec, chunk: list[tuple[int, Any, dict[str, Any]]]
                  ) -> tuple[list[tuple[int, Any]], list[Any], float]:
        """Run (index, case, shipped answers) items: ([(index, RunResult)], new cache
        entries, CPU seconds this process spent)."""
        assert self.loop is not None and self._lock is not None, "the plugin was not set up"
        self.wait_warm()
        with self._lock:  # one chunk at a time per worker (threads_per_worker=1 anyway)
            live = self._batch(spec)
            if live.cache is not None:
                for _, _, hits in chunk:
                    live.cache.add(hits)
            cpu = _cpu()
            future = asyncio.run_coroutine_threadsafe(_run(live, chunk, spec.concurrency),
                                                      self.loop)
            results = future.result()
            new = live.cache.take_new() if live.cache is not None else []
            return results, new, _cpu() - cpu


async def _warm_up() -> None:
    from dagtui.judges.litellm_judge import LiteLLMJudge, import_litellm

    import_litellm()
    with contextlib.suppress(Exception):
        # litellm's request path (an OpenAI model would take the httpx route and skip it)
        await LiteLLMJudge("openai/gpt-4.1-mini", api_key="warm-up", lanes=0,
                           via="litellm").warm_up()


async def _run(live: _Live, chunk: list[tuple[int, Any, dict[str, Any]]],
               concurrency: int) -> list[tuple[int, Any]]:
    from dagtui.run.batch import run_cases

    cases = [case for _, case, _ in chunk]
    results = await run_cases(live.engine, cases, concurrency=concurrency)
    return [(index, result) for (index, _, _), result in zip(chunk, results, strict=True)]


def _cpu() -> float:
    import time

    return time.process_time()


def run_chunk(spec: BatchSpec, chunk: list[tuple[int, Any, dict[str, Any]]]) -> Any:
    """The Dask task: this worker's plugin runs the chunk (see `DagtuiPlugin.run_chunk`)."""
    plugin = get_worker().plugins.get(PLUGIN_NAME)
    if not isinstance(plugin, DagtuiPlugin):  # a worker that joined before the plugin did
        plugin = DagtuiPlugin()
        plugin.setup()
        get_worker().plugins[PLUGIN_NAME] = plugin
    return plugin.run_chunk(spec, chunk)


def wait_warm(dask_worker: Any) -> bool:
    """Run on every worker (`client.run`) before the clock starts."""
    plugin = dask_worker.plugins.get(PLUGIN_NAME)
    return plugin.wait_warm(120) if plugin is not None else False


def _preload() -> None:
    """In the fork server: import litellm and run one warm-up (its ~50 lazy imports on the
    first request), then close that loop, leaving no thread: forking stays safe and every
    worker is born warm."""
    asyncio.run(_warm_up())


if os.environ.get(PRELOAD_FLAG) == "1":
    _preload()

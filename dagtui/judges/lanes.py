"""Lanes: the litellm calls of a process spread over a few event loops in daemon threads.

Why: litellm spends several milliseconds of Python CPU on each call (request building, cost
and logging bookkeeping, response objects), in many small steps between awaits. With every
call on the engine's one event loop, a burst of replies arriving together is worked off step
by step, all calls of the burst finishing near its end; each case's next request then leaves
late, and the bursts persist from one round to the next. Measured on the engine benchmark
(100 cases, 20 in flight, 200 ms per call, 2 cores): the wall time over the latency bound
drops markedly with the calls on 4 lanes (see `tests/benchmarks/bench_engine.py`, which
prints both). The GIL still runs one thread at a time; what changes is the order the work is
done in, not its amount.

The engine keeps its own loop: a judge awaits `lanes.run(coro)`, which runs `coro` on the
next lane and hands back its result or exception. Cancelling that await (a timeout, the
debugger's stop key) cancels the call on its lane.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: lanes per process unless a judge asks otherwise (0 = run calls on the caller's loop)
DEFAULT_LANES = 4


class Lanes:
    """`count` event loops, each run forever by a daemon thread started on first use."""

    def __init__(self, count: int) -> None:
        if count < 1:
            raise ValueError("a Lanes pool needs at least one lane")
        self.count = count
        self._loops: list[asyncio.AbstractEventLoop] = []
        self._lock = threading.Lock()
        self._turn = itertools.count()

    def _started(self) -> list[asyncio.AbstractEventLoop]:
        with self._lock:
            if not self._loops:
                for i in range(self.count):
                    loop = asyncio.new_event_loop()
                    threading.Thread(target=loop.run_forever, name=f"dagtui-lane-{i}",
                                     daemon=True).start()
                    self._loops.append(loop)
            return self._loops

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the next lane (round robin) and return what it returns."""
        loops = self._started()
        lane = loops[next(self._turn) % len(loops)]
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, lane))


_shared: dict[int, Lanes] = {}
_shared_lock = threading.Lock()


def shared_lanes(count: int) -> Lanes:
    """The process-wide pool of `count` lanes: every judge of a process shares its threads."""
    with _shared_lock:
        if count not in _shared:
            _shared[count] = Lanes(count)
        return _shared[count]

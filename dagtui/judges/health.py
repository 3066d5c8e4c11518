"""Is the judge usable, is it still up, and how fast may it be called.

A batch against a dead endpoint, a missing key or a model litellm does not know used to try
every case with retries and then print a summary of zeros. Three guards stop that:

- the probe (`JudgeHealth.admit`): during a batch, the first call that is not a cache hit
  goes out alone while every other uncached call waits for it. A probe failing with a kind
  that no retry can fix (`PREFLIGHT_FATAL`: auth, not_found, connection) halts the judge:
  the run stops with one line naming the model, the endpoint and the cause. The probe is a
  real case's call, so a healthy run wastes nothing; cache hits never wait (they prove
  nothing, and cost nothing).
- the breaker (`JudgeHealth.failed`): `TRIP_AFTER` calls in a row failing with the same kind
  (after their retries), no success between, mean the provider went down mid-run; the judge
  halts and the calls still to come end as `not_run` instead of each spending its retries.
- the rate (`RateLimiter`): at most `rpm` requests a minute, spaced evenly, across every
  lane and event loop of a process.

A halt lasts while the batch that saw it runs (`LiteLLMJudge.guarded`); outside a batch (the
debugger, one `measure`) calls are not gated, so a fixed endpoint is simply called again.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from dagtui.judges.base import ErrorKind, JudgeError

#: a case the run never judged because the judge halted (its status and its error kind)
NOT_RUN = ErrorKind.NOT_RUN.value
#: probe failures no retry can fix: the judge cannot be used at all
PREFLIGHT_FATAL = frozenset({ErrorKind.AUTH, ErrorKind.NOT_FOUND, ErrorKind.CONNECTION})
#: calls in a row failing with one kind (no success between) that stop a run
TRIP_AFTER = 8
#: how the one line of a judge that never worked starts (`is_unusable` reads it back: a
#: halt reaches the CLI as text, also from worker processes)
UNUSABLE = "judge unusable"
STOPPED = "run stopped early"


def halt_line(text: str | None) -> str | None:
    """The halt's own line inside a case's error text (which the engine prefixes with the
    node), or None when the text is no halt."""
    text = str(text or "")
    at = min((i for i in (text.find(UNUSABLE), text.find(STOPPED)) if i >= 0), default=-1)
    return text[at:] if at >= 0 else None


def is_unusable(text: str | None) -> bool:
    """True for the message of a run halted by its probe (the judge never worked)."""
    return (halt_line(text) or "").startswith(UNUSABLE)


@dataclass
class Halt:
    """Why a judge stopped taking calls: the kind, one line to print, and whether the
    probe found it (the judge never worked) or the breaker (it went down mid-run)."""

    kind: str
    line: str
    preflight: bool


class JudgeHealth:
    """The probe gate and the breaker for one model of one judge during one batch.

    Thread-safe, and tied to no one event loop (one judge may serve cases from several):
    calls waiting for the probe wait on an event of their own loop, set from whichever
    thread the probe ends on.
    """

    def __init__(self, target: str, *, trip_after: int = TRIP_AFTER) -> None:
        #: "model at endpoint", as the halt line names it
        self.target = target
        self.trip_after = max(1, trip_after)
        self.halt: Halt | None = None
        self._waiting: dict[asyncio.AbstractEventLoop, asyncio.Event] = {}
        self._state = "unproven"  # unproven -> probing -> open
        self._kind: str | None = None
        self._streak = 0
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise `JudgeError(not_run)` once the judge has halted."""
        halt = self.halt
        if halt is not None:
            raise JudgeError(NOT_RUN, halt.line)

    async def admit(self) -> bool:
        """Wait until an uncached call may be sent; True when it is the probe (the caller
        must then report its outcome, or `release` it when it is cancelled)."""
        while True:
            with self._lock:
                self.check()
                if self._state == "open":
                    return False
                if self._state == "unproven":
                    self._state = "probing"
                    return True
                loop = asyncio.get_running_loop()
                event = self._waiting.get(loop)
                if event is None:
                    event = self._waiting[loop] = asyncio.Event()
            await event.wait()

    def _wake(self) -> None:
        """Let every waiting call look again (the probe ended); called under the lock."""
        waiting, self._waiting = self._waiting, {}
        for loop, event in waiting.items():
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits
                loop.call_soon_threadsafe(event.set)

    def release(self) -> None:
        """A probe that ended without an outcome (cancelled): the next call probes."""
        with self._lock:
            if self._state == "probing":
                self._state = "unproven"
                self._wake()

    def succeeded(self) -> None:
        with self._lock:
            if self._state != "open":
                self._state = "open"
                self._wake()
            self._kind, self._streak = None, 0

    def failed(self, kind: str, message: str, *, probe: bool) -> Halt | None:
        """Count a call that failed for good; the Halt when this failure stops the judge."""
        with self._lock:
            if self.halt is not None:
                return self.halt
            if probe and kind in PREFLIGHT_FATAL:
                self.halt = Halt(kind, f"{UNUSABLE}: {self.target}: {message}", True)
                self._wake()
                return self.halt
            if self._state != "open":  # a transient-looking probe failure: let the batch go
                self._state = "open"
                self._wake()
            if kind == self._kind:
                self._streak += 1
            else:
                self._kind, self._streak = kind, 1
            if self._streak >= self.trip_after:
                self.halt = Halt(kind, f"{STOPPED}: {self._streak} judge calls in a row to "
                                 f"{self.target} failed ({kind}); last: {message}", False)
                self._wake()
            return self.halt


#: the `rpm` a run takes (`--rpm`, a suite rule's `rpm`): below one request in 10 minutes a
#: run seems to hang (1e-300 waited forever between calls); above a million a minute no
#: provider limits anything
RPM_MIN, RPM_MAX = 0.1, 1_000_000.0


class RateLimiter:
    """At most `rpm` requests a minute, spaced evenly (60/rpm seconds apart), shared by
    every lane and event loop of a process (a lock, not a loop-bound primitive).

    `clock`: the time slots are planned in and `binding` is judged by; `time.monotonic`,
    the clock asyncio sleeps by (a test sets its own to ask `binding` at a chosen moment)."""

    def __init__(self, rpm: float, clock: Callable[[], float] = time.monotonic) -> None:
        if rpm <= 0:
            raise ValueError("rpm must be > 0")
        self.rpm = rpm
        self.interval = 60.0 / rpm
        self.clock = clock
        self.waited = 0  # requests that had to wait for their slot
        self._next = 0.0
        self._last_wait = float("-inf")  # the slot of the last request held back
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take the next slot (slots are handed out in arrival order): the `clock` time
        this request may go out, `interval` after the slot before it or now if later."""
        with self._lock:
            now = self.clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
            if slot > now:
                self.waited += 1
                # held back until `slot`: `binding` counts from when it goes out, not from
                # now, so a burst held back for longer than the window still says so
                self._last_wait = slot
        return slot

    async def acquire(self) -> None:
        """Wait for this request's slot."""
        delay = self.reserve() - self.clock()
        if delay > 0:
            await asyncio.sleep(delay)

    @property
    def binding(self) -> bool:
        """True while requests are being held back (one waited within the last few slots)."""
        return self.clock() - self._last_wait < max(2.0, 3 * self.interval)

"""Retries and backoff for one judge call, through tenacity.

`call_again` takes over a call whose first attempt failed with a kind a retry may fix
(`dagtui.judges.errors.RETRYABLE`) and makes the rest of its attempts under tenacity's
`AsyncRetrying`: at most `retries` more, each after an exponential step with jitter, never
sooner than the provider's `Retry-After`; `reraise`, so the caller sees the last attempt's
own exception and classifies it like any other.

Kept by hand, and why:

- the first attempt. It is made by the judge directly (`LiteLLMJudge._send`), and tenacity
  is imported only when it fails: a healthy run never needs it, and importing tenacity
  costs tens of milliseconds, or a few hundred where tornado is installed (Dask's extra
  brings it; tenacity then imports it too). tenacity still sees every attempt: its first
  attempt re-raises the failure already in hand, so the counting and the waits are its.
- the wait (`Backoff`): tenacity's `wait_exponential` gives the step, but its jitter waits
  are full jitter (anywhere from 0 to the step: a retry at once) or additive, where the
  judge has always waited 0.5-1.5x the step; and no tenacity wait reads `Retry-After`
  (seconds or an HTTP date, `dagtui.judges.errors.retry_after`), which is obeyed up to
  max(`max_backoff`, 60 s).
- the breaker: tenacity retries one call; halting a whole batch after `TRIP_AFTER` calls
  in a row failed alike, and gating the first uncached call as a probe, are across calls
  (`dagtui.judges.health`). The retry loop only asks it: `check` runs before each sleep and
  again before the next attempt, so a judge halted meanwhile stops retrying.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from dagtui.judges.errors import retry_after

if TYPE_CHECKING:
    from tenacity import RetryCallState

T = TypeVar("T")

#: the longest a `Retry-After` header is obeyed for (or `max_backoff`, when that is longer)
RETRY_AFTER_CAP = 60.0


class Backoff:
    """The wait before a retry: `backoff * 2**n` capped at `max_backoff` (tenacity's
    `wait_exponential`), times 0.5-1.5 at random, and never shorter than the provider's
    `Retry-After` (obeyed up to max(`max_backoff`, `RETRY_AFTER_CAP`))."""

    def __init__(self, backoff: float, max_backoff: float) -> None:
        from tenacity import wait_exponential

        self.step = wait_exponential(multiplier=backoff, max=max_backoff)
        self.cap = max(max_backoff, RETRY_AFTER_CAP)

    def __call__(self, state: RetryCallState) -> float:
        delay = self.step(state) * (0.5 + random.random())
        failed = state.outcome.exception() if state.outcome is not None else None
        asked = retry_after(failed) if failed is not None else None
        if asked is not None:
            delay = max(delay, min(asked, self.cap))
        return delay


async def call_again(call: Callable[[], Awaitable[T]], failed: BaseException, *,
                     retries: int, backoff: float, max_backoff: float,
                     retryable: Callable[[BaseException], bool],
                     on_retry: Callable[[BaseException], None],
                     check: Callable[[], None]) -> T:
    """`call()`'s result after its first attempt raised `failed` (retryable): up to
    `retries` more attempts. `on_retry(exc)` hears of each failure that is retried;
    `check()` may raise to stop (the judge halted). Raises the last failure."""
    from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

    pending = [failed]

    async def attempt() -> T:
        if pending:  # the first attempt, made already: its failure, for tenacity to count
            raise pending.pop()
        return await call()

    def before_sleep(state: RetryCallState) -> None:
        check()
        if state.outcome is not None and (exc := state.outcome.exception()) is not None:
            on_retry(exc)

    def before(state: RetryCallState) -> None:
        if state.attempt_number > 1:
            check()

    retrying = AsyncRetrying(
        stop=stop_after_attempt(retries + 1), wait=Backoff(backoff, max_backoff),
        retry=retry_if_exception(lambda exc: isinstance(exc, Exception) and retryable(exc)),
        before=before, before_sleep=before_sleep, reraise=True)
    return await retrying(attempt)

"""The model judge: any litellm model string, with the care a CI run needs.

- litellm is imported only on the first real call (it takes seconds and ~200 MB), with its
  bundled cost map (no network at import) and its logging kept off the terminal.
- temperature 0, a timeout per call, bounded retries with exponential backoff and jitter on
  429 / 5xx / timeouts / connection errors / unreadable bodies (a 429's `Retry-After` is
  honoured; tenacity, `dagtui.judges.retries`), none on 400 / 401 / 403 / 404, which no
  retry fixes; the kind of a failure is read from the exception classes of litellm, the
  openai SDK and httpx, or from the HTTP status on the OpenAI-compatible route
  (`dagtui.judges.errors`); a concurrency limit, an optional requests-per-minute limit,
  and identical requests in flight sent once.
- during a batch (`guarded`), the first uncached call probes the judge alone and a judge
  that cannot work, or that goes down mid-run, halts (`dagtui.judges.health`).
- error text and answers never carry an API key (`dagtui.redact`), nor does the endpoint as
  reports and traces show it; answers are bounded on the wire and as text, and one past a
  cap fails its step as `too_large`, not retried (`dagtui.judges.bounds`, `.transport`).
- structured output (json_schema) when litellm says the model supports it, otherwise JSON is
  asked for in the prompt and parsed tolerantly; one corrective turn for an unusable answer.
- the content-addressed cache (model, endpoint, request, sample) is looked up first and a
  hit is recorded as such; only answers that parsed are stored (a corrected one with its
  correction), so an error or an unusable answer is asked again on the next run.
- geval scores are weighted by the token probabilities of the score when the provider
  returns them (method `logprobs`), else the sampled score is used (method `sampled`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
from collections.abc import Iterator, Sequence
from typing import Any

from dagtui.judges.base import Ask, CallRecord, ErrorKind, Judge, JudgeError, Reply
from dagtui.judges.bounds import TOO_LARGE, AnswerTooLarge, parse_bounded, received
from dagtui.judges.cache import Cache, JudgeCache, NullCache, request_key
from dagtui.judges.capabilities import support
from dagtui.judges.deepeval_metric import run_metric
from dagtui.judges.default_model import model_for
from dagtui.judges.errors import RETRYABLE, CallError, classify, describe, kind_text
from dagtui.judges.health import NOT_RUN, PREFLIGHT_FATAL, TRIP_AFTER, JudgeHealth, RateLimiter
from dagtui.judges.lanes import DEFAULT_LANES, shared_lanes
from dagtui.judges.litellm_lib import import_litellm, internal_call_flag
from dagtui.judges.pricemap import plain_openai_name
from dagtui.judges.prompts import GEVAL_STEPS, AnswerError, Parsed, Prompt, corrective_message
from dagtui.kinds import kind_of
from dagtui.redact import redact, redact_url, remember_secret

#: `--via`: how requests reach the model (see `LiteLLMJudge.via`)
VIAS = ("auto", "litellm")

async def _acompletion_quietly(litellm: Any, kwargs: dict[str, Any]) -> Any:
    """`litellm.acompletion(**kwargs)` without litellm's logging. Runs as its own task (on a
    lane, or under `wait_for`), so the marker never leaks into the caller's context."""
    flag = internal_call_flag()
    if flag is not None:
        flag.set(True)
    return await litellm.acompletion(**kwargs)


class LiteLLMJudge(Judge):
    """A judge that calls a model through litellm.

    `model`: litellm model string (`openai/gpt-4.1-mini`, `ollama/llama3`, ...);
    `api_base`/`api_key` for local or proxy endpoints (keys otherwise from the environment,
    never stored); `retries`: extra attempts after the first on transient errors;
    `concurrency`: calls in flight at once; `cache`: a `Cache` (None: no caching);
    `lanes`: event-loop threads the litellm calls run on (`dagtui.judges.lanes`; 0: the
    caller's loop); `rpm`: at most that many requests a minute (`limiters`: more, shared
    with other judges, e.g. one for a whole suite run); `trip_after`: calls in a row failing
    alike that halt a guarded batch.
    """

    name = "litellm"
    llm = True
    needs_params = True

    def __init__(
        self,
        model: str | None = None,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        concurrency: int = 8,
        cache: JudgeCache | None = None,
        structured: bool | None = None,
        logprobs: bool | None = None,
        extra: dict[str, Any] | None = None,
        lanes: int = DEFAULT_LANES,
        rpm: float | None = None,
        limiters: Sequence[RateLimiter] = (),
        trip_after: int = TRIP_AFTER,
        via: str = "auto",
    ) -> None:
        remember_secret(api_key)
        redact_url(api_base)  # its credentials, if any, count as secrets from now on
        self.model = model_for(None, model)
        self.api_base = api_base
        self._api_key = api_key
        self.temperature = temperature
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.concurrency = max(1, concurrency)
        self.cache: JudgeCache = cache if cache is not None else NullCache()
        self.structured = structured
        self.logprobs = logprobs
        self.extra = dict(extra or {})
        #: event loops (threads) the calls run on; 0 runs them on the caller's loop
        self.lanes = max(0, lanes)
        self._sems: dict[int, asyncio.Semaphore] = {}
        self._support: dict[str, tuple[bool, bool]] = {}
        #: provider calls actually sent (cache hits excluded), for summaries and tests
        self.calls_sent = 0
        #: every rate limit this judge's requests obey (its own `rpm` first)
        self.limiters = ([RateLimiter(rpm)] if rpm else []) + list(limiters)
        self.trip_after = trip_after
        self._inflight: dict[tuple[int, str], asyncio.Future[Any]] = {}
        self._guards = 0
        self._health: dict[str, JudgeHealth] = {}
        #: litellm imported and warmed up (`_ready`), and the seconds that took
        self._warm = False
        if via not in VIAS:
            raise ValueError(f"via must be one of {', '.join(VIAS)}, not {via!r}")
        #: "auto": OpenAI-compatible models over httpx (`dagtui.judges.openai_route`), the
        #: rest through litellm; "litellm": every model through litellm
        self.via = via
        self._openai: Any = None
        self._setup_locks: dict[int, asyncio.Lock] = {}
        self.setup_seconds = 0.0

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name, "model": self.model, "api_base": redact_url(self.api_base),
            "temperature": self.temperature, "timeout": self.timeout, "retries": self.retries,
        }

    def worker_config(self, concurrency: int | None = None) -> dict[str, Any]:
        """What a worker process needs to build the same judge (see `dagtui.run.cluster`).

        Plain data, so it pickles; the cache travels as its directory and mode (each process
        opens its own sqlite connection to the shared file: refreshing, or only reading when
        this process found it unwritable, so the worker does not say so again), and
        `concurrency` is this worker's share of the calls in flight. The strictest rate limit
        goes as a number, cut to the same share, so the workers together keep to it.
        """
        share = 1.0 if concurrency is None else min(1.0, concurrency / self.concurrency)
        rpm = min((lim.rpm for lim in self.limiters), default=None)
        return {
            "model": self.model, "api_base": self.api_base, "api_key": self._api_key,
            "temperature": self.temperature, "timeout": self.timeout, "retries": self.retries,
            "backoff": self.backoff, "max_backoff": self.max_backoff,
            "concurrency": self.concurrency if concurrency is None else concurrency,
            "structured": self.structured, "logprobs": self.logprobs,
            "extra": dict(self.extra), "cache": self.cache.share(), "lanes": self.lanes,
            "rpm": None if rpm is None else rpm * share, "trip_after": self.trip_after,
            "via": self.via,
        }

    @classmethod
    def from_worker_config(cls, config: dict[str, Any]) -> LiteLLMJudge:
        """The judge `worker_config` describes (opens the shared cache, if any)."""
        options = dict(config)
        shared = options.pop("cache", None)
        return cls(**options, cache=Cache(**shared) if shared else None)

    async def warm_up(self) -> None:
        """Pay litellm's first-call costs now: its import, its model lookups, and one mock
        completion (no network) through its request path, whose lazy imports and setup
        otherwise land on the first real calls. Worker processes and benchmarks do this
        before their clock starts; a run does it on its first call the cache cannot answer
        (`_ready`), so a rerun from the cache never does. A model on the OpenAI-compatible
        route needs none of it: its client is made instead."""
        if self._takes_openai_route(self.model):
            self._openai_route()
            return
        litellm = import_litellm()
        self.supports(self.model)
        # a warm-up that fails costs only the time it was meant to save
        with contextlib.suppress(Exception):
            await _acompletion_quietly(litellm, {
                "model": self.model, "mock_response": "{}",
                "messages": [{"role": "user", "content": "warm up"}]})
        self._warm = True

    def _takes_openai_route(self, model: str) -> bool:
        return self.via == "auto" and plain_openai_name(model) is not None

    def _openai_route(self) -> Any:
        """The httpx client route (made once: importing httpx takes ~0.1 s, counted as
        setup like litellm's import)."""
        if self._openai is None:
            started = time.perf_counter()
            from dagtui.judges.openai_route import OpenAIRoute

            self._openai = OpenAIRoute(self.timeout)
            self.setup_seconds += time.perf_counter() - started
        return self._openai

    async def _route(self, model: str) -> Any:
        """What carries a request for `model`: the OpenAI-compatible route, or litellm
        (imported and warmed on first use)."""
        if self._takes_openai_route(model):
            return self._openai_route()
        return _LiteLLMRoute(await self._ready())

    async def aclose(self) -> None:
        if self._openai is not None:
            await self._openai.aclose()

    async def _ready(self) -> Any:
        """litellm, imported and warm: on the first request actually sent (never for one
        the cache answers). The import runs in a thread, so the caller's loop (a batch's
        cache hits, the debugger's screen) goes on meanwhile; `setup_note` hears of it
        first, and `setup_seconds` counts it, which a batch leaves out of its wall time
        (`dagtui.run.batch.evaluate_cases`), as it did when the import came before the clock."""
        if not self._warm:
            loop = asyncio.get_running_loop()
            lock = self._setup_locks.setdefault(id(loop), asyncio.Lock())
            async with lock:
                if not self._warm:
                    started = time.perf_counter()
                    if self.setup_note is not None:
                        self.setup_note("loading litellm (first model call only)")
                    await asyncio.to_thread(import_litellm)
                    await self.warm_up()
                    self.setup_seconds += time.perf_counter() - started
        return import_litellm()

    # ---------------------------------------------------------------- capabilities

    def supports(self, model: str) -> tuple[bool, bool]:
        """(structured output, logprobs) for `model`, as litellm reports them (remembered in
        the cache, or read from litellm's map, so a rerun from the cache never imports
        litellm: `dagtui.judges.capabilities`); `structured`/`logprobs` override."""
        if model not in self._support:
            schema, lp = support(model, self.cache)
            if self.structured is not None:
                schema = self.structured
            if self.logprobs is not None:
                lp = self.logprobs
            self._support[model] = (schema, lp)
        return self._support[model]

    def _lanes(self) -> int:
        """Lanes to use: as asked, but one at most when litellm's logging cannot be kept
        off the calls (its logging worker binds to one event loop at a time)."""
        return self.lanes if internal_call_flag() is not None else min(self.lanes, 1)

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._sems.get(id(loop))
        if sem is None:
            self._sems = {id(loop): asyncio.Semaphore(self.concurrency)}
            sem = self._sems[id(loop)]
        return sem

    # ---------------------------------------------------------------- one request

    def build_request(self, model: str, prompt: Prompt, messages: list[dict[str, str]],
                      want_logprobs: bool) -> dict[str, Any]:
        structured, lp = self.supports(model)
        request: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if structured:
            request["response_format"] = prompt.response_format()
        if want_logprobs and lp:
            request["logprobs"] = True
            request["top_logprobs"] = 5
        request.update(self.extra)
        return request

    async def complete(self, request: dict[str, Any], sample: int = 0,
                       purpose: str = "answer") -> tuple[CallRecord, list[Any] | None]:
        """Send one request to the model, retrying transient failures.

        Returns the call record and the token logprobs (or None). Raises JudgeError with the
        record attached once the retries are spent. The cache is `answer`'s business: it
        looks there first and stores only answers that parsed (`_replay`, `_store`). With a
        cache, a request identical to one in flight is not sent again: it shares that one's
        answer (recorded as a cache hit) or its error.
        """
        if isinstance(self.cache, NullCache):  # no cache: every request is sent, as asked
            return await self._send(request, purpose)
        loop = asyncio.get_running_loop()
        slot = (id(loop), self._cache_key(request, sample))  # the same identity as the cache
        while (leader := self._inflight.get(slot)) is not None:
            # the same request is on its way: share its answer rather than send it twice
            start = time.perf_counter()
            try:
                outcome = await asyncio.shield(leader)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if leader.cancelled() and not (task is not None and task.cancelling()):
                    continue  # the leader was cancelled, not us: send it ourselves
                raise
            if isinstance(outcome, JudgeError):
                raise JudgeError(outcome.kind, str(outcome), raw=outcome.raw)
            rec, logprobs = outcome
            return CallRecord(request, rec.raw, rec.prompt_tokens, rec.completion_tokens,
                              rec.cost, time.perf_counter() - start, cache_hit=True,
                              purpose=purpose), logprobs
        mine: asyncio.Future[Any] = loop.create_future()
        self._inflight[slot] = mine
        try:
            result = await self._send(request, purpose)
            mine.set_result(result)
            return result
        except JudgeError as err:
            mine.set_result(err)
            raise
        finally:
            if self._inflight.get(slot) is mine:
                del self._inflight[slot]
            if not mine.done():
                mine.cancel()

    def _call_kwargs(self, request: dict[str, Any]) -> dict[str, Any]:
        """litellm's arguments for `request`: endpoint, key, timeout, no retries of its own."""
        kwargs = dict(request)
        kwargs.update(timeout=self.timeout, num_retries=0, max_retries=0)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        api_key = self._api_key or os.environ.get("DAGTUI_API_KEY")
        if api_key is None and self.api_base and request["model"].startswith("openai/") \
                and not os.environ.get("OPENAI_API_KEY"):
            api_key = "no-key"  # local OpenAI-compatible servers rarely want one
        if api_key:
            kwargs["api_key"] = api_key
        return kwargs

    async def _send(self, request: dict[str, Any],
                    purpose: str) -> tuple[CallRecord, list[Any] | None]:
        """One request to the provider with its retries, under the batch's guards."""
        route = await self._route(request["model"])
        start = time.perf_counter()
        health = self._health_for(request["model"])
        probe = await health.admit() if health is not None else False
        retry_kinds: list[str] = []
        kwargs = self._call_kwargs(request)

        def retryable(exc: BaseException) -> bool:
            kind = classify(exc)
            return kind in RETRYABLE and not (probe and kind in PREFLIGHT_FATAL)

        def check() -> None:
            if health is not None:
                health.check()  # halted meanwhile: stop retrying

        try:
            try:
                raw, logprobs, latency, response = await self._attempt(route, kwargs)
            except asyncio.CancelledError:
                raise
            except Exception as first:
                if self.retries < 1 or not retryable(first):
                    raise
                from dagtui.judges.retries import call_again

                raw, logprobs, latency, response = await call_again(
                    lambda: self._attempt(route, kwargs), first, retries=self.retries,
                    backoff=self.backoff, max_backoff=self.max_backoff, retryable=retryable,
                    on_retry=lambda exc: retry_kinds.append(classify(exc).value),
                    check=check)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - classified here
            if isinstance(exc, JudgeError) and exc.kind == NOT_RUN:
                raise  # the batch halted while this call waited to retry
            kind = classify(exc).value
            attempt = len(retry_kinds)
            error = redact(describe(exc, kind)) or ""
            rec = CallRecord(request, None, latency=time.perf_counter() - start,
                             retries=attempt, retry_kinds=retry_kinds, error=error,
                             error_kind=kind, purpose=purpose)
            text = error if kind == TOO_LARGE else \
                f"{kind_text(kind)} after {attempt + 1} attempt(s): {error}"
            halt = health.failed(kind, text, probe=probe) if health is not None else None
            if halt is not None and halt.preflight:
                raise JudgeError(NOT_RUN, halt.line, calls=[rec]) from None
            raise JudgeError(kind, text, calls=[rec]) from None
        finally:
            if probe and health is not None:
                health.release()  # only matters when cancelled before an outcome
        if health is not None:
            health.succeeded()
        usage = getattr(response, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0)
        ct = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = route.cost(response)
        rec = CallRecord(request, raw, pt, ct, cost, latency, cache_hit=False,
                         retries=len(retry_kinds), retry_kinds=retry_kinds, purpose=purpose)
        return rec, logprobs

    async def _attempt(self, route: Any,
                       kwargs: dict[str, Any]) -> tuple[str, list[Any] | None, float, Any]:
        """One attempt: (answer text, token logprobs, latency, response), or the route's
        exception; a slot of the concurrency limit and of every rate limit is held for it."""
        async with self._semaphore():
            for limiter in self.limiters:
                await limiter.acquire()
            t0 = time.perf_counter()
            self.calls_sent += 1
            call = route.complete(kwargs)
            lanes = self._lanes() if route.lanes else 0
            if lanes:
                call = shared_lanes(lanes).run(call)
            response = await asyncio.wait_for(call, timeout=self.timeout + 5)
            latency = time.perf_counter() - t0
        raw, logprobs = _content(response)
        raw = received(raw)  # bounded, and no key in it from here on
        if raw is None:
            raise CallError(ErrorKind.MALFORMED, "the response has no message content")
        return raw, logprobs, latency, response

    # ---------------------------------------------------------------- batch guards

    @contextlib.contextmanager
    def guarded(self) -> Iterator[None]:
        """While a batch runs: probe first, halt on a dead judge (`dagtui.judges.health`).
        Nested guards share one state; it starts afresh with the outermost."""
        if self._guards == 0:
            self._health = {}
        self._guards += 1
        try:
            yield
        finally:
            self._guards -= 1

    def _health_for(self, model: str) -> JudgeHealth | None:
        """The guard state for `model`, or None outside a batch."""
        if self._guards <= 0:
            return None
        health = self._health.get(model)
        if health is None:
            health = self._health[model] = JudgeHealth(
                f"{model} at {self.endpoint(model)}", trip_after=self.trip_after)
        return health

    @property
    def halt(self) -> Any:
        """The first halt of the current (or last) batch, or None."""
        return next((h.halt for h in self._health.values() if h.halt is not None), None)

    def endpoint(self, model: str | None = None) -> str:
        """Where calls go, for messages: `api_base` (its credentials masked), else
        the provider's default as litellm resolves it (its URL when litellm names one)."""
        base = self.api_base
        provider = None
        if not base and plain_openai_name(model or self.model) is not None:
            provider = "openai"  # litellm names no URL for OpenAI's own: said the same way
        elif not base:
            try:
                _, provider, _, base = import_litellm().get_llm_provider(model or self.model)
            except Exception:  # noqa: BLE001 - an unknown provider: said by the error itself
                provider = None
        if base:
            return redact_url(str(base)) or ""
        return f"{provider}'s default endpoint" if provider else "the provider's default endpoint"

    def rate_note(self) -> str:
        """"rpm N" while a requests-per-minute limit holds requests back, else ""."""
        binding = [lim for lim in self.limiters if lim.binding]
        return f"rpm {min(lim.rpm for lim in binding):g}" if binding else ""

    # ---------------------------------------------------------------- one node

    async def answer(self, ask: Ask) -> Reply:
        model = ask.model or self.model
        prompt = ask.prompt
        if kind_of(ask.node).measured:  # a DeepEval metric leaf: DeepEval asks, with this model
            # the metric makes several calls of its own (and retries them): five of this
            # judge's timeouts bound the whole measurement
            return await run_metric(ask, model, api_base=self.api_base,
                                 api_key=self._api_key or os.environ.get("DAGTUI_API_KEY"),
                                 temperature=self.temperature, timeout=self.timeout * 5)
        want_lp = prompt.answer.weighted  # a G-Eval score: weighted by its log-probabilities
        request = self.build_request(model, prompt, list(prompt.messages), want_lp)
        replay = self._replay(model, prompt, request, ask.sample)
        if replay is None:
            replay = await self._ask(model, prompt, request, ask.sample)
        return _reply(replay, want_lp)

    def from_cache(self, ask: Ask) -> Reply | None:
        """The answer to `ask` from the cache alone, or None when it would take a call: a
        call budget (`dagtui align --budget`) lets cached answers through for free."""
        if kind_of(ask.node).measured:
            return None
        return self.cached_reply(ask.prompt, ask.model, ask.sample)

    def cached_reply(self, prompt: Prompt, model: str | None = None,
                     sample: int = 0) -> Reply | None:
        """The answer the cache holds for `prompt` asked of `model` (default: this judge's),
        or None when it would take a call: the request a call would send is built and only
        looked up, so the answer is the one given to exactly this prompt (the labelling
        screen reveals it, `dagtui.labels.session.cached_judge`)."""
        name = model or self.model
        want_lp = prompt.answer.weighted
        request = self.build_request(name, prompt, list(prompt.messages), want_lp)
        replay = self._replay(name, prompt, request, sample)
        return None if replay is None else _reply(replay, want_lp)

    async def _ask(self, model: str, prompt: Prompt, request: dict[str, Any],
                   sample: int) -> tuple[list[CallRecord], Parsed, list[Any] | None]:
        """Ask the model: one corrective turn for an unusable answer, then a step error
        showing the raw answers. What parsed is stored; nothing else is (nor an answer past
        a cap: its step fails with the calls that brought it)."""
        calls: list[CallRecord] = []
        try:
            return await self._ask_into(calls, model, prompt, request, sample)
        except AnswerTooLarge as err:
            calls[-1].error, calls[-1].error_kind = str(err), err.kind
            err.calls = calls
            raise

    async def _ask_into(self, calls: list[CallRecord], model: str, prompt: Prompt,
                        request: dict[str, Any],
                        sample: int) -> tuple[list[CallRecord], Parsed, list[Any] | None]:
        """`_ask`, each call appended to `calls` as it is made."""
        rec, logprobs = await self.complete(request, sample, _purpose(prompt))
        calls.append(rec)
        try:
            parsed = parse_bounded(prompt, rec.raw or "")
        except AnswerError as first:
            request2 = self._correction_request(model, prompt, request, rec, first)
            try:
                rec2, logprobs2 = await self.complete(request2, sample, "correction")
            except JudgeError as err:
                err.calls = calls + err.calls
                raise
            calls.append(rec2)
            try:
                parsed = parse_bounded(prompt, rec2.raw or "")
            except AnswerError as second:
                raw = f"first answer:\n{rec.raw}\n\nafter correction:\n{rec2.raw}"
                rec2.error, rec2.error_kind = str(second), second.kind
                raise JudgeError(second.kind, f"unusable answer after one correction: {second}",
                                 raw=raw, calls=calls) from None
            # both turns, the correction first: a first turn is replayed only with its
            # correction (`_replay`), so a write lost in between costs a call, not an error
            self._store(rec2, sample, logprobs2)
            self._store(rec, sample, logprobs)
            return calls, parsed, logprobs2
        self._store(rec, sample, logprobs)
        return calls, parsed, logprobs

    def _correction_request(self, model: str, prompt: Prompt, request: dict[str, Any],
                            rec: CallRecord, error: AnswerError) -> dict[str, Any]:
        """The corrective turn after the unusable answer `rec` to `request`."""
        messages = list(request["messages"]) + [
            {"role": "assistant", "content": rec.raw or ""},
            corrective_message(prompt, str(error)),
        ]
        return self.build_request(model, prompt, messages, prompt.answer.weighted)

    # ---------------------------------------------------------------- the cache

    def _cache_key(self, request: dict[str, Any], sample: int) -> str:
        return request_key(request["model"], request, sample, api_base=self.api_base)

    def _cached(self, request: dict[str, Any], sample: int,
                purpose: str) -> tuple[CallRecord, list[Any] | None] | None:
        """The stored answer to `request` as a call that cost nothing, or None."""
        if isinstance(self.cache, NullCache):  # no cache: no key to hash
            return None
        start = time.perf_counter()
        hit = self.cache.get(self._cache_key(request, sample))
        if hit is None:
            return None
        try:
            raw = received(hit.get("raw"))
        except AnswerTooLarge:  # stored before the caps: asked afresh
            return None
        rec = CallRecord(request, raw, hit.get("prompt_tokens", 0),
                         hit.get("completion_tokens", 0), hit.get("cost"),
                         time.perf_counter() - start, cache_hit=True, purpose=purpose)
        return rec, hit.get("logprobs")

    def _replay(self, model: str, prompt: Prompt, request: dict[str, Any],
                sample: int) -> tuple[list[CallRecord], Parsed, list[Any] | None] | None:
        """A usable answer from the cache, with no call: the stored answer when it parses,
        else (a first turn that needed correcting) it and its stored correction when that
        parses. Anything less is None, and the node is asked afresh: an entry that no longer
        parses (e.g. a stricter parser, or a correction pruned away) is never a hit that
        fails."""
        first = self._cached(request, sample, _purpose(prompt))
        if first is None:
            return None
        rec, logprobs = first
        try:
            return [rec], parse_bounded(prompt, rec.raw or ""), logprobs
        except AnswerTooLarge:
            return None
        except AnswerError as error:
            request2 = self._correction_request(model, prompt, request, rec, error)
        second = self._cached(request2, sample, "correction")
        if second is None:
            return None
        rec2, logprobs2 = second
        try:
            return [rec, rec2], parse_bounded(prompt, rec2.raw or ""), logprobs2
        except (AnswerError, AnswerTooLarge):
            return None

    def _store(self, rec: CallRecord, sample: int, logprobs: list[Any] | None) -> None:
        """Keep an answer that was used (never a hit again: it is stored already)."""
        if rec.cache_hit or rec.raw is None or isinstance(self.cache, NullCache):
            return
        self.cache.put(self._cache_key(rec.request, sample), rec.request["model"], {
            "raw": rec.raw, "prompt_tokens": rec.prompt_tokens,
            "completion_tokens": rec.completion_tokens, "cost": rec.cost,
            "logprobs": logprobs,
        }, api_base=self.api_base)

class _LiteLLMRoute:
    """litellm as a route (`OpenAIRoute`'s counterpart): its calls may run on lanes, which
    spread its per-call CPU over event loops in threads."""

    name = "litellm"
    lanes = True

    def __init__(self, litellm: Any) -> None:
        self.litellm = litellm

    async def complete(self, kwargs: dict[str, Any]) -> Any:
        _known_provider(self.litellm, kwargs["model"], kwargs.get("api_base"))
        return await _acompletion_quietly(self.litellm, kwargs)

    def cost(self, response: Any) -> float | None:
        return _cost(self.litellm, response)


#: (model, api_base) pairs litellm has named a provider for
_providers_known: set[tuple[str, str | None]] = set()


def _known_provider(litellm: Any, model: str, api_base: str | None) -> None:
    """Raise `CallError(not_found)` when litellm names no provider for `model`: it raises
    its plain `BadRequestError` then (the class of any 400), which would read as a refused
    request rather than a model nobody serves. Asked once per model and endpoint."""
    if (model, api_base) in _providers_known:
        return
    try:
        litellm.get_llm_provider(model, api_base=api_base)
    except litellm.BadRequestError as exc:
        raise CallError(ErrorKind.NOT_FOUND, str(exc)) from exc
    except Exception:  # noqa: BLE001, S110 - anything else: the call itself says so
        return
    _providers_known.add((model, api_base))


def _purpose(prompt: Prompt) -> str:
    """What a node's first call is for, as its call record says."""
    return "geval_steps" if prompt.kind == GEVAL_STEPS else "answer"


def _cost(litellm: Any, response: Any) -> float | None:
    """The call's cost in USD when litellm knows the model's price (None otherwise).

    litellm already prices every response while logging it (`_hidden_params`); pricing it
    a second time would double the per-call CPU cost, so that figure is used when present.
    """
    hidden = getattr(response, "_hidden_params", None) or {}
    value = hidden.get("response_cost") if isinstance(hidden, dict) else None
    if value is None:
        try:
            value = litellm.completion_cost(completion_response=response)
        except Exception:
            return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _content(response: Any) -> tuple[str | None, list[Any] | None]:
    """Message text and a compact list of token logprobs [(token, [(alt, logprob), ...])]."""
    try:
        choice = response.choices[0]
        raw = choice.message.content
    except (AttributeError, IndexError, TypeError):
        return None, None
    lp = getattr(choice, "logprobs", None)
    tokens: list[Any] | None = None
    content = None
    if lp is not None:
        content = lp.get("content") if isinstance(lp, dict) else getattr(lp, "content", None)
    if content:
        tokens = []
        for item in content:
            get = item.get if isinstance(item, dict) else (lambda k, _i=item: getattr(_i, k, None))
            tops = get("top_logprobs") or []
            alts = []
            for t in tops:
                tget = t.get if isinstance(t, dict) else (lambda k, _t=t: getattr(_t, k, None))
                alts.append([tget("token"), tget("logprob")])
            tokens.append([get("token"), alts])
    return raw, tokens


def _reply(replay: tuple[list[CallRecord], Parsed, list[Any] | None],
           want_lp: bool) -> Reply:
    """The Reply of an answer asked or replayed (a G-Eval score weighted by its
    log-probabilities when `want_lp`)."""
    calls, parsed, logprobs = replay
    reply = Reply(parsed.value, parsed.reason, raw=calls[-1].raw, calls=calls)
    if want_lp:
        _weight_geval(reply, parsed, logprobs)
    return reply


def _weight_geval(reply: Reply, parsed: Parsed, logprobs: list[Any] | None) -> None:
    """Replace the sampled 0..10 score by its probability-weighted mean when possible."""
    reply.sampled = parsed.value
    reply.method = "sampled"
    if not logprobs:
        return
    text = ""
    for token, alts in logprobs:
        before = text
        text += token or ""
        if '"score"' not in before:
            continue
        if not (token or "").strip().isdigit():
            continue
        weights: dict[int, float] = {}
        for alt, logprob in alts or []:
            alt = (alt or "").strip()
            if alt.isdigit() and 0 <= int(alt) <= 10 and logprob is not None:
                weights[int(alt)] = weights.get(int(alt), 0.0) + math.exp(float(logprob))
        total = sum(weights.values())
        if total > 0:
            reply.value = sum(v * p for v, p in weights.items()) / total
            reply.method = "logprobs"
        return

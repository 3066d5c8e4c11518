"""The model judge: any litellm model string, with the care a CI run needs.

- litellm is imported only on the first real call (it takes seconds and ~200 MB), with its
  bundled cost map (no network at import) and its logging kept off the terminal.
- temperature 0, a timeout per call, bounded retries with exponential backoff and jitter on
  429 / 5xx / timeouts / connection errors / unreadable bodies, a concurrency limit.
- structured output (json_schema) when litellm says the model supports it, otherwise JSON is
  asked for in the prompt and parsed tolerantly; one corrective turn for an unusable answer.
- every request goes through the content-addressed cache; a hit is recorded as such.
- geval scores are weighted by the token probabilities of the score when the provider
  returns them (method `logprobs`), else the sampled score is used (method `sampled`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import os
import random
import time
from typing import Any

from ..cache import Cache, NullCache, request_key
from ..prompts import AnswerError, Parsed, Prompt, corrective_message, parse_answer
from .base import Ask, CallRecord, Judge, JudgeError, Reply
from .lanes import DEFAULT_LANES, shared_lanes

DEFAULT_MODEL = "gpt-4.1-mini"
RETRYABLE = ("429", "5xx", "timeout", "connection", "malformed")

_litellm: Any = None


def import_litellm() -> Any:
    """Import litellm once, quietly, with its bundled cost map."""
    global _litellm
    if _litellm is not None:
        return _litellm
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("LITELLM_LOG", "CRITICAL")
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL)
        logger.propagate = False
    import litellm

    litellm.suppress_debug_info = True
    litellm.drop_params = True
    litellm.telemetry = False
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL)
        logger.handlers[:] = [logging.NullHandler()]
        logger.propagate = False
    _litellm = litellm
    return litellm


@functools.cache
def _internal_call_flag() -> Any:
    """litellm's own marker for calls it makes internally (a ContextVar), or None when this
    litellm version has none. A call so marked skips litellm's success/failure logging and
    callback bookkeeping: work whose output dagtui keeps off the terminal anyway (~1 ms CPU
    per call), and whose logging worker binds to one event loop, which lanes would make it
    hop between. Looked up once (a failed import would search the path on every call)."""
    try:
        from litellm._internal_context import is_internal_call
    except ImportError:
        return None
    return is_internal_call


async def _acompletion_quietly(litellm: Any, kwargs: dict[str, Any]) -> Any:
    """`litellm.acompletion(**kwargs)` without litellm's logging. Runs as its own task (on a
    lane, or under `wait_for`), so the marker never leaks into the caller's context."""
    flag = _internal_call_flag()
    if flag is not None:
        flag.set(True)
    return await litellm.acompletion(**kwargs)


def classify(exc: BaseException) -> str:
    """Map a litellm/openai/httpx exception to one of the summary's error kinds."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    text = str(exc)
    if status in (401, 403) or "Authentication" in name or "Missing credentials" in text \
            or "api_key" in text and "environment variable" in text:
        return "request"
    if isinstance(exc, asyncio.TimeoutError | TimeoutError) or "Timeout" in name:
        return "timeout"
    if "JSONDecodeError" in text or "Expecting value" in text or "ResponseValidation" in name \
            or "Invalid response object" in text:
        return "malformed"
    if status == 429 or "RateLimit" in name:
        return "429"
    if isinstance(status, int) and status >= 500:
        return "5xx"
    if name in ("InternalServerError", "ServiceUnavailableError", "BadGatewayError"):
        return "5xx"
    if "Connection" in name:
        return "connection"
    if isinstance(status, int) and 400 <= status < 500:
        return "request"
    return "other"


class LiteLLMJudge(Judge):
    """A judge that calls a model through litellm.

    `model`: litellm model string (`openai/gpt-4.1-mini`, `ollama/llama3`, ...);
    `api_base`/`api_key` for local or proxy endpoints (keys otherwise from the environment,
    never stored); `retries`: extra attempts after the first on transient errors;
    `concurrency`: calls in flight at once; `cache`: a `Cache` (None: no caching);
    `lanes`: event-loop threads the litellm calls run on (`dagtui.judges.lanes`; 0: the
    caller's loop).
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
        cache: Cache | NullCache | None = None,
        structured: bool | None = None,
        logprobs: bool | None = None,
        extra: dict[str, Any] | None = None,
        lanes: int = DEFAULT_LANES,
    ) -> None:
        self.model = model or os.environ.get("DAGTUI_MODEL") or DEFAULT_MODEL
        self.api_base = api_base
        self._api_key = api_key
        self.temperature = temperature
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.concurrency = max(1, concurrency)
        self.cache = cache if cache is not None else NullCache()
        self.structured = structured
        self.logprobs = logprobs
        self.extra = dict(extra or {})
        #: event loops (threads) the calls run on; 0 runs them on the caller's loop
        self.lanes = max(0, lanes)
        self._sems: dict[int, asyncio.Semaphore] = {}
        self._support: dict[str, tuple[bool, bool]] = {}
        #: provider calls actually sent (cache hits excluded), for summaries and tests
        self.calls_sent = 0

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name, "model": self.model, "api_base": self.api_base,
            "temperature": self.temperature, "timeout": self.timeout, "retries": self.retries,
        }

    def worker_config(self, concurrency: int | None = None) -> dict[str, Any]:
        """What a worker process needs to build the same judge (see `dagtui.workers`).

        Plain data, so it pickles; the cache travels as its directory (each process opens
        its own sqlite connection to the shared file), and `concurrency` is this worker's
        share of the calls in flight.
        """
        cache_dir = str(self.cache.path.parent) if isinstance(self.cache, Cache) else None
        return {
            "model": self.model, "api_base": self.api_base, "api_key": self._api_key,
            "temperature": self.temperature, "timeout": self.timeout, "retries": self.retries,
            "backoff": self.backoff, "max_backoff": self.max_backoff,
            "concurrency": self.concurrency if concurrency is None else concurrency,
            "structured": self.structured, "logprobs": self.logprobs,
            "extra": dict(self.extra), "cache_dir": cache_dir, "lanes": self.lanes,
        }

    @classmethod
    def from_worker_config(cls, config: dict[str, Any]) -> LiteLLMJudge:
        """The judge `worker_config` describes (opens the shared cache, if any)."""
        options = dict(config)
        cache_dir = options.pop("cache_dir", None)
        return cls(**options, cache=Cache(cache_dir) if cache_dir else None)

    async def warm_up(self) -> None:
        """Pay litellm's first-call costs now: its model lookups, and one mock completion
        (no network) through its request path, whose lazy imports and setup otherwise
        land on the first real calls. Worker processes do this before the clock starts."""
        litellm = import_litellm()
        self.supports(self.model)
        # a warm-up that fails costs only the time it was meant to save
        with contextlib.suppress(Exception):
            await _acompletion_quietly(litellm, {
                "model": self.model, "mock_response": "{}",
                "messages": [{"role": "user", "content": "warm up"}]})

    # ---------------------------------------------------------------- capabilities

    def supports(self, model: str) -> tuple[bool, bool]:
        """(structured output, logprobs) for `model`, as litellm reports them."""
        if model not in self._support:
            litellm = import_litellm()
            try:
                schema = bool(litellm.supports_response_schema(model=model))
            except Exception:
                schema = False
            try:
                params = litellm.get_supported_openai_params(model=model) or []
                lp = "logprobs" in params
            except Exception:
                lp = False
            if self.structured is not None:
                schema = self.structured
            if self.logprobs is not None:
                lp = self.logprobs
            self._support[model] = (schema, lp)
        return self._support[model]

    def _lanes(self) -> int:
        """Lanes to use: as asked, but one at most when litellm's logging cannot be kept
        off the calls (its logging worker binds to one event loop at a time)."""
        return self.lanes if _internal_call_flag() is not None else min(self.lanes, 1)

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
        """Send one request (through the cache), retrying transient failures.

        Returns the call record and the token logprobs (or None). Raises JudgeError with the
        record attached once the retries are spent.
        """
        key = request_key(request["model"], request, sample)
        start = time.perf_counter()
        hit = self.cache.get(key)
        if hit is not None:
            rec = CallRecord(request, hit.get("raw"), hit.get("prompt_tokens", 0),
                             hit.get("completion_tokens", 0), hit.get("cost"),
                             time.perf_counter() - start, cache_hit=True, purpose=purpose)
            return rec, hit.get("logprobs")
        litellm = import_litellm()
        attempt = 0
        retry_kinds: list[str] = []
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
        while True:
            try:
                async with self._semaphore():
                    t0 = time.perf_counter()
                    self.calls_sent += 1
                    call = _acompletion_quietly(litellm, kwargs)
                    lanes = self._lanes()
                    if lanes:
                        call = shared_lanes(lanes).run(call)
                    response = await asyncio.wait_for(call, timeout=self.timeout + 5)
                    latency = time.perf_counter() - t0
                raw, logprobs = _content(response)
                if raw is None:
                    raise JudgeError("malformed", "the response has no message content")
                break
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below
                kind = exc.kind if isinstance(exc, JudgeError) else classify(exc)
                if kind in RETRYABLE and attempt < self.retries:
                    delay = min(self.max_backoff, self.backoff * (2 ** attempt))
                    await asyncio.sleep(delay * (0.5 + random.random()))
                    attempt += 1
                    retry_kinds.append(kind)
                    continue
                rec = CallRecord(request, None, latency=time.perf_counter() - start,
                                 retries=attempt, retry_kinds=retry_kinds,
                                 error=_short_error(exc), error_kind=kind, purpose=purpose)
                raise JudgeError(kind, f"{_kind_text(kind)} after {attempt + 1} attempt(s): "
                                 f"{_short_error(exc)}", calls=[rec]) from None
        usage = getattr(response, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0)
        ct = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = _cost(litellm, response)
        rec = CallRecord(request, raw, pt, ct, cost, latency, cache_hit=False, retries=attempt,
                         retry_kinds=retry_kinds, purpose=purpose)
        self.cache.put(key, request["model"], {
            "raw": raw, "prompt_tokens": pt, "completion_tokens": ct, "cost": cost,
            "logprobs": logprobs,
        })
        return rec, logprobs

    # ---------------------------------------------------------------- one node

    async def answer(self, ask: Ask) -> Reply:
        model = ask.model or self.model
        prompt = ask.prompt
        want_lp = prompt.kind == "geval"
        messages = list(prompt.messages)
        calls: list[CallRecord] = []
        request = self.build_request(model, prompt, messages, want_lp)
        try:
            rec, logprobs = await self.complete(request, ask.sample,
                                                "geval_steps" if prompt.kind == "geval_steps"
                                                else "answer")
        except JudgeError as err:
            err.calls = calls + err.calls
            raise
        calls.append(rec)
        try:
            parsed = parse_answer(prompt, rec.raw or "")
        except AnswerError as first:
            # one corrective turn, then a step error showing the raw answers
            messages = messages + [
                {"role": "assistant", "content": rec.raw or ""},
                corrective_message(prompt, str(first)),
            ]
            request2 = self.build_request(model, prompt, messages, want_lp)
            try:
                rec2, logprobs = await self.complete(request2, ask.sample, "correction")
            except JudgeError as err:
                err.calls = calls + err.calls
                raise
            calls.append(rec2)
            try:
                parsed = parse_answer(prompt, rec2.raw or "")
            except AnswerError as second:
                raw = f"first answer:\n{rec.raw}\n\nafter correction:\n{rec2.raw}"
                rec2.error, rec2.error_kind = str(second), second.kind
                raise JudgeError(second.kind, f"unusable answer after one correction: {second}",
                                 raw=raw, calls=calls) from None
        reply = Reply(parsed.value, parsed.reason, raw=calls[-1].raw, calls=calls)
        if prompt.kind == "geval":
            _weight_geval(reply, parsed, logprobs)
        return reply


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


def _kind_text(kind: str) -> str:
    return {
        "429": "rate limited (429)", "5xx": "server error (5xx)", "timeout": "timed out",
        "connection": "connection failed", "malformed": "malformed response",
        "request": "request refused",
    }.get(kind, "judge call failed")


def _short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


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

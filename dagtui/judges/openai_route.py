"""The OpenAI-compatible route: `/chat/completions` over aiohttp, without litellm's weight.

Most judges speak OpenAI's chat-completions API: OpenAI itself, and vLLM, Ollama's /v1,
LM Studio, OpenRouter, Together, Groq or a company gateway behind `openai/NAME --api-base
URL`. For those models (`dagtui.judges.pricemap.plain_openai_name`: the ones litellm sends
through its plain OpenAI chat path, unchanged) the judge posts the request itself instead
of through litellm, which costs ~3 s to import and several milliseconds of CPU per call.

What stays the same, because the judge does it around the call whichever route carries it
(`dagtui.judges.litellm_judge.LiteLLMJudge._send`): the request (built once, so the cache
key is the same), retries and backoff, the error kinds (this module reads them from the HTTP
status or the body and raises `dagtui.judges.errors.CallError` with the kind on it;
aiohttp's own connection errors and timeouts are classified by their classes), the caps on the answer and the
key redaction (`dagtui.judges.bounds.received`; the body is bounded on the wire by
`dagtui.judges.bodies`, as litellm's clients are by `dagtui.judges.transport`), and the
step records. The price comes from
litellm's bundled map read as data (`dagtui.judges.pricemap.cost`).

What is sent is what litellm sends on that path: the model's name without `openai/`, the
messages, temperature, and when asked `response_format`, `logprobs`, `top_logprobs` and any
extra parameters; `Authorization: Bearer KEY` (the judge's key, else `OPENAI_API_KEY`); to
`api_base` (else `OPENAI_BASE_URL` / `OPENAI_API_BASE`, else OpenAI's) + `/chat/completions`.
tests/test_openai_route.py runs both routes against the stub and compares requests, results,
traces and reports.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import os
import threading
import urllib.parse
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

from dagtui.judges import pricemap
from dagtui.judges.base import ErrorKind
from dagtui.judges.bodies import ACCEPT_ENCODING, body_plan, bounded_body
from dagtui.judges.errors import CallError, kind_for_status

DEFAULT_BASE = "https://api.openai.com/v1"
#: the request's keys that are litellm's call options, not part of the body it posts
_CALL_OPTIONS = ("api_base", "api_key", "timeout", "num_retries", "max_retries")


def base_url(api_base: str | None) -> str:
    """Where requests go: `api_base`, else the OpenAI environment variables, else OpenAI."""
    return (api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
            or DEFAULT_BASE).rstrip("/")


class OpenAIRoute:
    """Posts chat-completion requests with aiohttp: one session (a keep-alive connection
    pool) per event loop and endpoint host, every body read within the caps
    (`dagtui.judges.bodies`).

    aiohttp rather than httpx: on the route benchmark (tests/benchmarks/bench_routes.py,
    32 calls in flight) httpx's connection pool spent ~4 ms of CPU per call looking its
    connections over, aiohttp ~0.3 ms; litellm itself sends through aiohttp."""

    name = "openai"
    #: the calls stay on the caller's loop: aiohttp's CPU per call is small enough
    lanes = False

    def __init__(self, timeout: float) -> None:
        import aiohttp

        self._aiohttp = aiohttp
        self.timeout = timeout
        self._sessions: dict[int, Any] = {}
        #: per loop, the suspended generator that closes its session when asyncio.run
        #: finalises the loop's async generators (`_closing`)
        self._closers: dict[int, Any] = {}
        self._lock = threading.Lock()

    async def _session(self) -> Any:
        loop = id(asyncio.get_running_loop())
        with self._lock:
            session = self._sessions.get(loop)
            if session is not None and not session.closed:
                return session
            aiohttp = self._aiohttp
            # a new loop (a new batch's asyncio.run) gets a new session; the old loop's
            # was closed as that loop ended (`_closing`)
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, limit_per_host=0),
                auto_decompress=False, trust_env=True,
                timeout=aiohttp.ClientTimeout(total=None, connect=self.timeout,
                                              sock_read=self.timeout))
            self._sessions = {loop: session}
            closer = _closing(session)
            self._closers = {loop: closer}
        await closer.__anext__()
        return session

    async def complete(self, kwargs: dict[str, Any]) -> Any:
        """The completion for litellm-style `kwargs` (`LiteLLMJudge._call_kwargs`), as an
        object with litellm's response attributes (`choices[0].message.content`, `usage`)."""
        name = pricemap.plain_openai_name(kwargs["model"]) or kwargs["model"]
        body = {k: v for k, v in kwargs.items() if k not in _CALL_OPTIONS}
        body["model"] = name
        key = kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise CallError(ErrorKind.AUTH, "no API key: pass one (--api-key, DAGTUI_API_KEY) "
                            "or set the OPENAI_API_KEY environment variable")
        url, basic = _endpoint(base_url(kwargs.get("api_base")))
        headers = {"Authorization": basic or f"Bearer {key}",
                   "Content-Type": "application/json", "Accept-Encoding": ACCEPT_ENCODING}
        if os.environ.get("OPENAI_ORGANIZATION"):
            headers["OpenAI-Organization"] = os.environ["OPENAI_ORGANIZATION"]
        timeout = kwargs.get("timeout", self.timeout)
        session = await self._session()
        async with session.post(url, data=json.dumps(body).encode(), headers=headers,
                                timeout=self._aiohttp.ClientTimeout(
                                    total=None, connect=timeout, sock_read=timeout),
                                ) as response:
            status = response.status
            encoding, limit, cut = body_plan(status, response.headers.get("Content-Encoding", ""),
                                             response.headers.get("Content-Length", ""))

            async def close() -> None:
                response.close()  # the connection is dropped, not drained

            raw = b"".join([piece async for piece in bounded_body(
                response.content.iter_any(), encoding, limit, cut=cut, close=close)])
            headers_seen = _Headers(response.headers)
        text = raw.decode("utf-8", "replace")
        if status >= 400:
            raise CallError(kind_for_status(status), f"Error code: {status} - {text}",
                            status_code=status, response=headers_seen)
        try:
            data = json.loads(text)
            data["choices"][0]["message"]
        except (ValueError, TypeError, KeyError, IndexError):
            raise CallError(ErrorKind.MALFORMED, "Invalid response object from the server: "
                            f"{text[:200]!r}", status_code=status,
                            response=headers_seen) from None
        return _as_response(data, name)

    def cost(self, response: Any) -> float | None:
        """USD for the call, from litellm's map (None when it has no price for the model)."""
        usage = getattr(response, "usage", None)
        if usage is None:
            return None
        details = getattr(usage, "prompt_tokens_details", None)
        cached = int(getattr(details, "cached_tokens", 0) or 0) if details else 0
        return pricemap.cost(response.priced_as, int(getattr(usage, "prompt_tokens", 0) or 0),
                             int(getattr(usage, "completion_tokens", 0) or 0), cached)

    async def aclose(self) -> None:
        """Close this loop's session (the others closed with their loops)."""
        loop = id(asyncio.get_running_loop())
        with self._lock:
            session = self._sessions.pop(loop, None)
            self._closers.pop(loop, None)
        if session is not None:
            await session.close()


@functools.lru_cache(maxsize=64)
def _endpoint(base: str) -> tuple[str, str | None]:
    """(the `/chat/completions` URL, a Basic `Authorization` value) for `base`: credentials
    in the URL (`http://user:key@host/v1`) are taken out of it and sent as Basic auth, which
    is what httpx did with them (aiohttp refuses a URL's credentials beside the header)."""
    parts = urllib.parse.urlsplit(base)
    if parts.username is None and parts.password is None:
        return base + "/chat/completions", None
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    host = parts.netloc.rpartition("@")[2]
    plain = urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return plain + "/chat/completions", f"Basic {token}"


class _Headers:
    """What an error keeps of its response: the headers (`errors.retry_after` reads them),
    readable after the response is released."""

    def __init__(self, headers: Any) -> None:
        self.headers = {k.lower(): v for k, v in headers.items()}


async def _closing(session: Any) -> AsyncIterator[None]:
    """Suspended once, then finalised with its loop: asyncio.run closes a loop's pending
    async generators before the loop itself, so a session no one closed is closed there
    (aiohttp would otherwise complain on stderr when it is collected)."""
    try:
        yield
    finally:
        if not session.closed:
            await session.close()


def _as_response(data: dict[str, Any], name: str) -> Any:
    """The JSON completion as attributes (what `_content` and the usage reading expect);
    token logprobs stay dicts, which `_content` reads as they are."""
    choices = []
    for choice in data.get("choices") or []:
        message = SimpleNamespace(**(choice.get("message") or {}))
        choices.append(SimpleNamespace(message=message, logprobs=choice.get("logprobs")))
    usage = data.get("usage")
    if isinstance(usage, dict):
        details = usage.get("prompt_tokens_details")
        usage = SimpleNamespace(**{**usage, "prompt_tokens_details": SimpleNamespace(
            **details) if isinstance(details, dict) else None})
    return SimpleNamespace(choices=choices, usage=usage, model=data.get("model"),
                           priced_as=name)

"""The OpenAI-compatible route: `/chat/completions` over httpx, without litellm's weight.

Most judges speak OpenAI's chat-completions API: OpenAI itself, and vLLM, Ollama's /v1,
LM Studio, OpenRouter, Together, Groq or a company gateway behind `openai/NAME --api-base
URL`. For those models (`dagtui.judges.pricemap.plain_openai_name`: the ones litellm sends
through its plain OpenAI chat path, unchanged) the judge posts the request itself instead
of through litellm, which costs ~3 s to import and several milliseconds of CPU per call.

What stays the same, because the judge does it around the call whichever route carries it
(`dagtui.judges.litellm_judge.LiteLLMJudge._send`): the request (built once, so the cache
key is the same), retries and backoff, the error kinds (this module reads them from the HTTP
status or the body and raises `dagtui.judges.errors.CallError` with the kind on it; httpx's
own transport errors are classified by their classes), the caps on the answer and the
key redaction (`dagtui.judges.bounds.received`; the body is bounded on the wire by
`dagtui.judges.transport.BoundedTransport`), and the step records. The price comes from
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
import contextlib
import json
import os
import threading
from types import SimpleNamespace
from typing import Any

from dagtui.judges import pricemap
from dagtui.judges.base import ErrorKind
from dagtui.judges.errors import CallError, kind_for_status

DEFAULT_BASE = "https://api.openai.com/v1"
#: the request's keys that are litellm's call options, not part of the body it posts
_CALL_OPTIONS = ("api_base", "api_key", "timeout", "num_retries", "max_retries")


def base_url(api_base: str | None) -> str:
    """Where requests go: `api_base`, else the OpenAI environment variables, else OpenAI."""
    return (api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
            or DEFAULT_BASE).rstrip("/")


class OpenAIRoute:
    """Posts chat-completion requests with httpx: one bounded client per event loop."""

    name = "openai"
    #: the calls stay on the caller's loop: httpx's CPU per call is small enough
    lanes = False

    def __init__(self, timeout: float) -> None:
        import httpx

        from dagtui.judges.transport import BoundedTransport

        self._httpx = httpx
        self._transport = BoundedTransport
        self.timeout = timeout
        self._clients: dict[int, Any] = {}
        self._lock = threading.Lock()

    def _client(self) -> Any:
        loop = id(asyncio.get_running_loop())
        with self._lock:
            client = self._clients.get(loop)
            if client is None:
                httpx = self._httpx
                # a new loop (a new batch's asyncio.run) gets a new client; the old loop's,
                # closed with its loop, is dropped
                self._clients = {loop: httpx.AsyncClient(
                    transport=self._transport(httpx.AsyncHTTPTransport()),
                    timeout=httpx.Timeout(self.timeout),
                    limits=httpx.Limits(max_connections=None, max_keepalive_connections=64))}
                client = self._clients[loop]
        return client

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
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        if os.environ.get("OPENAI_ORGANIZATION"):
            headers["OpenAI-Organization"] = os.environ["OPENAI_ORGANIZATION"]
        url = base_url(kwargs.get("api_base")) + "/chat/completions"
        response = await self._client().post(url, content=json.dumps(body), headers=headers,
                                             timeout=kwargs.get("timeout", self.timeout))
        text = (await response.aread()).decode("utf-8", "replace")
        status = response.status_code
        if status >= 400:
            raise CallError(kind_for_status(status), f"Error code: {status} - {text}",
                            status_code=status, response=response)
        try:
            data = json.loads(text)
            data["choices"][0]["message"]
        except (ValueError, TypeError, KeyError, IndexError):
            raise CallError(ErrorKind.MALFORMED, "Invalid response object from the server: "
                            f"{text[:200]!r}", status_code=status, response=response) from None
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
        clients, self._clients = self._clients, {}
        for client in clients.values():
            with contextlib.suppress(RuntimeError):  # its loop is gone: nothing to close
                await client.aclose()


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

"""Why a judge call failed, as one `ErrorKind`, and how long the provider asked us to wait.

Each route to a model raises its own exceptions, and the kind is read from their classes,
never from their wording:

- the OpenAI-compatible route (`dagtui.judges.openai_route`) knows the kind where it raises:
  it reads the HTTP status (and a 2xx body that is no completion) itself and raises
  `CallError` with the kind on it; aiohttp's connection errors keep their classes.
- litellm raises its own classes (`litellm.exceptions`: `AuthenticationError`, `Timeout`,
  `RateLimitError`, `ContextWindowExceededError`, ...), usually wrapping the openai SDK's,
  which wrap httpx's or aiohttp's, which wrap the OS error. `classify` walks that chain
  from the root cause outwards and takes the first class it knows: a refused connection
  that litellm reports as a 500 is a `ConnectionRefusedError` at the root, an unreadable
  body a `JSONDecodeError`, a 403 that litellm maps to a bare `APIError` an
  `openai.PermissionDeniedError` one level down.

litellm and openai are never imported here: their classes are looked up in `sys.modules`,
since an exception of theirs cannot exist unless they are loaded (a fully cached run, and
every call on the OpenAI-compatible route, import no litellm).
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import socket
import sys
import time
from collections.abc import Iterable

from dagtui.judges.base import ErrorKind, JudgeError
from dagtui.judges.bounds import AnswerTooLarge
from dagtui.text import shorten

#: kinds a retry may fix; the rest (a 4xx, a missing key, an unknown model, an answer past
#: the caps) fail at once
RETRYABLE = frozenset({ErrorKind.RATE_LIMIT, ErrorKind.SERVER, ErrorKind.TIMEOUT,
                       ErrorKind.CONNECTION, ErrorKind.MALFORMED})


class CallError(Exception):
    """A failure whose kind the route knew where it raised it: an HTTP status, a body that
    is no completion, a model no provider serves. `status_code` and `response` are the
    server's (None when there was no answer), so `retry_after` reads its headers."""

    def __init__(self, kind: ErrorKind, message: str, *, status_code: int | None = None,
                 response: object = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status_code = status_code
        self.response = response


def kind_for_status(status: int) -> ErrorKind:
    """The kind of an HTTP error status."""
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 404:
        return ErrorKind.NOT_FOUND
    if status == 408:
        return ErrorKind.TIMEOUT
    if status >= 500:
        return ErrorKind.SERVER
    return ErrorKind.REQUEST


#: the openai SDK's classes, which litellm's own subclass (`litellm.AuthenticationError` is an
#: `openai.AuthenticationError`, `litellm.Timeout` an `openai.APITimeoutError`, ...), so
#: these name litellm's too; the openai SDK is loaded whenever litellm is
_OPENAI = (
    ("APITimeoutError", ErrorKind.TIMEOUT),
    ("AuthenticationError", ErrorKind.AUTH),
    ("PermissionDeniedError", ErrorKind.AUTH),
    ("NotFoundError", ErrorKind.NOT_FOUND),
    ("RateLimitError", ErrorKind.RATE_LIMIT),
    ("APIConnectionError", ErrorKind.CONNECTION),
    ("APIResponseValidationError", ErrorKind.MALFORMED),
    ("InternalServerError", ErrorKind.SERVER),
    ("BadRequestError", ErrorKind.REQUEST),  # litellm's ContextWindowExceededError too
    ("UnprocessableEntityError", ErrorKind.REQUEST),
    ("ConflictError", ErrorKind.REQUEST),
)
#: litellm's classes that say more than the openai class they subclass, tried first
_LITELLM = (
    ("LiteLLMUnknownProvider", ErrorKind.NOT_FOUND),  # a BadRequestError, but no retry or
    # rewording of the request finds a provider
    ("ServiceUnavailableError", ErrorKind.SERVER),  # openai's APIStatusError: no kind there
    ("BadGatewayError", ErrorKind.SERVER),
)
#: httpx's (both routes send through it); a timeout is tried before the transport errors
_HTTPX = (
    ("TimeoutException", ErrorKind.TIMEOUT),
    ("TransportError", ErrorKind.CONNECTION),  # refused, reset, protocol errors, proxies
    ("DecodingError", ErrorKind.MALFORMED),  # a body that does not decode
)
#: aiohttp's (the OpenAI-compatible route's client, and litellm's transport); its timeouts
#: are connection errors too, so they come first
_AIOHTTP = (
    ("ServerTimeoutError", ErrorKind.TIMEOUT),
    ("ConnectionTimeoutError", ErrorKind.TIMEOUT),
    ("ClientConnectionError", ErrorKind.CONNECTION),  # refused, disconnected, reset
    ("ClientPayloadError", ErrorKind.MALFORMED),  # a body cut short or badly chunked
)
#: the standard library's, for the root of a chain
_BUILTIN: tuple[tuple[type[BaseException], ErrorKind], ...] = (
    (TimeoutError, ErrorKind.TIMEOUT),  # asyncio.TimeoutError too (3.11)
    (ConnectionError, ErrorKind.CONNECTION),  # refused, reset, aborted
    (socket.gaierror, ErrorKind.CONNECTION),  # the host name does not resolve
    (json.JSONDecodeError, ErrorKind.MALFORMED),  # a 200 whose body is no JSON
)


def _loaded(module: str, names: Iterable[tuple[str, ErrorKind]],
            ) -> list[tuple[type[BaseException], ErrorKind]]:
    """(class, kind) for `names` of `module`, empty when it is not imported."""
    mod = sys.modules.get(module)
    if mod is None:
        return []
    out = []
    for name, kind in names:
        cls = getattr(mod, name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            out.append((cls, kind))
    return out


def _table() -> list[tuple[type[BaseException], ErrorKind]]:
    """Every class `classify` knows, in the order it tries them on one exception."""
    return (_loaded("litellm", _LITELLM) + _loaded("openai", _OPENAI)
            + _loaded("httpx", _HTTPX) + _loaded("aiohttp", _AIOHTTP) + list(_BUILTIN))


def chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from (litellm wraps openai wraps httpx...)."""
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out and len(out) < 8:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def _one(exc: BaseException, table: list[tuple[type[BaseException], ErrorKind]],
         ) -> ErrorKind | None:
    """The kind of `exc` by its own class (not its causes), or None."""
    openai = sys.modules.get("openai")
    if openai is not None and type(exc) is getattr(openai, "OpenAIError", None):
        # the bare base class: the SDK refused to build its client (no key, no endpoint)
        return ErrorKind.AUTH
    for cls, kind in table:
        if isinstance(exc, cls):
            return kind
    return None


def classify(exc: BaseException) -> ErrorKind:
    """The kind of a failed call: an answer past the caps anywhere in the chain, else the
    kind a route's `CallError` (or a `JudgeError`) names, else the kind of the deepest exception whose class is known (the root cause), else, for an
    exception that says only its HTTP status, that status; `other` when nothing is known."""
    links = chain(exc)
    if any(isinstance(e, AnswerTooLarge) for e in links):
        return ErrorKind.TOO_LARGE
    known = next((e for e in links if isinstance(e, CallError | JudgeError)), None)
    if known is not None:  # dagtui's own finding, whatever it was raised from
        return ErrorKind(known.kind)
    table = _table()
    for link in reversed(links):
        kind = _one(link, table)
        if kind is not None:
            return kind
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status >= 400:
        return kind_for_status(status)
    return ErrorKind.OTHER


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked to wait (`Retry-After`: seconds or an HTTP date, or
    `retry-after-ms`), from the response headers the exception keeps (litellm's also as
    `litellm_response_headers`)."""
    for source in (getattr(getattr(exc, "response", None), "headers", None),
                   getattr(exc, "litellm_response_headers", None)):
        if not source:
            continue
        try:
            ms = source.get("retry-after-ms")
            value = source.get("retry-after")
        except Exception:  # noqa: BLE001 - headers of an unexpected shape: none
            continue
        with contextlib.suppress(TypeError, ValueError):
            if ms is not None:
                return max(0.0, float(ms) / 1000)
        if value is None:
            continue
        with contextlib.suppress(TypeError, ValueError):
            return max(0.0, float(value))
        with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
            when = email.utils.parsedate_to_datetime(str(value))
            return max(0.0, when.timestamp() - time.time())
    return None


def kind_text(kind: str) -> str:
    """A kind in words, for the error line of a call that failed for good."""
    words: dict[str, str] = {
        ErrorKind.RATE_LIMIT: "rate limited (429)", ErrorKind.SERVER: "server error (5xx)",
        ErrorKind.TIMEOUT: "timed out", ErrorKind.CONNECTION: "connection failed",
        ErrorKind.MALFORMED: "malformed response", ErrorKind.REQUEST: "request refused (4xx)",
        ErrorKind.AUTH: "not authorised (401/403, or no key)",
        ErrorKind.NOT_FOUND: "model or provider not found",
        ErrorKind.TOO_LARGE: "answer too large",
    }
    return words.get(kind, "judge call failed")


def describe(exc: BaseException, kind: str) -> str:
    """An error for people: for a connection failure the root cause ("Connect call failed
    ('127.0.0.1', 8000)"), which litellm's own text ("Connection error.") leaves out."""
    links = chain(exc)
    root = links[-1]
    if kind == ErrorKind.TOO_LARGE:  # its own words: what was too large, and the cap
        return next((str(e) for e in links if isinstance(e, AnswerTooLarge)), str(exc))
    if kind == ErrorKind.CONNECTION and root is not exc:
        return short_error(root)
    return short_error(exc)


def short_error(exc: BaseException) -> str:
    """`Class: message`, on one line and at most 300 characters (a `CallError`'s message
    alone: it names what was found, "Error code: 429 - ...")."""
    text = str(exc) if isinstance(exc, CallError) else f"{type(exc).__name__}: {exc}"
    return shorten(text, 300, flat="squash")

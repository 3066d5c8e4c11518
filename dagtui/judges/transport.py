"""An httpx transport that reads at most so much of a judge's response (`dagtui.judges.bounds`).

httpx decompresses a body only as it is read, after the transport has handed it over, and
reads all of it: a 2 MB gzip bomb becomes 10 GB in memory before anyone can look at its
size. `BoundedTransport` wraps any httpx transport (httpx's own, litellm's aiohttp one) and
reads the body as `dagtui.judges.bodies` does (decoded in small steps, counted, stopped or
cut at the caps, other encodings refused), handing the client plain bytes with
`Content-Encoding` removed, so nothing decodes twice.

Any httpx client can use it (`httpx.AsyncClient(transport=BoundedTransport(
httpx.AsyncHTTPTransport()))`); `bound_litellm` puts it under every async client litellm
builds, by wrapping litellm's one transport factory. This module imports httpx, so only the
code that talks to a model imports it.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from dagtui.judges.bodies import ACCEPT_ENCODING, UnboundedEncoding, body_plan, bounded_body
from dagtui.judges.bounds import MAX_BODY_BYTES, MAX_ERROR_BODY_BYTES

__all__ = ["BoundedStream", "BoundedTransport", "UnboundedEncoding", "bound_litellm", "bounded"]

class BoundedStream(httpx.AsyncByteStream):
    """The body of `response`, decoded (when `encoding` is set) and counted: past `limit`
    bytes it raises `AnswerTooLarge`, or, with `cut`, just ends (`bodies.bounded_body`)."""

    def __init__(self, response: httpx.Response, encoding: str | None, limit: int, *,
                 cut: bool) -> None:
        self.response = response
        self.encoding = encoding
        self.limit = limit
        self.cut = cut

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for piece in bounded_body(self.response.stream,  # type: ignore[arg-type]
                                            self.encoding, self.limit, cut=self.cut,
                                            close=self.response.aclose):
                yield piece
        finally:
            await self.response.aclose()

    async def aclose(self) -> None:
        await self.response.aclose()


class BoundedTransport(httpx.AsyncBaseTransport):
    """`inner`, with every response body bounded (see the module doc)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, limit: int = MAX_BODY_BYTES,
                 error_limit: int = MAX_ERROR_BODY_BYTES) -> None:
        self.inner = inner
        self.limit = limit
        self.error_limit = error_limit

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        response = await self.inner.handle_async_request(request)
        try:
            encoding, limit, cut = body_plan(
                response.status_code, response.headers.get("content-encoding", ""),
                response.headers.get("content-length", ""), limit=self.limit,
                error_limit=self.error_limit)
        except Exception:
            await response.aclose()
            raise
        drop = {"content-encoding", "content-length"} if encoding or cut else set()
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in drop]
        return httpx.Response(
            response.status_code, headers=headers, request=request,
            stream=BoundedStream(response, encoding, limit, cut=cut),
            extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


def bounded(transport: Any) -> Any:
    """`transport` wrapped (once) in a `BoundedTransport`; None (httpx's default) becomes a
    bounded httpx transport with httpx's defaults."""
    if isinstance(transport, BoundedTransport):
        return transport
    if transport is None:
        transport = httpx.AsyncHTTPTransport()
    return BoundedTransport(transport)


def bound_litellm(litellm: Any) -> bool:
    """Put `BoundedTransport` under every async client litellm builds from now on: its
    OpenAI-compatible providers and its own HTTP handler both take their transport from
    `AsyncHTTPHandler.create_async_transport` (and proxy transports from
    `create_httpx_proxy_mounts`), so wrapping those two covers them. True when wrapped
    (False: this litellm has no such factory; `bounds.received` still caps the text)."""
    try:
        from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler
    except ImportError:
        return False
    make = getattr(AsyncHTTPHandler, "create_async_transport", None)
    if make is None:
        return False
    if getattr(make, "_dagtui_bounded", False):
        return True

    @functools.wraps(make)
    def create_async_transport(*args: Any, **kwargs: Any) -> Any:
        return bounded(make(*args, **kwargs))

    create_async_transport._dagtui_bounded = True  # type: ignore[attr-defined]
    _replace(AsyncHTTPHandler, "create_async_transport", make, create_async_transport)
    mounts = getattr(AsyncHTTPHandler, "create_httpx_proxy_mounts", None)
    if mounts is not None:
        @functools.wraps(mounts)
        def create_httpx_proxy_mounts(transport: Any, *args: Any, **kwargs: Any) -> Any:
            inner = transport.inner if isinstance(transport, BoundedTransport) else transport
            made: Mapping[str, Any] | None = mounts(inner, *args, **kwargs)
            return None if made is None else {
                k: None if v is None else bounded(v) for k, v in made.items()}

        _replace(AsyncHTTPHandler, "create_httpx_proxy_mounts", mounts,
                 create_httpx_proxy_mounts)
    return True


def _replace(cls: type, name: str, old: Any, new: Any) -> None:
    """`cls.name = new`, as a static method, and its private alias (`_name`, which litellm
    binds to the same function) too."""
    setattr(cls, name, staticmethod(new))
    if getattr(cls, f"_{name}", None) is old:
        setattr(cls, f"_{name}", staticmethod(new))

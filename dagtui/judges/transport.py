"""An httpx transport that reads at most so much of a judge's response (`dagtui.judges.bounds`).

httpx decompresses a body only as it is read, after the transport has handed it over, and
reads all of it: a 2 MB gzip bomb becomes 10 GB in memory before anyone can look at its
size. `BoundedTransport` wraps any httpx transport (httpx's own, litellm's aiohttp one) and
does the decoding itself, in small steps, counting the bytes it produces:

- a successful body stops at `MAX_BODY_BYTES` with `AnswerTooLarge` (the connection is
  closed, not drained); a `Content-Length` already past the cap fails before reading;
- an error body (status 400 and up) is cut at `MAX_ERROR_BODY_BYTES`: the status says what
  went wrong, and the client still gets the start of the message;
- it asks for `gzip, deflate` only, decodes those (one layer), and hands the client plain
  bytes with `Content-Encoding` removed, so nothing decodes twice; a body in any other
  encoding is refused unread, as it could not be bounded.

Any httpx client can use it (`httpx.AsyncClient(transport=BoundedTransport(
httpx.AsyncHTTPTransport()))`); `bound_litellm` puts it under every async client litellm
builds, by wrapping litellm's one transport factory. This module imports httpx, so only the
code that talks to a model imports it.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from dagtui.judges.bounds import MAX_BODY_BYTES, MAX_ERROR_BODY_BYTES, body_too_large

#: the encodings asked for and decoded (one layer); "identity" is no encoding
_DECODED = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS,
            "deflate": zlib.MAX_WBITS}
#: the largest piece decompressed at once: memory stays flat whatever the ratio
_STEP = 64 * 1024


class UnboundedEncoding(httpx.DecodingError):
    """A body in an encoding this transport does not decode (so could not bound)."""


class _Inflater:
    """One gzip or deflate layer, decoded in steps of at most `_STEP` bytes. Deflate is
    tried as zlib data first, then raw (servers send both, as httpx's decoder knows)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self.raw_fallback = encoding == "deflate"
        self.z = zlib.decompressobj(_DECODED[encoding])

    def feed(self, data: bytes, budget: int) -> list[bytes]:
        """The decoded pieces of `data`, `budget` bytes at most (the caller passes one more
        than it may take: a last byte past the cap is how it finds out)."""
        out: list[bytes] = []
        made = 0
        try:
            while data and made < budget:
                piece = self.z.decompress(data, min(_STEP, budget - made))
                self.raw_fallback = False
                out.append(piece)
                made += len(piece)
                data = self.z.unconsumed_tail
        except zlib.error as exc:
            if not self.raw_fallback:
                raise httpx.DecodingError(f"the {self.encoding} body does not decode: {exc}") \
                    from None
            self.raw_fallback = False  # not zlib data: raw deflate, from the start
            self.z = zlib.decompressobj(-zlib.MAX_WBITS)
            return self.feed(data, budget)
        return out

    def flush(self) -> bytes:
        try:
            return self.z.flush(_STEP)  # only what zlib holds back: its window at most
        except zlib.error as exc:
            raise httpx.DecodingError(f"the {self.encoding} body does not decode: {exc}") \
                from None


class BoundedStream(httpx.AsyncByteStream):
    """The body of `response`, decoded (when `encoding` is set) and counted: past `limit`
    bytes it raises `AnswerTooLarge`, or, with `cut`, just ends."""

    def __init__(self, response: httpx.Response, encoding: str | None, limit: int, *,
                 cut: bool) -> None:
        self.response = response
        self.inflater = _Inflater(encoding) if encoding else None
        self.limit = limit
        self.cut = cut
        self.count = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.response.stream:  # type: ignore[union-attr]
                pieces = (self.inflater.feed(chunk, self.limit - self.count + 1)
                          if self.inflater else [chunk])
                for piece in pieces:
                    if await self._past(piece):
                        yield piece[: len(piece) - (self.count - self.limit)]
                        return
                    yield piece
            if self.inflater is not None:
                tail = self.inflater.flush()
                if await self._past(tail):
                    yield tail[: len(tail) - (self.count - self.limit)]
                    return
                yield tail
        finally:
            await self.response.aclose()

    async def _past(self, piece: bytes) -> bool:
        """Count `piece`; True once past the limit with `cut` (raises without it)."""
        self.count += len(piece)
        if self.count <= self.limit:
            return False
        if not self.cut:
            await self.response.aclose()
            raise body_too_large(self.limit)
        return True

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
        request.headers["Accept-Encoding"] = "gzip, deflate"
        response = await self.inner.handle_async_request(request)
        codings = [c.strip().lower() for c in response.headers.get("content-encoding", "")
                   .split(",") if c.strip() and c.strip().lower() != "identity"]
        error = response.status_code >= 400
        limit = self.error_limit if error else self.limit
        if len(codings) > 1 or (codings and codings[0] not in _DECODED):
            await response.aclose()
            raise UnboundedEncoding(f"the judge answered in the encoding "
                                    f"{', '.join(codings)!r}, which dagtui does not read")
        length = response.headers.get("content-length", "")
        if not error and not codings and length.isdigit() and int(length) > limit:
            await response.aclose()
            raise body_too_large(limit)
        drop = {"content-encoding", "content-length"} if codings or error else set()
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in drop]
        return httpx.Response(
            response.status_code, headers=headers, request=request,
            stream=BoundedStream(response, codings[0] if codings else None, limit, cut=error),
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

"""A judge's response body, read within bounds whatever client reads it (`dagtui.judges.bounds`).

A client that decompresses a body as it is read, and reads all of it, turns a 2 MB gzip
bomb into 10 GB in memory before anyone can look at its size. Here the decoding is done in
small steps, counting the bytes produced:

- a successful body stops at `MAX_BODY_BYTES` with `AnswerTooLarge` (the connection is
  closed, not drained); a `Content-Length` already past the cap fails before reading;
- an error body (status 400 and up) is cut at `MAX_ERROR_BODY_BYTES`: the status says what
  went wrong, and the client still gets the start of the message;
- `gzip, deflate` only are asked for (`ACCEPT_ENCODING`) and decoded (one layer); a body
  in any other encoding is refused unread, as it could not be bounded.

Two readers use it: httpx's (`dagtui.judges.transport.BoundedTransport`, under every client
litellm builds) and the OpenAI-compatible route's aiohttp client
(`dagtui.judges.openai_route`). No client library is imported here.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable

from dagtui.judges.base import ErrorKind
from dagtui.judges.bounds import MAX_BODY_BYTES, MAX_ERROR_BODY_BYTES, body_too_large
from dagtui.judges.errors import CallError

#: what a bounded reader asks for
ACCEPT_ENCODING = "gzip, deflate"
#: the encodings asked for and decoded (one layer); "identity" is no encoding
_DECODED = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS,
            "deflate": zlib.MAX_WBITS}
#: the largest piece decompressed at once: memory stays flat whatever the ratio
_STEP = 64 * 1024


class UnboundedEncoding(CallError):
    """A body in an encoding dagtui does not decode (so could not bound)."""

    def __init__(self, codings: list[str]) -> None:
        super().__init__(ErrorKind.MALFORMED, f"the judge answered in the encoding "
                         f"{', '.join(codings)!r}, which dagtui does not read")


class BodyDecodeError(CallError):
    """A gzip or deflate body that does not decode."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorKind.MALFORMED, message)


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
                raise BodyDecodeError(f"the {self.encoding} body does not decode: {exc}") \
                    from None
            self.raw_fallback = False  # not zlib data: raw deflate, from the start
            self.z = zlib.decompressobj(-zlib.MAX_WBITS)
            return self.feed(data, budget)
        return out

    def flush(self) -> bytes:
        try:
            return self.z.flush(_STEP)  # only what zlib holds back: its window at most
        except zlib.error as exc:
            raise BodyDecodeError(f"the {self.encoding} body does not decode: {exc}") \
                from None


def body_plan(status: int, content_encoding: str, content_length: str, *,
              limit: int = MAX_BODY_BYTES, error_limit: int = MAX_ERROR_BODY_BYTES,
              ) -> tuple[str | None, int, bool]:
    """(the encoding to decode or None, the byte limit, cut rather than fail) for a response
    with these headers; raises `UnboundedEncoding`, or `AnswerTooLarge` when a successful
    body's `Content-Length` is already past the limit."""
    codings = [c.strip().lower() for c in content_encoding.split(",")
               if c.strip() and c.strip().lower() != "identity"]
    error = status >= 400
    cap = error_limit if error else limit
    if len(codings) > 1 or (codings and codings[0] not in _DECODED):
        raise UnboundedEncoding(codings)
    if not error and not codings and content_length.isdigit() and int(content_length) > cap:
        raise body_too_large(cap)
    return (codings[0] if codings else None), cap, error


async def bounded_body(chunks: AsyncIterable[bytes], encoding: str | None, limit: int, *,
                       cut: bool, close: Callable[[], Awaitable[None]]) -> AsyncIterator[bytes]:
    """The pieces of the body `chunks` brings, decoded (when `encoding` is set) and counted:
    past `limit` bytes it raises `AnswerTooLarge` (after `close()`, so the rest is never
    read), or, with `cut`, just ends."""
    inflater = _Inflater(encoding) if encoding else None
    count = 0

    async def past(piece: bytes) -> bool:
        nonlocal count
        count += len(piece)
        if count <= limit:
            return False
        if not cut:
            await close()
            raise body_too_large(limit)
        return True

    async for chunk in chunks:
        for piece in (inflater.feed(chunk, limit - count + 1) if inflater else [chunk]):
            if await past(piece):
                yield piece[: len(piece) - (count - limit)]
                return
            yield piece
    if inflater is not None:
        tail = inflater.flush()
        if await past(tail):
            yield tail[: len(tail) - (count - limit)]
            return
        yield tail

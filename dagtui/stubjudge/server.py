"""An OpenAI-compatible chat-completions server on 127.0.0.1: the tests' stub and the
demo judge (`dagtui demo-judge`), one implementation.

Real HTTP, so litellm's whole client path is exercised, but no internet and no key. It
answers `POST /v1/chat/completions` with what its responder decides (`dagtui.stubjudge.answers`),
can add latency, and can inject the faults a CI run meets: 429 (with a `retry_after` header
if set), 500, a timeout (the response never comes in time), a malformed HTTP body, content
that is not JSON, a verdict outside the allowed labels, 400, 401 (echoing the Authorization
header, as some gateways do), 403, 404, and an endpoint that goes down after `die_after`
requests. It keeps a request log and a call counter, binds a free port (or `port`), and
stops by itself (on `stop()`, on leaving a `with` block, after `idle_timeout` seconds
without requests, or at exit).

Its hostile faults (`HOSTILE_KINDS`) are what a server dagtui does not control may send:
`echo_key` (a usable answer whose reason repeats the key it was sent: the bearer token and
any `key=` of the URL), `echo_key_bad` (the same in an unusable answer), `huge` (an answer
of `huge_bytes`, streamed, never whole in the stub's memory), `gzip_bomb` (a gzip body of
about 1 MB that inflates to `bomb_bytes` of JSON), `huge_error` (a 500 whose body is
`huge_bytes` long), `huge_reason` (a small body whose reason is `reason_chars` long) and
`never` (the request is read, and no answer ever comes).

    with StubServer(latency=0.02) as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test")
        ...
        assert stub.calls == 3

`responder(body) -> str | dict | Fault` decides each answer (default: `smart_answer`, a
valid answer for whatever the prompt asks: evidence for a task, true for a binary question,
the first label of a non-binary one, 7 for a G-Eval score). `Script` builds a responder from
(substring of the prompt, answer) rules; `demo_answer` is the demo judge's.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import json
import math
import random
import re
import struct
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from dagtui.stubjudge.answers import HOSTILE_KINDS, Answer, Fault, Responder, smart_answer


@dataclass
class Streamed:
    """A body written piece by piece (a huge one is never whole in memory): `length` bytes
    in all, `headers` extra header lines (each ending in CRLF)."""

    length: int
    pieces: Callable[[], AsyncIterator[bytes]]
    headers: str = ""


_PIECE = 1 << 20  # 1 MiB


def _split_json(data: dict[str, Any], marker: str) -> tuple[bytes, bytes]:
    """The JSON text of `data` before and after the string `marker` it holds."""
    text = json.dumps(data)
    head, _, tail = text.partition(marker)
    return head.encode(), tail.encode()


def _repeat(head: bytes, byte: bytes, count: int, tail: bytes) -> Streamed:
    """`head`, then `count` copies of `byte`, then `tail`, in pieces of 1 MiB."""

    async def pieces() -> AsyncIterator[bytes]:
        yield head
        block = byte * _PIECE
        left = count
        while left > 0:
            yield block[: min(left, _PIECE)]
            left -= _PIECE
        yield tail

    return Streamed(len(head) + count + len(tail), pieces)


@functools.cache
def _bomb(head: bytes, size: int, tail: bytes) -> tuple[bytes, ...]:
    """A gzip member of `head` + `size` × "A" + `tail`, about 1 KB per MiB: after a full
    flush deflate forgets what came before, so every MiB of "A" compresses to the same
    bytes, made once and repeated; the trailer's CRC is computed over what it stands for."""
    z = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = b"A" * _PIECE
    start = z.compress(head) + z.flush(zlib.Z_FULL_FLUSH)
    unit = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    whole, rest = divmod(size, _PIECE)
    crc = zlib.crc32(head)
    for _ in range(whole):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(block[:rest] + tail, crc)
    end = z.compress(block[:rest] + tail) + z.flush()
    total = len(head) + size + len(tail)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    trailer = struct.pack("<II", crc & 0xFFFFFFFF, total & 0xFFFFFFFF)
    return (header + start,) + (unit,) * whole + (end + trailer,)


_BOMB_LOCK = threading.Lock()


def _bomb_once(head: bytes, size: int, tail: bytes) -> tuple[bytes, ...]:
    """`_bomb`, made by one thread while concurrent requests wait for it."""
    with _BOMB_LOCK:
        return _bomb(head, size, tail)


def _gzipped(parts: tuple[bytes, ...]) -> Streamed:
    async def pieces() -> AsyncIterator[bytes]:
        for part in parts:
            yield part

    return Streamed(sum(map(len, parts)), pieces, "Content-Encoding: gzip\r\n")


class StubServer:
    """The stub: an asyncio HTTP/1.1 server on its own thread and event loop.

    asyncio rather than a thread per connection: a burst of concurrent requests (a batch
    at concurrency 20 or 100) costs no thread start-ups, and latency is an `asyncio.sleep`,
    so the stub's own overhead stays far below the latency it simulates.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        fault_rate: float = 0.0,
        faults: tuple[str, ...] = ("429", "500", "timeout", "bad_json"),
        fault_plan: dict[int, str] | None = None,
        seed: int = 0,
        hang: float = 30.0,
        idle_timeout: float | None = 300.0,
        score_logprobs: dict[int, float] | None = None,
        retry_after: str | None = None,
        die_after: int | None = None,
        huge_bytes: int = 100 * _PIECE,
        bomb_bytes: int = 1024 * _PIECE,
        reason_chars: int = 100_000,
        port: int = 0,
        keep_requests: bool = True,
    ) -> None:
        self.responder = responder or smart_answer
        self.latency = latency
        self.fault_rate = fault_rate
        self.faults = faults
        self.fault_plan = dict(fault_plan or {})
        self.rng = random.Random(seed)
        self.hang = hang
        #: seconds without a request before the server stops itself; None: never
        self.idle_timeout = idle_timeout
        #: when set and logprobs are requested, the score token gets these alternatives
        self.score_logprobs = score_logprobs
        #: the Retry-After header sent with every 429 (seconds or an HTTP date), if any
        self.retry_after = retry_after
        #: after this many requests the endpoint goes down: the listening socket closes and
        #: every later request (on any connection) is dropped unanswered
        self.die_after = die_after
        #: the size of a `huge` answer and of a `huge_error` body, in bytes
        self.huge_bytes = huge_bytes
        #: what a `gzip_bomb` inflates to, in bytes
        self.bomb_bytes = bomb_bytes
        #: the length of a `huge_reason` answer's reason
        self.reason_chars = reason_chars
        self._dead = False
        #: every request with its body (a test reads them); with `keep_requests=False`
        #: (a long-lived demo judge) only the count is kept
        self.keep_requests = keep_requests
        self.requests: list[dict[str, Any]] = []
        self._count = 0
        self.faults_sent: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._last = time.monotonic()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._wanted_port = port
        self._port = 0

    # ---------------------------------------------------------------- lifecycle

    @property
    def port(self) -> int:
        assert self._port, "stub not started"
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        with self._lock:
            return self._count

    def start(self) -> StubServer:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="stub-server")
        self._thread.start()

        async def open_server() -> asyncio.Server:
            return await asyncio.start_server(self._connection, "127.0.0.1", self._wanted_port,
                                        backlog=512)

        try:
            self._server = asyncio.run_coroutine_threadsafe(open_server(),
                                                            self._loop).result(10)
        except BaseException:  # the port is taken (OSError): leave no thread or loop behind
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
            if not self._thread.is_alive():
                # closed here, not by the collector at exit: by then its self-pipe may be
                # gone, and the loop's __del__ prints a traceback ("Invalid file descriptor")
                self._loop.close()
            raise
        self._port = self._server.sockets[0].getsockname()[1]
        threading.Thread(target=self._watch_idle, daemon=True).start()
        atexit.register(self.stop)
        return self

    def stop(self) -> None:
        if self._stopped.is_set() or self._loop is None:
            return
        self._stopped.set()
        loop = self._loop

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):  # stopping must never fail a test
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _watch_idle(self) -> None:
        while not self._stopped.wait(0.5):
            if self.idle_timeout is not None and \
                    time.monotonic() - self._last > self.idle_timeout:
                self.stop()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._count = 0
            self.faults_sent.clear()

    # ---------------------------------------------------------------- requests

    def _choose_fault(self, number: int) -> str | None:
        if number in self.fault_plan:
            return self.fault_plan[number]
        with self._lock:
            if self.fault_rate and self.rng.random() < self.fault_rate:
                return self.rng.choice(self.faults)
        return None

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        """One keep-alive connection: read requests, answer each in turn."""
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                parts = line.decode("latin-1").split()
                method = parts[0] if parts else ""
                target = parts[1] if len(parts) > 1 else "/"
                headers: dict[str, str] = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    key, _, value = h.decode("latin-1").partition(":")
                    headers[key.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                raw = await reader.readexactly(length) if length else b""
                if self._dies_now():
                    break
                status, payload = await self._answer(method, raw, headers, target)
                reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
                          404: "Not Found", 429: "Too Many Requests",
                          500: "Internal Server Error", 504: "Gateway Timeout"}.get(status, "")
                extra = ""
                if status == 429 and self.retry_after is not None:
                    extra = f"Retry-After: {self.retry_after}\r\n"
                streamed = payload if isinstance(payload, Streamed) else None
                whole = b"" if isinstance(payload, Streamed) else payload
                if streamed is not None:
                    extra += streamed.headers
                length = streamed.length if streamed is not None else len(whole)
                writer.write(
                    f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n{extra}"
                    f"Content-Length: {length}\r\n\r\n".encode("latin-1") + whole
                )
                await writer.drain()
                if streamed is not None:
                    async for piece in streamed.pieces():
                        writer.write(piece)
                        await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    def _dies_now(self) -> bool:
        """True once `die_after` requests were served: the stub stops listening."""
        if self._dead:
            return True
        if self.die_after is not None and self.calls >= self.die_after:
            self._dead = True
            if self._server is not None:
                self._server.close()
            return True
        return False

    async def _answer(self, method: str, raw: bytes, headers: dict[str, str] | None = None,
                      target: str = "/") -> tuple[int, bytes | Streamed]:
        self._last = time.monotonic()
        if method != "POST":
            return 200, b'{"object": "list", "data": []}'
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return 400, b'{"error": {"message": "bad request body"}}'
        with self._lock:
            number = self._count
            self._count += 1
            entry = {"n": number, "body": body, "time": time.time(), "fault": None}
            if self.keep_requests:
                self.requests.append(entry)
        answer: Answer = self.responder(body)
        fault = answer.kind if isinstance(answer, Fault) else self._choose_fault(number)
        entry["fault"] = fault
        if fault:
            with self._lock:
                self.faults_sent[fault] = self.faults_sent.get(fault, 0) + 1
        if self.latency:
            await asyncio.sleep(self.latency)
        if fault == "timeout":
            await asyncio.sleep(self.hang)
            return 504, b'{"error": {"message": "too late"}}'
        if fault == "429":
            return 429, b'{"error": {"message": "rate limited", "type": "rate_limit"}}'
        if fault == "500":
            return 500, b'{"error": {"message": "boom", "type": "server_error"}}'
        if fault == "400":
            return 400, b'{"error": {"message": "bad request", "type": "invalid_request_error"}}'
        if fault == "401":  # a gateway that echoes the credentials it was sent
            auth = (headers or {}).get("authorization", "")
            return 401, json.dumps({"error": {"message": f"invalid credentials: {auth}",
                                              "type": "invalid_request_error"}}).encode()
        if fault == "403":
            return 403, b'{"error": {"message": "forbidden", "type": "permission_error"}}'
        if fault == "404":
            return 404, json.dumps({"error": {
                "message": f"model {body.get('model')!r} does not exist",
                "type": "invalid_request_error"}}).encode()
        if fault in HOSTILE_KINDS:
            return await self._hostile(fault, body, headers or {}, target)
        if fault == "malformed":
            return 200, b'{"id": "x", "choices": [ {"message": '
        if fault == "bad_json":
            content = "Sure! The verdict is probably yes, I think."
        elif fault == "out_of_set":
            content = json.dumps({"reason": "off script", "verdict": "Definitely maybe"})
        elif isinstance(answer, dict):
            content = json.dumps(answer)
        else:
            content = str(answer)
        return 200, json.dumps(self._completion(body, content)).encode()

    async def _hostile(self, fault: str, body: dict[str, Any], headers: dict[str, str],
                       target: str) -> tuple[int, bytes | Streamed]:
        """The answer of one of HOSTILE_KINDS (see the module doc)."""
        marker = "\x00BODY\x00"
        if fault == "never":
            await asyncio.Event().wait()  # until the stub stops or the client hangs up
        if fault in ("echo_key", "echo_key_bad"):
            auth = headers.get("authorization", "")
            sent = [auth.split(" ", 1)[1] if " " in auth else auth]
            sent += [v for _, v in parse_qsl(urlsplit(target).query)]
            echo = "I was called with " + " and ".join(k for k in sent if k)
            if fault == "echo_key_bad":
                content = f"Sorry, no verdict. {echo}."
            else:
                content = json.dumps({**smart_answer(body), "reason": echo})
            return 200, json.dumps(self._completion(body, content)).encode()
        if fault == "huge_reason":
            content = json.dumps({**smart_answer(body), "reason": "r" * self.reason_chars})
            return 200, json.dumps(self._completion(body, content)).encode()
        if fault == "huge_error":
            head, tail = _split_json({"error": {"message": marker, "type": "server_error"}},
                                     json.dumps(marker)[1:-1])
            return 500, _repeat(head, b"e", self.huge_bytes, tail)
        completion = {**self._completion(body, marker), "created": 0}  # the bomb is made once
        head, tail = _split_json(completion, json.dumps(marker)[1:-1])
        if fault == "huge":
            return 200, _repeat(head, b"A", self.huge_bytes, tail)
        # gzip_bomb: made once, on a thread (a second or so), while other requests go on
        return 200, _gzipped(await asyncio.to_thread(_bomb_once, head, self.bomb_bytes, tail))

    def _completion(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        choice: dict[str, Any] = {
            "index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": content},
        }
        if body.get("logprobs"):
            choice["logprobs"] = {"content": self._logprobs(content)}
        return {
            "id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [choice],
            "usage": {"prompt_tokens": prompt_chars // 4 + 1,
                      "completion_tokens": len(content) // 4 + 1,
                      "total_tokens": prompt_chars // 4 + len(content) // 4 + 2},
        }

    def _logprobs(self, content: str) -> list[dict[str, Any]]:
        """Coarse tokens; the score digits get `score_logprobs` as alternatives."""
        m = re.search(r'"score"\s*:\s*(\d+)', content)
        pieces = [content[: m.start(1)], m.group(1), content[m.end(1):]] if m else [content]
        out = []
        for i, piece in enumerate(pieces):
            if not piece:
                continue
            alts = [{"token": piece, "logprob": 0.0, "bytes": None}]
            if m and i == 1 and self.score_logprobs:
                alts = [{"token": str(k), "logprob": math.log(p), "bytes": None}
                        for k, p in self.score_logprobs.items()]
            out.append({"token": piece, "logprob": alts[0]["logprob"], "bytes": None,
                        "top_logprobs": alts})
        return out

"""An OpenAI-compatible chat-completions stub on 127.0.0.1, for tests and benchmarks.

Real HTTP, so litellm's whole client path is exercised, but no internet and no key. It
answers `POST /v1/chat/completions` with scripted content, can add latency, and can inject
the faults a CI run meets: 429, 500, a timeout (the response never comes in time), a
malformed HTTP body, content that is not JSON, and a verdict outside the allowed labels. It
keeps a request log and a call counter, binds a free port, and stops by itself (on `stop()`,
on leaving a `with` block, after `idle_timeout` seconds without requests, or at exit).

    with StubServer(latency=0.02) as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test")
        ...
        assert stub.calls == 3

`responder(body) -> str | dict | Fault` decides each answer (default: `smart_answer`, a
valid answer for whatever the prompt asks: evidence for a task, true for a binary question,
the first label of a non-binary one, 7 for a G-Eval score). `Script` builds a responder from
(substring of the prompt, answer) rules.
"""

from __future__ import annotations

import atexit
import json
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULT_KINDS = ("429", "500", "timeout", "malformed", "bad_json", "out_of_set")


@dataclass
class Fault:
    """An injected failure for one request (one of FAULT_KINDS)."""

    kind: str


Answer = str | dict | Fault
Responder = Callable[[dict[str, Any]], Answer]


def last_user(body: dict[str, Any]) -> str:
    for msg in reversed(body.get("messages", [])):
        if msg.get("role") == "user":
            return str(msg.get("content", ""))
    return ""


def first_user(body: dict[str, Any]) -> str:
    for msg in body.get("messages", []):
        if msg.get("role") == "user":
            return str(msg.get("content", ""))
    return ""


def prompt_kind(body: dict[str, Any]) -> str:
    """What the prompt asks for: task, binary, non_binary, geval or geval_steps."""
    text = first_user(body)
    if '"steps"' in text:
        return "geval_steps"
    if '"score"' in text:
        return "geval"
    if '"output"' in text:
        return "task"
    if "true or false" in text:
        return "binary"
    return "non_binary"


def labels_in(body: dict[str, Any]) -> list[str]:
    text = first_user(body)
    m = re.search(r"Choose exactly one of these labels:\n((?:- .*\n?)+)", text)
    if not m:
        return []
    return [line[2:] for line in m.group(1).splitlines() if line.startswith("- ")]


def smart_answer(body: dict[str, Any]) -> dict[str, Any]:
    """A valid answer for whatever the request asks."""
    kind = prompt_kind(body)
    if kind == "task":
        return {"reason": "extracted", "output": "Intro\nBody\nConclusion"}
    if kind == "binary":
        return {"reason": "stub says yes", "verdict": True}
    if kind == "non_binary":
        labels = labels_in(body)
        return {"reason": "stub picks the first label", "verdict": labels[0] if labels else "?"}
    if kind == "geval_steps":
        return {"reason": "generic steps", "steps": ["Read the input.", "Judge the output."]}
    return {"reason": "decent", "score": 7}


class Script:
    """Answers from rules: the first rule whose text occurs in the prompt wins.

    `rules` is a list of (substring, answer) where answer is a dict/str/Fault or a callable
    taking the request body. Unmatched requests get `fallback` (default: smart_answer).
    """

    def __init__(self, rules: list[tuple[str, Any]], fallback: Responder | None = None) -> None:
        self.rules = rules
        self.fallback = fallback or smart_answer

    def __call__(self, body: dict[str, Any]) -> Answer:
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        for needle, answer in self.rules:
            if needle in text:
                return answer(body) if callable(answer) else answer
        return self.fallback(body)


class StubServer:
    """The stub. Thread-safe counters; one handler thread per request."""

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
        idle_timeout: float = 300.0,
        score_logprobs: dict[int, float] | None = None,
    ) -> None:
        self.responder = responder or smart_answer
        self.latency = latency
        self.fault_rate = fault_rate
        self.faults = faults
        self.fault_plan = dict(fault_plan or {})
        self.rng = random.Random(seed)
        self.hang = hang
        self.idle_timeout = idle_timeout
        #: when set and logprobs are requested, the score token gets these alternatives
        self.score_logprobs = score_logprobs
        self.requests: list[dict[str, Any]] = []
        self.faults_sent: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._last = time.monotonic()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- lifecycle

    @property
    def port(self) -> int:
        assert self._server is not None, "stub not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def start(self) -> StubServer:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                stub._handle(self)

            def do_GET(self) -> None:  # noqa: N802
                stub._send(self, 200, {"object": "list", "data": []})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.request_queue_size = 256
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        threading.Thread(target=self._watch_idle, daemon=True).start()
        atexit.register(self.stop)
        return self

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _watch_idle(self) -> None:
        while not self._stop.wait(0.5):
            if time.monotonic() - self._last > self.idle_timeout:
                self.stop()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.faults_sent.clear()

    # ---------------------------------------------------------------- requests

    def _choose_fault(self, number: int) -> str | None:
        if number in self.fault_plan:
            return self.fault_plan[number]
        with self._lock:
            if self.fault_rate and self.rng.random() < self.fault_rate:
                return self.rng.choice(self.faults)
        return None

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        self._last = time.monotonic()
        length = int(h.headers.get("Content-Length") or 0)
        try:
            body = json.loads(h.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(h, 400, {"error": {"message": "bad request body"}})
            return
        with self._lock:
            number = len(self.requests)
            entry = {"n": number, "body": body, "time": time.time(), "fault": None}
            self.requests.append(entry)
        answer: Answer = self.responder(body)
        fault = answer.kind if isinstance(answer, Fault) else self._choose_fault(number)
        entry["fault"] = fault
        if fault:
            with self._lock:
                self.faults_sent[fault] = self.faults_sent.get(fault, 0) + 1
        if self.latency:
            self._stop.wait(self.latency)
        if fault == "timeout":
            self._stop.wait(self.hang)
            self._send(h, 504, {"error": {"message": "too late"}})
            return
        if fault == "429":
            self._send(h, 429, {"error": {"message": "rate limited", "type": "rate_limit"}})
            return
        if fault == "500":
            self._send(h, 500, {"error": {"message": "boom", "type": "server_error"}})
            return
        if fault == "malformed":
            self._send_raw(h, 200, b'{"id": "x", "choices": [ {"message": ')
            return
        if fault == "bad_json":
            content = "Sure! The verdict is probably yes, I think."
        elif fault == "out_of_set":
            content = json.dumps({"reason": "off script", "verdict": "Definitely maybe"})
        elif isinstance(answer, dict):
            content = json.dumps(answer)
        else:
            content = str(answer)
        self._send(h, 200, self._completion(body, content))

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
                import math

                alts = [{"token": str(k), "logprob": math.log(p), "bytes": None}
                        for k, p in self.score_logprobs.items()]
            out.append({"token": piece, "logprob": alts[0]["logprob"], "bytes": None,
                        "top_logprobs": alts})
        return out

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, data: dict[str, Any]) -> None:
        StubServer._send_raw(h, status, json.dumps(data).encode())

    @staticmethod
    def _send_raw(h: BaseHTTPRequestHandler, status: int, payload: bytes) -> None:
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            h.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass

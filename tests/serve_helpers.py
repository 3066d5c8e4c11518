"""A real `dagtui serve` on a free loopback port, for the serve tests (tests/test_serve_guard.py,
tests/test_serve_cli.py, tests/tui/test_serve_browser.py): start it, read the address it
prints (with its secret), stop it."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

URL = re.compile(r"^dagtui serve: (http://\S+)$", re.MULTILINE)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout: float) -> str:
    """GET `url` until it answers; its body."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return r.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Served:
    """A running `dagtui serve`: its process, the address it printed, and that address's parts."""

    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port or 80)

    @property
    def token(self) -> str:
        return parse_qs(urlsplit(self.url).query)["token"][0]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        """What serve printed so far (stdout and stderr)."""
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextmanager
def serving(cwd: Path, *args: str, timeout: float = 30) -> Iterator[Served]:
    """`dagtui serve ARGS --port N` in `cwd` until the address it printed answers.

    The serve process itself runs with `-P`, so what a test plants in `cwd` can reach only the
    editor processes serve starts (what tests/test_serve_guard.py checks), not the server."""
    log = cwd / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "dagtui", "serve", *args, "--port", str(free_port())],
            cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while not (found := URL.search(log.read_text(encoding="utf-8", errors="replace"))):
            assert proc.poll() is None, f"dagtui serve ended: {log.read_text()}"
            assert time.monotonic() < deadline, f"dagtui serve printed no address: {log.read_text()}"
            time.sleep(0.1)
        served = Served(proc, found.group(1), log)
        wait_http(served.url, max(1.0, deadline - time.monotonic()))
        yield served
    finally:
        stop(proc)

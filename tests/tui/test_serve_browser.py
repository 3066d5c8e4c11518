"""`dagtui serve` in a real browser: headless Chromium loads the page, the editor starts in it,
and a key pressed in the page reaches the app (ctrl+s writes the new graph file to disk).

Chromium is driven over its DevTools protocol with `websockets` (no browser driver): open the
page, wait until the terminal has drawn the app's first bytes, focus the terminal and send
ctrl+s. Skips, saying why, without Chromium (`apt-get install chromium`, done by `.ci/run`),
textual-serve or websockets (both in the test extra).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("textual_serve", reason="textual-serve is not installed (dagtui[serve])")
websockets = pytest.importorskip("websockets", reason="websockets is not installed")

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (apt-get install chromium)"),
]


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


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`dagtui serve new.toml --starter blank` on a free port: (page URL, the graph path)."""
    port = free_port()
    graph = tmp_path / "new.toml"
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dagtui", "serve", graph.name, "--starter", "blank",
         "--port", str(port)], cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_http(url, 30)
        yield url, graph
    finally:
        stop(proc)
        log.close()


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[int]:
    """Headless Chromium with the DevTools protocol on a free port: that port."""
    assert CHROMIUM is not None
    port = free_port()
    proc = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--no-first-run", "--no-default-browser-check",
         f"--user-data-dir={tmp_path / 'chromium'}", f"--remote-debugging-port={port}",
         "--window-size=1280,900", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/json/version", 30)
        yield port
    finally:
        stop(proc)


class Page:
    """One page target over the DevTools protocol (request/response by id)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        my_id = self.next_id
        await self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            reply = json.loads(await self.ws.recv())
            if reply.get("id") == my_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    async def evaluate(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    async def key(self, key: str, code: str, key_code: int, modifiers: int = 0) -> None:
        for kind in ("rawKeyDown", "keyUp"):
            await self.send("Input.dispatchKeyEvent", type=kind, key=key, code=code,
                            windowsVirtualKeyCode=key_code, nativeVirtualKeyCode=key_code,
                            modifiers=modifiers)


async def until(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.25)


def test_the_page_loads_and_a_key_reaches_the_editor(
        served: tuple[str, Path], chromium: int) -> None:
    url, graph = served
    targets = json.loads(wait_http(f"http://127.0.0.1:{chromium}/json/list", 10))
    page_ws = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")

    async def drive() -> None:
        async with websockets.connect(page_ws, max_size=None) as ws:
            page = Page(ws)
            await page.send("Page.enable")
            await page.send("Page.navigate", url=url)

            async def loaded() -> bool:
                return bool(await page.evaluate(
                    "document.readyState === 'complete' && !!document.querySelector("
                    "'.textual-terminal')"))

            await until(loaded, 30, "the page and its terminal")

            async def first_byte() -> bool:  # the editor process started and drew its screen
                return bool(await page.evaluate(
                    "document.body.classList.contains('-first-byte')"))

            await until(first_byte, 60, "the editor's first screen in the page")
            assert not graph.exists()

            async def saved() -> bool:  # ctrl+s until the app has its bindings up
                await page.evaluate(
                    "(document.querySelector('.xterm-helper-textarea') || document.body).focus()")
                await page.key("s", "KeyS", 83, modifiers=2)  # 2: ctrl
                await asyncio.sleep(0.5)
                return graph.exists()

            await until(saved, 60, f"ctrl+s in the page to write {graph.name}")

    asyncio.run(drive())
    assert "[metric]" in graph.read_text(encoding="utf-8")
    os.remove(graph)

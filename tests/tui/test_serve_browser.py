"""`dagtui serve` in a real browser: headless Chromium loads the printed address (with its
secret), the editor starts in it, and a key pressed in the page reaches the app (ctrl+s writes
the new graph file to disk): the page's assets and its websocket pass the guard
(dagtui/commands/serve_guard.py) with the cookie the first page set.

Chromium is driven over its DevTools protocol with `websockets` (no browser driver): open the
page, wait until the terminal has drawn the app's first bytes, focus the terminal and send
ctrl+s. Skips, saying why, without Chromium (`apt-get install chromium`, done by `.ci/run`),
textual-serve or websockets (both in the test extra).
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import Served, free_port, serving, stop, wait_http

pytest.importorskip("textual_serve", reason="textual-serve is not installed (dagtui[serve])")
websockets = pytest.importorskip("websockets", reason="websockets is not installed")

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (apt-get install chromium)"),
]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """`dagtui serve new.toml --starter blank` on a free port (its printed address carries the
    secret)."""
    with serving(tmp_path, "new.toml", "--starter", "blank") as s:
        yield s


@pytest.fixture
def other_site() -> Iterator[str]:
    """Another web page on this machine (a blank page on another loopback port): its URL."""

    class Blank(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!DOCTYPE html><title>another site</title>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Blank)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


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
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                                 awaitPromise=True)
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


def page_websocket(chromium: int) -> str:
    """The DevTools websocket of Chromium's page."""
    targets = json.loads(wait_http(f"http://127.0.0.1:{chromium}/json/list", 10))
    return str(next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page"))


# `localhost`: the same server through a loopback alias (sent on to the printed address)
@pytest.mark.parametrize("name", ["127.0.0.1", "localhost"])
def test_the_page_loads_and_a_key_reaches_the_editor(
        served: Served, chromium: int, name: str) -> None:
    url, graph = served.url.replace("127.0.0.1", name, 1), served.log.parent / "new.toml"

    async def drive() -> None:
        async with websockets.connect(page_websocket(chromium), max_size=None,
                                      proxy=None) as ws:
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


#: a script of another page opening the editor's websocket as the page itself would
OPEN_WS = """new Promise(resolve => {
  const ws = new WebSocket("ws://127.0.0.1:%d/ws?width=80&height=24");
  ws.onopen = () => { ws.close(); resolve("open"); };
  ws.onclose = e => resolve("closed " + e.code);
})"""


def test_another_page_in_the_same_browser_cannot_drive_the_editor(
        served: Served, chromium: int, other_site: str) -> None:
    """The browser holds the secret's cookie (it opened the printed address), and a page on
    another port of this machine is "same-site" for cookies (sites ignore ports), so the
    browser sends the cookie along with that page's handshake: its Origin refuses it."""

    async def drive() -> str:
        async with websockets.connect(page_websocket(chromium), max_size=None,
                                      proxy=None) as ws:
            page = Page(ws)
            await page.send("Page.enable")
            await page.send("Page.navigate", url=served.url)  # gets the cookie
            await until(lambda: page.evaluate("document.readyState === 'complete'"), 30,
                        "the printed address")
            await page.send("Page.navigate", url="about:blank")  # the editor's tab closes
            await page.send("Page.navigate", url=other_site)

            async def there() -> bool:
                return bool(await page.evaluate(
                    "document.readyState === 'complete' && document.title === 'another site'"))

            await until(there, 30, "the other site's page")
            return str(await page.evaluate(OPEN_WS % served.port))

    result = asyncio.run(drive())
    assert result.startswith("closed"), result
    assert f"refused /ws: Origin '{other_site.rstrip('/')}'" in served.output()

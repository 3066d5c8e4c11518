"""Only the browser that opened the address `dagtui serve` printed may drive it.

The rules (dagtui/commands/serve_guard.py) on their own, then a real `dagtui serve` on a free
loopback port driven by a websocket client the way textual-serve's page does (textual.js opens
`/ws?width=..&height=..` and sends `["stdin", text]`): a foreign Origin, a rebinding Host, no
secret or a wrong one are refused with 403 before any editor process starts; the printed
address works, and ctrl+s sent over the websocket reaches the editor (it writes the new graph).
And the editor processes serve starts do not import from its working directory.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from serve_helpers import Served, serving

from dagtui.commands.serve_guard import Guard

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

TOKEN = "s3cret-Token_of-this-launch"


def test_the_loopback_names_of_the_bound_port_are_this_server() -> None:
    guard = Guard.for_address("127.0.0.1", 8000, token=TOKEN)
    assert guard.url == f"http://127.0.0.1:8000/?token={TOKEN}"
    for host in ("127.0.0.1:8000", "localhost:8000", "LOCALHOST:8000", "[::1]:8000"):
        assert guard.host_refusal(host) is None, host
    for refused in ("evil.example:8000", "127.0.0.1:8001", "127.0.0.1", "localhost.:8000",
                    "127.0.0.2:8000", "127.0.0.1:8000.evil.example", None):
        assert guard.host_refusal(refused) is not None, refused
    assert guard.is_canonical("127.0.0.1:8000") and not guard.is_canonical("localhost:8000")


def test_only_pages_of_this_server_are_trusted_origins() -> None:
    guard = Guard.for_address("127.0.0.1", 8000, token=TOKEN)
    for origin in (None, "http://127.0.0.1:8000", "http://localhost:8000"):
        assert guard.origin_refusal(origin) is None, origin
    for origin in ("http://evil.example", "http://evil.example:8000", "https://127.0.0.1:8000",
                   "http://127.0.0.1:9000", "null", "file://", "http://127.0.0.1:8000.evil.example"):
        refusal = guard.origin_refusal(origin)
        assert refusal is not None and repr(origin) in refusal, origin


def test_a_named_or_remote_bind_answers_to_that_name_only() -> None:
    guard = Guard.for_address("192.168.1.5", 8000, token=TOKEN)
    assert guard.host_refusal("192.168.1.5:8000") is None
    assert guard.host_refusal("localhost:8000") is not None  # not loopback: no aliases
    ipv6 = Guard.for_address("::1", 8000, token=TOKEN)
    assert ipv6.url == f"http://[::1]:8000/?token={TOKEN}"
    assert ipv6.host_refusal("localhost:8000") is None
    web = Guard.for_address("127.0.0.1", 80, token=TOKEN)  # browsers omit the default port
    assert web.host_refusal("127.0.0.1") is None and web.origin_refusal("http://localhost") is None


def test_the_secret_is_fresh_per_launch_and_compared_exactly() -> None:
    first, second = Guard.for_address("127.0.0.1", 8000), Guard.for_address("127.0.0.1", 8000)
    assert first.token != second.token and len(first.token) >= 32
    assert first.holds_secret(first.token)
    for candidate in (None, "", second.token, first.token[:-1], first.token + "x", "é" * 43,
                      "\ud800" + first.token):
        assert not first.holds_secret(candidate), candidate
    assert first.cookie != Guard.for_address("127.0.0.1", 8001).cookie  # cookies ignore ports


# ---------------------------------------------------------------------------- the real server

def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(status, Set-Cookie, body) of GET `url` (no redirects followed)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect, urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status, r.headers.get("Set-Cookie", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Set-Cookie", ""), e.read().decode()


def editor_processes(served: Served) -> list[object]:
    """The editor processes serve has started (its descendants)."""
    psutil = pytest.importorskip("psutil")
    return list(psutil.Process(served.proc.pid).children(recursive=True))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    pytest.importorskip("textual_serve", reason="textual-serve is not installed (dagtui[serve])")
    with serving(tmp_path, "new.toml", "--starter", "blank") as s:
        yield s


@pytest.mark.slow
def test_pages_need_the_secret_and_this_servers_host(served: Served) -> None:
    base = f"http://127.0.0.1:{served.port}"
    status, cookie, page = get(served.url)
    assert status == 200 and "textual.js" in page
    assert f"dagtui-serve-token-{served.port}={served.token}" in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    # the page's assets pass with the cookie it set, not without
    asset = f"{base}/static/js/textual.js"
    assert get(asset, {"Cookie": f"dagtui-serve-token-{served.port}={served.token}"})[0] == 200
    assert get(asset)[0] == 403
    assert get(f"{base}/?token=wrong")[0] == 403
    status, _, body = get(f"{base}/")
    assert status == 403 and "no secret" in body
    # DNS rebinding: the right secret does not help a page that is not this server
    status, _, body = get(served.url, {"Host": f"evil.example:{served.port}"})
    assert status == 403 and "evil.example" in body
    status, _, body = get(served.url, {"Origin": "http://evil.example"})
    assert status == 403 and "Origin" in body
    # a loopback alias is sent to the printed address, where the cookie will live
    status, _, _ = get(f"http://localhost:{served.port}/?token={served.token}")
    assert status == 307
    assert "refused /static/js/textual.js: no secret" in served.output()


async def open_ws(served: Served, *, query: str = "", origin: str | None = None,
                  host: str | None = None, cookie: bool = False) -> ClientConnection:
    """A websocket handshake to `/ws` as a page would make it; the connection (or raises)."""
    import websockets
    from websockets.typing import Origin

    name = host or "127.0.0.1"
    headers = {"Cookie": f"dagtui-serve-token-{served.port}={served.token}"} if cookie else {}
    return await websockets.connect(
        f"ws://{name}:{served.port}/ws?width=100&height=30{query}",
        host="127.0.0.1", port=served.port,  # a rebinding name that resolves here
        origin=Origin(origin) if origin else None, additional_headers=headers, proxy=None, open_timeout=10,
        max_size=None)


@pytest.mark.slow
def test_a_websocket_without_the_secret_or_from_another_site_is_refused(
        served: Served) -> None:
    websockets = pytest.importorskip("websockets", reason="websockets is not installed")
    token = f"&token={served.token}"
    attempts: dict[str, dict[str, Any]] = {
        "foreign Origin": dict(query=token, origin="http://evil.example"),
        "foreign Origin, the cookie": dict(cookie=True, origin="http://evil.example"),
        "rebinding Host": dict(query=token, host="evil.example"),
        "rebinding Host and Origin": dict(query=token, host="evil.example",
                                          origin=f"http://evil.example:{served.port}"),
        "no secret": dict(origin=served.origin),
        "wrong secret": dict(query="&token=" + "A" * 43, origin=served.origin),
    }

    async def refused(how: dict[str, Any]) -> int:
        try:
            ws = await open_ws(served, **how)
        except websockets.InvalidStatus as e:
            return int(e.response.status_code)
        await ws.close()
        return 101

    for what, how in attempts.items():
        assert asyncio.run(refused(how)) == 403, what
    assert editor_processes(served) == []  # refused before any editor started
    out = served.output()
    assert "refused /ws: Origin 'http://evil.example'" in out
    assert f"refused /ws: Host 'evil.example:{served.port}'" in out
    assert "refused /ws: no secret" in out


async def ctrl_s_until_saved(ws: ClientConnection, graph: Path, timeout: float) -> int:
    """Drive the editor as textual.js does: a resize, then ctrl+s (`["stdin", "\\x13"]`)
    until the graph file appears, the editor hangs up or `timeout` passes; the bytes of screen
    the editor sent meanwhile."""
    from websockets import ConnectionClosed

    await ws.send(json.dumps(["resize", {"width": 100, "height": 30}]))
    received = 0
    deadline = time.monotonic() + timeout
    try:
        while not graph.exists() and time.monotonic() < deadline:
            await ws.send(json.dumps(["stdin", "\x13"]))
            try:
                while True:
                    message = await asyncio.wait_for(ws.recv(), 0.5)
                    received += len(message)
            except TimeoutError:
                pass
    except ConnectionClosed:  # the editor ended (it could not start)
        pass
    return received


@pytest.mark.slow
@pytest.mark.parametrize("carrier", ["query", "cookie"])
def test_the_printed_address_drives_the_editor(served: Served, tmp_path: Path,
                                               carrier: str) -> None:
    pytest.importorskip("websockets", reason="websockets is not installed")
    graph = tmp_path / "new.toml"
    assert get(served.url)[0] == 200  # the page the browser loads first

    async def drive() -> int:
        how = ({"query": f"&token={served.token}"} if carrier == "query" else {"cookie": True})
        ws = await open_ws(served, origin=served.origin, **how)
        try:
            received = await ctrl_s_until_saved(ws, graph, 60)
            assert graph.exists(), f"ctrl+s over the websocket did not write {graph}"
            # the check the refusal test relies on sees the editor of an accepted websocket
            assert editor_processes(served), "no editor process for the accepted websocket"
            return received
        finally:
            await ws.close()

    assert not graph.exists()
    assert asyncio.run(drive()) > 0  # the editor drew its screen into the websocket
    assert "[metric]" in graph.read_text(encoding="utf-8")


PLANTED = """\
from pathlib import Path
Path({marker!r}).write_text("imported from the working directory")
"""


@pytest.mark.slow
def test_the_editor_does_not_import_from_the_working_directory(tmp_path: Path) -> None:
    pytest.importorskip("textual_serve", reason="textual-serve is not installed (dagtui[serve])")
    pytest.importorskip("websockets", reason="websockets is not installed")
    marker = tmp_path / "MARKER"
    for name in ("rich.py", "textual.py"):
        (tmp_path / name).write_text(PLANTED.format(marker=str(marker)), encoding="utf-8")
    # the plant works: an ordinary `python` started in that folder imports it
    subprocess.run([sys.executable, "-c", "import rich"], cwd=tmp_path, check=True, timeout=30)
    assert marker.exists()
    marker.unlink()
    graph = tmp_path / "new.toml"
    with serving(tmp_path, graph.name, "--starter", "blank") as served:

        async def drive() -> int:
            ws = await open_ws(served, query=f"&token={served.token}", origin=served.origin)
            try:
                return await ctrl_s_until_saved(ws, graph, 60)
            finally:
                await ws.close()

        received = asyncio.run(drive())
    assert not marker.exists(), "an editor process imported rich.py/textual.py from its cwd"
    assert received > 0 and graph.exists()  # the editor ran, with the real rich and textual

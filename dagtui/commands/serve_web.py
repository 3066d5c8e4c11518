"""The web server of `dagtui serve`: textual-serve's, behind the guard of serve_guard.py.

textual-serve (textual_serve/server.py) builds an aiohttp application with four routes: the
page `/`, the websocket `/ws` that drives one app process per tab, `/download/{key}` and
`/static`. It checks no header and no secret, so this subclass adds one aiohttp middleware in
front of all four (rather than a fork of its routes): wrong Host, foreign Origin or no secret
is 403 before any handler runs, so a refused websocket never starts a process. It also prints
the address with its secret instead of textual-serve's banner (which names the address
without it). Imported only once textual-serve is known to be installed (the serve extra).
"""

from __future__ import annotations

import sys

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from textual_serve.server import Server

from dagtui.commands.serve_guard import TOKEN_PARAM, Guard
from dagtui.text import say


def guard_middleware(guard: Guard) -> Middleware:
    """The aiohttp middleware that applies `guard` to every request (see serve_guard.py)."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get("Host")
        refusal = guard.host_refusal(host) or guard.origin_refusal(request.headers.get("Origin"))
        if refusal is None and host is not None and not guard.is_canonical(host) \
                and request.path == "/":
            # a loopback alias of the printed address: the page's assets and websocket are
            # addressed to the printed one (textual-serve's public_url), so its cookie must be
            # set there
            raise web.HTTPTemporaryRedirect(f"{guard.base_url}{request.path_qs}")
        by_query = guard.holds_secret(request.query.get(TOKEN_PARAM))
        by_cookie = guard.holds_secret(request.cookies.get(guard.cookie))
        if refusal is None and not (by_query or by_cookie):
            refusal = ("no secret: open the address `dagtui serve` printed, with its "
                       f"?{TOKEN_PARAM}=")
        if refusal is not None:
            say(f"dagtui serve: refused {request.path}: {refusal}", file=sys.stderr,
                flush=True, one_line=True)  # a path may hold a %0A: one log line
            return web.Response(status=403, text=f"dagtui serve: refused: {refusal}\n")
        response = await handler(request)
        if by_query and not by_cookie and not response.prepared:
            # the page's assets and its websocket (textual-serve builds their URLs without
            # the query) then carry the secret; Strict: no other site's request carries it
            response.set_cookie(guard.cookie, guard.token, httponly=True, samesite="Strict")
        return response

    return check


class GuardedServer(Server):
    """textual-serve's server with `guard` in front of every route."""

    def __init__(self, command: str, *, host: str, port: int, title: str,
                 guard: Guard) -> None:
        super().__init__(command, host=host, port=port, title=title,
                         public_url=guard.base_url)
        self.guard = guard

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(guard_middleware(self.guard))
        return app

    async def on_startup(self, app: web.Application) -> None:
        # aiohttp runs this just before it binds (serve.run has checked that it can)
        print(f"dagtui serve: {self.guard.url}", flush=True)
        print("dagtui serve: open that address (its token is this launch's secret: "
              "without it the page is refused); ctrl+c stops", file=sys.stderr, flush=True)

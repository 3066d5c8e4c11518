"""Who may drive `dagtui serve`: the per-launch secret and the Host / Origin rules.

Without them any web page the user visits could open `ws://127.0.0.1:8000/ws` from its own
script (browsers let a page open a websocket to any address) and type into the editor, and a
DNS-rebinding page (a name of the attacker's that starts resolving to 127.0.0.1) could read the
pages too. So every request must

- name this server in its `Host` header (the bound address and port; for a loopback bind also
  `localhost`, `127.0.0.1` and `[::1]` with that port): a rebinding page's requests carry the
  attacker's name;
- if it has an `Origin` header (browsers send one on every websocket handshake and every
  cross-origin request), come from a page of this server (`http://` + one of those names);
- carry the secret: the `token` of the URL `serve` prints (a fresh `secrets.token_urlsafe` per
  launch), in the query or in the cookie the first page sets, so that the page's assets and its
  websocket (whose URL textual-serve builds without the query) pass too.

Anything else is refused with 403. The rules are plain functions of the headers, so they are
tested without a server; dagtui/commands/serve_web.py applies them as an aiohttp middleware.
"""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass, field
from urllib.parse import urlsplit

#: the query parameter of the printed URL that carries the secret
TOKEN_PARAM = "token"

#: the names a loopback-bound server answers to besides the bound one
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def _bracketed(host: str) -> str:
    """`host` as it appears in a URL: an IPv6 address in brackets."""
    try:
        return f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        return host


def _is_loopback_or_any(host: str) -> bool:
    """Whether a server bound to `host` is reached on this machine as `localhost`: a loopback
    address, `localhost` itself, or the wildcard (all addresses, loopback included)."""
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


@dataclass(frozen=True)
class Guard:
    """The rules of one launch: the address served, the names it answers to, its secret."""

    #: `host:port` of the printed URL (the bound address; IPv6 in brackets)
    canonical: str
    #: every `host[:port]` a request's Host (or its Origin's) may name, lower case
    netlocs: frozenset[str]
    #: the cookie that carries the secret after the first page (per port: cookies ignore ports)
    cookie: str
    #: the secret of this launch
    token: str = field(repr=False)

    @classmethod
    def for_address(cls, host: str, port: int, token: str | None = None) -> Guard:
        """The guard of a server bound to `host`:`port` (a fresh secret unless `token`)."""
        names = [_bracketed(host).lower()]
        if _is_loopback_or_any(host):
            names += [n for n in LOOPBACK_NAMES if n not in names]
        netlocs = {f"{name}:{port}" for name in names}
        if port == 80:  # a browser leaves the default port out of Host and Origin
            netlocs |= set(names)
        return cls(canonical=f"{names[0]}:{port}", netlocs=frozenset(netlocs),
                   cookie=f"dagtui-serve-token-{port}",
                   token=token or secrets.token_urlsafe(32))

    @property
    def base_url(self) -> str:
        """The server's address without the secret (what textual-serve builds page URLs on)."""
        return f"http://{self.canonical}"

    @property
    def url(self) -> str:
        """The address `serve` prints: the page, with the secret."""
        return f"{self.base_url}/?{TOKEN_PARAM}={self.token}"

    def host_refusal(self, host: str | None) -> str | None:
        """Why a request with this `Host` header is refused (None: it names this server)."""
        if host is None:
            return "no Host header"
        if host.lower() not in self.netlocs:
            return f"Host {host!r} is not this server's address {self.canonical}"
        return None

    def origin_refusal(self, origin: str | None) -> str | None:
        """Why a request with this `Origin` header is refused (None: none, or a page of this
        server). `null` (a sandboxed frame, a file:// page) is refused like a foreign site."""
        if origin is None:
            return None
        parts = urlsplit(origin)
        if parts.scheme != "http" or parts.netloc.lower() not in self.netlocs \
                or parts.path not in ("", "/"):
            return f"Origin {origin!r} is not a page of this server ({self.base_url})"
        return None

    def holds_secret(self, candidate: str | None) -> bool:
        """Whether `candidate` (a query parameter or a cookie) is this launch's secret; compared
        in constant time, so the answer's timing does not give the secret away."""
        return candidate is not None and secrets.compare_digest(
            candidate.encode("utf-8", "surrogatepass"), self.token.encode("ascii"))

    def is_canonical(self, host: str) -> bool:
        """Whether `host` (an accepted Host header) is the printed address itself, not one of
        its loopback aliases (a page loaded through an alias is sent to the printed address,
        where its assets, websocket and cookie live)."""
        return host.lower() in (self.canonical, self.canonical.removesuffix(":80"))

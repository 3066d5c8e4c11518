"""Keep API keys out of everything dagtui prints or saves.

A gateway may echo the Authorization header in its error body (litellm puts that body in the
exception text), a judge may repeat a key it saw in its answer's reason, and a key may sit
inside the endpoint URL itself (`https://host/v1?key=...`, `https://user:pass@host/v1`).
Unredacted, any of them would reach the terminal, the JSON report, `results.jsonl`, every
trace and the cache. This module is the one place that knows what a secret is:

- `redact(text)`: every known secret, every `Bearer <token>` and the `user:password@` of any
  URL in `text` replaced by `[redacted]`. Judge error text passes through it before it is
  stored (`CallRecord`, `JudgeError`), and so does every answer a judge returns, where it
  enters dagtui (`dagtui.judges.bounds.received`), so no sink downstream needs to think of it.
- `redact_url(url)`: an endpoint as reports, traces, the cache and messages show it, with its
  credentials (userinfo, and the values of query parameters named like `key`, `token`,
  `secret`, `password`, `sig`) masked; the masked values are remembered as secrets, so the
  same key echoed in an error or an answer is masked too.

What counts as a secret, at 8 or more characters (shorter values are placeholders such as
"test", which masking would cut out of ordinary words): every key a judge was given
(`remember_secret`: `api_key=` in code, the credentials of an `api_base`), DAGTUI_API_KEY,
OPENAI_API_KEY, ANTHROPIC_API_KEY, and any environment variable whose name ends in `_KEY`,
`_TOKEN`, `_SECRET` or `_PASSWORD` (the names litellm's providers read: GEMINI_API_KEY,
AZURE_API_KEY, AWS_SECRET_ACCESS_KEY, HF_TOKEN, ...); and, whatever its length, anything
following `Bearer `.

The environment is read again whenever it changed size, when a secret read from it is gone or
changed, and at least once a second: every answer passes here, and a full scan costs tens of
microseconds, while a key set after start still counts within a second (at once when it
added a variable).
"""

from __future__ import annotations

import os
import re
import threading
import time
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

MASK = "[redacted]"
MIN_SECRET = 8
_NAMED = ("DAGTUI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
_BEARER = re.compile(r"(?i)\b(bearer)\s+[^\s\"',;}\]]+")
#: the `user:password@` (or `token@`) of a URL written in text
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@\"']+@")
#: query parameters whose value is a credential (matched in the lower-cased name)
_SECRET_PARAMS = ("key", "token", "secret", "pass", "sig", "auth", "credential", "session")
#: the longest the environment scan is trusted for, in seconds
_RESCAN = 1.0
_given: set[str] = set()
_lock = threading.Lock()
#: the last scan: (len(os.environ), {name: value} of the secrets found, when)
_scan: tuple[int, dict[str, str], float] = (-1, {}, 0.0)


def remember_secret(value: str | None) -> None:
    """Count `value` (a key passed in code, not through the environment) as a secret."""
    if value and len(value) >= MIN_SECRET:
        with _lock:
            _given.add(value)


def _environment_secrets() -> dict[str, str]:
    """{name: value} of every secret in the environment (see the module doc on rescans)."""
    global _scan
    size, found, when = _scan
    now = time.monotonic()
    if size == len(os.environ) and now - when < _RESCAN and \
            all(os.environ.get(name) == value for name, value in found.items()):
        return found
    found = {name: value for name, value in os.environ.items()
             if value and len(value) >= MIN_SECRET
             and (name in _NAMED or name.endswith(_SUFFIXES))}
    _scan = (len(os.environ), found, now)
    return found


def known_secrets() -> list[str]:
    """Every secret value known now, longest first (so a key containing another is masked
    whole)."""
    values = set(_environment_secrets().values())
    with _lock:
        values |= _given
    return sorted(values, key=len, reverse=True)


def redact(text: str | None) -> str | None:
    """`text` with every known secret, every `Bearer <token>` and every URL's
    `user:password@` replaced by `[redacted]`."""
    if not text:
        return text
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    if "://" in text:
        text = _USERINFO.sub(lambda m: f"{m.group(1)}{MASK}@", text)
    if "earer" in text:  # the regex only where it can match: answers pass here too
        text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    return text


def _secret_param(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_PARAMS)


def url_secrets(url: str) -> list[str]:
    """The credentials written into `url`: its user and password, and the values of its
    secret-named query parameters (see the module doc)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [p for p in (parts.username, parts.password) if p]
    found += [value for name, value in parse_qsl(parts.query, keep_blank_values=True)
              if value and _secret_param(name)]
    # as written in the URL, too: an error message may quote it percent-encoded
    found += [quote(v, safe="") for v in found if quote(v, safe="") != v]
    return found


def redact_url(url: str | None) -> str | None:
    """`url` as dagtui shows and stores it: credentials masked (see the module doc), and
    remembered as secrets so an echo of them elsewhere is masked too. A URL that does not
    parse is masked as text (`redact`)."""
    if not url:
        return url
    for secret in url_secrets(url):
        remember_secret(secret)
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pieces = []
        for piece in query.split("&"):
            name, sep, value = piece.partition("=")
            pieces.append(f"{name}={MASK}" if sep and value and _secret_param(name) else piece)
        query = "&".join(pieces)
    return redact(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))

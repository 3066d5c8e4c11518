"""Keep API keys out of everything dagtui prints or saves.

A gateway may echo the Authorization header in its error body, and litellm puts that body in
the exception text; unredacted, the key would reach the terminal, the JSON report and every
trace. `redact` is the one place judge error text passes through before it is stored (on a
`CallRecord`, a `JudgeError`, hence on steps, results and traces).

What counts as a secret, at 8 or more characters (shorter values are placeholders such as
"test", which masking would cut out of ordinary words): every key a judge was given
(`remember_secret`), DAGTUI_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY, any environment
variable whose name ends in `_API_KEY`, `_TOKEN` or `_SECRET`; and, whatever its length,
anything following `Bearer `.
The environment is read on each call (errors are rare; a key set after start still counts).
"""

from __future__ import annotations

import os
import re
import threading

MASK = "[redacted]"
MIN_SECRET = 8
_NAMED = ("DAGTUI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")
_BEARER = re.compile(r"(?i)\b(bearer)\s+[^\s\"',;}\]]+")
_given: set[str] = set()
_lock = threading.Lock()


def remember_secret(value: str | None) -> None:
    """Count `value` (a key passed in code, not through the environment) as a secret."""
    if value and len(value) >= MIN_SECRET:
        with _lock:
            _given.add(value)


def known_secrets() -> list[str]:
    """Every secret value known now, longest first (so a key containing another is masked
    whole)."""
    values = set()
    for name, value in os.environ.items():
        if not value:
            continue
        if len(value) >= MIN_SECRET and (name in _NAMED or name.endswith(_SUFFIXES)):
            values.add(value)
    with _lock:
        values |= _given
    return sorted(values, key=len, reverse=True)


def redact(text: str | None) -> str | None:
    """`text` with every known secret and every `Bearer <token>` replaced by `[redacted]`."""
    if not text:
        return text
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    return _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)

"""Identifier helpers shared by the exporters and the importer.

Every format has its own rules for what may appear in an id (JSON keys are free text,
Python names are identifiers, Mermaid ids must avoid keywords, TOML ids should be bare keys
so files stay readable). User text never becomes an identifier without passing through one
of these functions, which reduce it to a small safe alphabet.
"""

from __future__ import annotations

import keyword
import re

_NON_WORD = re.compile(r"[^0-9A-Za-z]+")
_BARE_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_UUID = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
#: words that make poor ids when derived from criteria or instructions
_STOP_WORDS = frozenset(
    ["a", "an", "the", "is", "are", "was", "were", "be", "of", "in", "on", "to", "for", "and", "or", "does", "do", "did", "it", "its", "this", "that", "these", "those", "with", "by", "as", "at", "from", "whether", "if", "all", "any"]
)


def slug(text: str, *, max_len: int = 32, words: int | None = None) -> str:
    """Lower-case ASCII words joined by `_` (may be empty when `text` has no ASCII word)."""
    parts = [p.lower() for p in _NON_WORD.split(text) if p]
    if words is not None:
        meaningful = [p for p in parts if p not in _STOP_WORDS] or parts
        parts = meaningful[:words]
    out = ""
    for part in parts:
        candidate = f"{out}_{part}" if out else part
        if len(candidate) > max_len:
            if not out:
                out = part[:max_len]
            break
        out = candidate
    return out


def verdict_key(verdict: bool | str) -> str:
    """The suffix a verdict gets in exported ids: `true`/`false`, or the label reduced to
    word characters (spaces become `_`), so `order.Correct order` is `order.Correct_order`."""
    if isinstance(verdict, bool):
        return "true" if verdict else "false"
    cleaned = _NON_WORD.sub("_", verdict).strip("_")
    return cleaned or "label"


def is_bare_id(text: str) -> bool:
    """True for ids worth keeping on import: TOML bare keys that are not random uuids."""
    return bool(_BARE_ID.fullmatch(text)) and not _UUID.match(text) and len(text) <= 64


def python_name(text: str, taken: set[str]) -> str:
    """A valid, unused Python identifier for `text`, added to `taken`."""
    base = slug(text, max_len=40) or "node"
    if base[0].isdigit() or keyword.iskeyword(base) or keyword.issoftkeyword(base):
        base = f"node_{base}"
    return unique(base, taken)


def unique(base: str, taken: set[str], sep: str = "_") -> str:
    """`base`, or `base_2`, `base_3`... whichever is free; the result is added to `taken`."""
    name = base
    n = 2
    while name in taken:
        name = f"{base}{sep}{n}"
        n += 1
    taken.add(name)
    return name

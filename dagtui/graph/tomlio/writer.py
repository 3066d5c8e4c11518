"""The canonical writer: TOML text for a graph with no original to keep (metric first, nodes
in model order, keys in each node type's `FIELDS` order, verdicts one per line), and the
key/value/string spellings the merge and `fmt` share."""

from __future__ import annotations

import math
import re
from typing import Any

from dagtui.graph.model import NODE_CLASSES, Metric

METRIC_ORDER: tuple[str, ...] = Metric.toml_keys()
VERDICT_ORDER: tuple[str, ...] = ("verdict", "score", "then")
#: a list of scalars longer than this (as one line) is written one item per line
_WRAP_AT = 88
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_key(key: str) -> str:
    """A key as TOML: bare when possible, else a quoted basic string."""
    # fullmatch: `^...$` with match took "0\n" for a bare key (`$` matches before a final
    # newline), and wrote a table header TOML cannot read
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def _escaped(value: str, *, keep_newlines: bool) -> str:
    """`value` with TOML basic-string escapes: quotes, backslashes and every control
    character (newlines too, unless a multi-line string keeps them)."""
    out = []
    for ch in value:
        if ch == "\n" and keep_newlines:
            out.append("\n")
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def toml_string(value: str) -> str:
    """A one-line TOML basic string; every control character is escaped."""
    return f'"{_escaped(value, keep_newlines=False)}"'


def multiline_string(value: str) -> str:
    """A multi-line basic string for text with newlines (readable prompts).

    Quotes and backslashes are escaped so no run of `\"\"\"` can close the string early, and
    the newline right after the opening quotes (which TOML trims) is ours, not the user's.
    """
    return f'"""\n{_escaped(value, keep_newlines=True)}"""'


def toml_value(value: Any) -> str:
    """Any TOML-ready Python value on one line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()
                          if v is not None)
        return "{ " + inner + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def verdict_inline(verdict: dict[str, Any]) -> str:
    ordered = in_order(verdict, VERDICT_ORDER)
    return toml_value(ordered)


def key_value_text(key: str, value: Any) -> str:
    """`key = value` in the canonical layout (may span lines)."""
    head = f"{toml_key(key)} = "
    if key == "verdicts" and isinstance(value, list) and all(isinstance(v, dict) for v in value):
        if not value:
            return head + "[]"
        lines = [f"  {verdict_inline(v)}," for v in value]
        return head + "[\n" + "\n".join(lines) + "\n]"
    if isinstance(value, str) and "\n" in value:
        return head + multiline_string(value)
    if isinstance(value, list) and value and not any(isinstance(v, dict | list) for v in value):
        one_line = head + toml_value(value)
        if len(one_line) > _WRAP_AT:
            return head + "[\n" + "".join(f"  {toml_value(v)},\n" for v in value) + "]"
        return one_line
    return head + toml_value(value)


def table_text(header: str, data: dict[str, Any]) -> str:
    lines = [header]
    for key, value in data.items():
        if value is None:
            continue
        lines.append(key_value_text(key, value))
    return "\n".join(lines) + "\n"


def node_table_text(node_id: str, raw: dict[str, Any]) -> str:
    """One `[nodes.<id>]` table in canonical layout."""
    cls = NODE_CLASSES.get(str(raw.get("type")))
    order = cls.FIELDS if cls else ()
    return table_text(f"[nodes.{toml_key(node_id)}]", in_order(raw, order))


def canonical_text(raw: dict[str, Any]) -> str:
    """Canonical text for a `Graph.to_raw()` dict: `[metric]` first, then every node."""
    parts = [table_text("[metric]", in_order(raw.get("metric", {}), METRIC_ORDER))]
    for nid, node in raw.get("nodes", {}).items():
        parts.append(node_table_text(nid, node))
    return "\n".join(parts)


def in_order(data: dict[str, Any], order: tuple[str, ...] | list[str]) -> dict[str, Any]:
    rank = {k: i for i, k in enumerate(order)}
    keys = sorted(data, key=lambda k: (rank.get(k, len(rank)), list(data).index(k)))
    return {k: data[k] for k in keys}

"""Write a graph as readable TOML (used by `dagtui import` for new files).

`tomli_w` renders every value (so quoting and escaping are its job, not ours); this module
only lays the file out the way people write graphs by hand: `[metric]`, then one
`[nodes.<id>]` table per node with fields in canonical order, and verdicts as one inline
table per line.
"""

from __future__ import annotations

import re
from typing import Any

import tomli_w

from ..model import Graph, node_to_raw

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def render_graph(graph: Graph, header: list[str] | None = None) -> str:
    raw = graph.to_raw()
    lines = [f"# {_one_line(h)}" for h in header or []]
    lines.append("[metric]")
    lines += [f"{_key(k)} = {_value(v)}" for k, v in raw["metric"].items()]
    for nid, node in graph.nodes.items():
        data = node_to_raw(node)
        lines += ["", f"[nodes.{_key(nid)}]"]
        for key, value in data.items():
            if key == "verdicts":
                lines.append("verdicts = [")
                lines += [f"  {_inline(v)}," for v in value]
                lines.append("]")
            else:
                lines.append(f"{_key(key)} = {_value(value)}")
    return "\n".join(lines) + "\n"


def _key(key: str) -> str:
    if _BARE_KEY.match(key):
        return key
    return tomli_w.dumps({key: 0})[: -len(" = 0\n")]


def _value(value: Any) -> str:
    if isinstance(value, list) and not any(isinstance(v, dict | list) for v in value):
        items = [_scalar(v) for v in value]
        one_line = "[" + ", ".join(items) + "]"
        if len(one_line) <= 80 and not any("\n" in i for i in items):
            return one_line
        return "[\n" + "".join(f"  {i},\n" for i in items) + "]"
    text = tomli_w.dumps({"v": value}, multiline_strings=True)
    return text[len("v = "):].rstrip("\n")


def _scalar(value: Any) -> str:
    return tomli_w.dumps({"v": value})[len("v = "):].rstrip("\n")


def _inline(table: dict[str, Any]) -> str:
    inner = ", ".join(f"{_key(k)} = {_scalar(v)}" for k, v in table.items())
    return "{ " + inner + " }"


def _one_line(text: str) -> str:
    return " ".join(text.split())

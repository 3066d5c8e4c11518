"""Write an imported graph as TOML: a header comment, then the canonical layout.

The layout is `dagtui.graph.tomlio.render`'s (what `dagtui fmt` and the editor write), so an
imported file is already formatted and `dagtui fmt --check` passes on it.
"""

from __future__ import annotations

from dagtui.graph.model import Graph
from dagtui.graph.tomlio import render


def render_graph(graph: Graph, header: list[str] | None = None) -> str:
    lines = [f"# {_one_line(h)}" for h in header or []]
    body = render(graph)
    return "\n".join(lines) + ("\n" if lines else "") + body


def _one_line(text: str) -> str:
    """Comment text on one line: every line break and control character becomes a space."""
    return "".join(ch if ch.isprintable() else " " for ch in " ".join(text.split()))

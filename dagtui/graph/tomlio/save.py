"""Saving a graph to disk: render (merged into the original when given), then write
atomically with `dagtui.safewrite`, shared by every command."""

from __future__ import annotations

import os

from dagtui.graph.model import Graph
from dagtui.graph.tomlio.merge import render
from dagtui.safewrite import Stamp, atomic_write


def save_graph(
    graph: Graph,
    path: str | os.PathLike[str],
    *,
    original_text: str | None = None,
    renames: dict[str, str] | None = None,
    expected: Stamp | None = None,
    force: bool = False,
) -> str:
    """Render `graph` (merged into `original_text` when given) and write it atomically.

    Returns the text written. Raises `UnparsableError` (a `SaveError`) without touching the
    file when `original_text` is not valid TOML, and `safewrite.WriteRefused` when the file
    is read-only (without `force`) or no longer what `expected` says was read.
    """
    text = render(graph, original_text, renames=renames)
    atomic_write(path, text, expected=expected, force=force)
    return text

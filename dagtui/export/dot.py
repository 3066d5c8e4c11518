"""Export to Graphviz DOT (`dot -Tsvg graph.dot > graph.svg`).

Node ids are derived (`n_<slug>`, letters, digits and `_` only); every label is a
double-quoted DOT string built by `quote`, which escapes
backslashes first (so user text can never form DOT escapes like `\\N` or `\\l`), then
quotes; newlines become DOT's centred line break.
"""

from __future__ import annotations

from dagtui.export.picture import Box, box_ids, build
from dagtui.graph.model import Graph

#: a box's shape (`dagtui.kinds.kind.SHAPES`, plus the picture's own) -> its DOT attributes
_STYLE = {
    "box": 'shape=box, style="rounded"',
    "diamond": "shape=diamond",
    "hexagon": "shape=hexagon",
    "parallelogram": "shape=parallelogram",
    "leaf": 'shape=box, style="filled,bold", fillcolor="#fff4e0", peripheries=2',
    "stack": 'shape=box3d',
    "score": 'shape=box, style="rounded,filled", fillcolor="#eef7ee", fontsize=10',
    "missing": 'shape=box, style="dashed", color="#c62828"',
}


def quote(text: str) -> str:
    """A DOT double-quoted string whose displayed text is `text`: backslash and quote
    escaped, `&` as `&amp;` (Graphviz decodes HTML entities in labels), every kind of line
    break as DOT's `\\n`, other control characters (NUL would cut the string) as spaces."""
    lines = []
    for line in text.splitlines() or [""]:
        clean = "".join(ch if ch.isprintable() else " " for ch in line)
        lines.append(clean.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;"))
    if text.endswith(("\n", "\r")) and text.splitlines():
        lines.append("")
    return '"' + "\\n".join(lines) + '"'


def to_dot(graph: Graph) -> str:
    picture = build(graph)
    ids = box_ids(picture)
    lines = [
        f"digraph {quote(graph.metric.name)} {{",
        "  rankdir=TB;",
        '  node [fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]
    for box in picture.boxes:
        lines.append(f"  {ids[box.key]} [label={quote(_text(box))}, {_STYLE[box.shape]}];")
    for edge in picture.edges:
        attrs = [f"label={quote(edge.label)}"] if edge.label else []
        if edge.kind == "data":
            attrs += ["style=dashed", 'color="#1565c0"']
        lines.append(f"  {ids[edge.source]} -> {ids[edge.target]} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _text(box: Box) -> str:
    return f"{box.title}\n{box.detail}" if box.detail else box.title

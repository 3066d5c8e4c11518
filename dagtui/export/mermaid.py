"""Export to a Mermaid `flowchart TD` for READMEs and pull requests.

Mermaid ids are derived (`n_<slug>`), never user text, so ids like `end` (a Mermaid keyword)
or `o`/`x` (which would turn an arrow into a circle/cross edge) cannot break the chart. All
label text is quoted and passes through `escape`, which turns the characters Mermaid gives
meaning to into its `#...;` entity codes and newlines into `<br/>`.
"""

from __future__ import annotations

from dagtui.export.picture import Box, box_ids, build
from dagtui.graph.model import Graph

#: a box's shape (`dagtui.kinds.kind.SHAPES`, plus the picture's own) -> Mermaid's brackets
#: (a hexagon is drawn as a rhombus, as a diamond is)
_SHAPES = {
    "box": ('["', '"]'),
    "diamond": ('{"', '"}'),
    "hexagon": ('{"', '"}'),
    "parallelogram": ('[/"', '"/]'),
    "leaf": ('[["', '"]]'),
    "stack": ('[("', '")]'),
    "score": ('(["', '"])'),
    "missing": ('>"', '"]'),
}
#: the shapes drawn in a colour of their own, and the Mermaid class that gives it
_CLASSES = {"score": "score", "leaf": "geval", "missing": "missing"}
_ENTITIES = {
    "#": "#35;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "`": "#96;",
    "&": "#amp;",
}


def escape(text: str) -> str:
    """Label text safe inside Mermaid's double quotes: one source line (every kind of line
    break, NEL and U+2028 included, becomes `<br/>`), Mermaid's special characters as
    `#...;` entities, other invisible control characters as spaces."""
    return "<br/>".join(
        "".join(_ENTITIES.get(ch, ch if ch.isprintable() else " ") for ch in line)
        for line in text.splitlines() or [""]
    ) + ("<br/>" if text.endswith(("\n", "\r")) and text.splitlines() else "")


def to_mermaid(graph: Graph) -> str:
    picture = build(graph)
    ids = box_ids(picture)
    lines = ["flowchart TD"]
    for box in picture.boxes:
        lines.append(f"    {ids[box.key]}{_shape(box)}")
    for edge in picture.edges:
        arrow = "-.->" if edge.kind == "data" else "-->"
        label = f'|"{escape(edge.label)}"|' if edge.label else ""
        lines.append(f"    {ids[edge.source]} {arrow}{label} {ids[edge.target]}")
    data_edges = [str(i) for i, e in enumerate(picture.edges) if e.kind == "data"]
    lines.append("    classDef score fill:#eef7ee,stroke:#2e7d32")
    lines.append("    classDef geval fill:#fff4e0,stroke:#ef6c00,stroke-width:2px")
    lines.append("    classDef missing fill:#fde0e0,stroke:#c62828")
    for shape, css in _CLASSES.items():
        members = [ids[b.key] for b in picture.boxes if b.shape == shape]
        if members:
            lines.append(f"    class {','.join(members)} {css}")
    if data_edges:
        lines.append(f"    linkStyle {','.join(data_edges)} stroke:#1565c0,stroke-dasharray:4")
    return "\n".join(lines) + "\n"


def _shape(box: Box) -> str:
    start, end = _SHAPES[box.shape]
    text = escape(box.title)
    if box.detail:
        text += "<br/>" + escape(box.detail)
    return f"{start}{text}{end}"

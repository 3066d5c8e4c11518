"""Export a graph to other tools, and import DeepEval's DAG JSON.

This package is part of the core: it imports neither Textual nor DeepEval. The DeepEval
formats are written as text in DeepEval's shapes (checked against the real library by the
interop tests), so exporting needs no DeepEval install; only running the result does.

    from dagtui.export import export_graph, ExportRefused, import_deepeval_json
    text = export_graph(graph, "deepeval-json")          # or deepeval-python, mermaid, dot
    graph = import_deepeval_json(json_text, name="My metric")   # raises ImportFailed
    toml_text = render_graph(graph, ["a header comment"])
"""

from __future__ import annotations

from dagtui.export.deepeval_json import to_json as to_deepeval_json
from dagtui.export.deepeval_python import to_python as to_deepeval_python
from dagtui.export.dot import to_dot
from dagtui.export.importer import ImportFailed, import_deepeval_dict, import_deepeval_json
from dagtui.export.mermaid import to_mermaid
from dagtui.export.refusals import ExportRefused, Refusal, deepeval_notes, deepeval_refusals
from dagtui.export.toml_text import render_graph
from dagtui.graph.model import Graph

#: export formats, as `dagtui export --to` spells them
FORMATS: tuple[str, ...] = ("deepeval-json", "deepeval-python", "mermaid", "dot")
#: formats that must refuse what DeepEval cannot express
DEEPEVAL_FORMATS: tuple[str, ...] = ("deepeval-json", "deepeval-python")


def export_graph(graph: Graph, fmt: str, *, source: str | None = None) -> str:
    """The graph as text in `fmt`. Raises `ExportRefused` (DeepEval formats) with every
    reason the graph cannot be expressed, or ValueError for an unknown format."""
    if fmt == "deepeval-json":
        return to_deepeval_json(graph)
    if fmt == "deepeval-python":
        return to_deepeval_python(graph, source)
    if fmt == "mermaid":
        return to_mermaid(graph)
    if fmt == "dot":
        return to_dot(graph)
    raise ValueError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")


__all__ = [
    "DEEPEVAL_FORMATS",
    "FORMATS",
    "ExportRefused",
    "ImportFailed",
    "Refusal",
    "deepeval_notes",
    "deepeval_refusals",
    "export_graph",
    "import_deepeval_dict",
    "import_deepeval_json",
    "render_graph",
    "to_deepeval_json",
    "to_deepeval_python",
    "to_dot",
    "to_mermaid",
]

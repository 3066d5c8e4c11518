"""The cases the debugger steps: `--cases`, else the graph's `[metric].cases`."""

from __future__ import annotations

from pathlib import Path

from dagtui.graph.model import Graph
from dagtui.run.cases import Case, CaseError, cases_source, load_cases


def graph_cases(graph: Graph, graph_path: str | Path | None,
                cases_file: str | Path | None = None) -> tuple[list[Case], str | None, str | None]:
    """(cases, where they came from, problem): `--cases`, else `[metric].cases`."""
    source = cases_source(graph, graph_path, cases_file)
    if source is None:
        return [], None, None
    try:
        return load_cases(source), source, None
    except CaseError as exc:
        return [], source, str(exc)

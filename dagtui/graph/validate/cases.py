"""Files a graph names on disk: its `[metric].cases` file (DAG113)."""

from __future__ import annotations

import os
from pathlib import Path

from dagtui.diagnostics import Diagnostic
from dagtui.graph.loader import Collector, LoadResult


def missing_cases_file(load: LoadResult) -> list[Diagnostic]:
    """DAG113 when `[metric].cases` names no file beside the graph: a typo there otherwise
    surfaced only when `run` or `test` failed to open it. Checked for files on disk (what
    `validate` and every command read), not on the editor's every keystroke, where the
    problems are about the graph itself."""
    cases = load.graph.metric.cases if load.graph is not None else None
    if not load.file or not isinstance(cases, str) or not cases.strip():
        return []
    target = Path(os.path.dirname(load.file)) / cases
    if target.exists():
        return []
    sink = Collector(load.file, load.positions)
    sink.add("DAG113", f"cases file '{cases}' does not exist (looked in {target.parent}); "
             "paths are relative to the graph file, and `run` / `test` / `step` need it "
             "unless given --cases", ("metric", "cases"), fld="cases", at_value=True)
    return sink.diags

"""The editor's single doorway to the core: validation, path analysis, saving and starters.

Everything the editor needs from `dagtui.validate`, `dagtui.paths`, `dagtui.tomlio` and
`dagtui.starters` goes through these few functions, so the rest of the TUI never cares how
the core spells them. Never imports textual.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import paths as _paths
from .. import starters as _starters
from .. import validate as _validate
from ..diagnostics import Diagnostic
from ..loader import LoadResult
from ..model import GEvalNode, Graph, TaskNode
from ..positions import Positions


@dataclass
class Checked:
    """Diagnostics plus path analysis for one graph version."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    paths: Any = None  # dagtui.paths.PathReport (None when it could not be computed)
    load: LoadResult | None = None


def check_text(text: str, file: str | None = None) -> Checked:
    """Load and fully check TOML text (used on open, reload and after save)."""
    report = _validate.check_text(text, file=file)
    return Checked(list(report.diagnostics), report.paths, report.load)


def path_signature(graph: Graph) -> tuple[object, ...]:
    """Everything path analysis depends on. Typing in a criteria or a label leaves it
    unchanged, so the (costly, on big graphs) analysis is reused for such edits."""
    metric = graph.metric
    parts: list[object] = [metric.roots and tuple(metric.roots), metric.threshold, metric.strict]
    for nid, node in graph.nodes.items():
        verdicts = tuple((v.verdict, v.score, v.then) for v in getattr(node, "verdicts", []) or [])
        extra: object = None
        if isinstance(node, TaskNode):
            extra = tuple(node.children)
        elif isinstance(node, GEvalNode):
            extra = (bool(node.criteria), bool(node.evaluation_steps))
        parts.append((nid, node.type, verdicts, extra))
    return tuple(parts)


class _AnalysisMemo:
    """`paths.analyze` remembered for the last path signature."""

    def __init__(self) -> None:
        self.key: tuple[object, ...] | None = None
        self.report: Any = None

    def analyze(self, graph: Graph, topo: Any = None, **kwargs: Any) -> Any:
        key = path_signature(graph)
        if key != self.key or kwargs:
            self.report = _paths.analyze(graph, topo, **kwargs)
            self.key = key if not kwargs else None
        return self.report


_memo = _AnalysisMemo()


def check_graph(graph: Graph, positions: Positions | None = None) -> Checked:
    """Check an in-memory graph as edited (positions are those of the last loaded text).

    Path analysis is reused when only text changed (see `path_signature`): the validator
    looks `analyze` up in its module at call time, so it is swapped for the memo around
    the call. TODO(validate owner): a `paths=` parameter on `check_graph` would replace
    this swap.
    """
    real = getattr(_validate, "analyze", None)
    if real is not None:
        _validate.analyze = _memo.analyze
    try:
        report = _validate.check_graph(graph, positions)
    finally:
        if real is not None:
            _validate.analyze = real
    return Checked(list(report.diagnostics), report.paths)


def render(graph: Graph, original_text: str | None, renames: dict[str, str]) -> str:
    """The file text for `graph`, merged into `original_text` so comments survive."""
    from .. import tomlio  # tomlkit is only needed on save: keep it out of startup

    return tomlio.render(graph, original_text, renames=renames or None)


def atomic_write(path: str | Path, text: str) -> None:
    from .. import tomlio

    tomlio.atomic_write(path, text)


def starter_names() -> list[str]:
    return list(_starters.STARTERS)


def starter_description(name: str) -> str:
    """The first comment line of the starter's text (what it is for)."""
    text = _starters.STARTERS.get(name, "")
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return name


def starter_text(name: str) -> str:
    return _starters.starter_text(name)

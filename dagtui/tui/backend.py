"""The editor's single doorway to the core: validation, path analysis, saving and starters.

Everything the editor needs from `dagtui.graph.validate`, `dagtui.graph.paths`, `dagtui.graph.tomlio` and
`dagtui.graph.starters` goes through these few functions, so the rest of the TUI never cares how
the core spells them. Never imports textual.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagtui import safewrite
from dagtui.diagnostics import Diagnostic
from dagtui.graph.loader import LoadResult, load_text
from dagtui.graph.model import GEvalNode, Graph, TaskNode
from dagtui.graph.positions import Positions
from dagtui.record import Record
from dagtui.safewrite import ChangedOnDisk as ChangedOnDisk  # the app catches these
from dagtui.safewrite import ReadOnlyFile as ReadOnlyFile
from dagtui.safewrite import Stamp

# `dagtui.graph.validate`, `dagtui.graph.paths` and `dagtui.graph.starters` are imported where they are used:
# the editor paints its first frame (the tree of the file as loaded) before it validates,
# so their import cost is paid a moment after the tree is on screen.


@dataclass(eq=False, repr=False)
class Checked(Record):
    """Diagnostics plus path analysis for one graph version."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    paths: Any = None  # dagtui.graph.paths.PathAnalysis (None when it could not be computed)
    load: LoadResult | None = None


def check_text(text: str, file: str | None = None) -> Checked:
    """Load and fully check TOML text (used on open, reload and after save)."""
    from dagtui.graph import validate as _validate

    report = _validate.check_text(text, file=file)
    return Checked(list(report.diagnostics), report.paths, report.load)


def load(text: str, file: str | None = None) -> LoadResult:
    """Only parse `text` into a graph (no validation): enough to draw the tree."""
    return load_text(text, file)


def check_loaded(loaded: LoadResult) -> Checked:
    """Fully check text already parsed by `load`: the same findings as `check_text`,
    without parsing the file a second time."""
    from dagtui.graph import validate as _validate

    report = _validate.check_load(loaded)
    return Checked(list(report.diagnostics), report.paths, report.load)


def _path_part(nid: str, node: Any) -> tuple[object, ...]:
    verdicts = tuple((v.verdict, v.score, v.then) for v in getattr(node, "verdicts", []) or [])
    extra: object = None
    if isinstance(node, TaskNode):
        extra = tuple(node.children)
    elif isinstance(node, GEvalNode):
        extra = (bool(node.criteria), bool(node.evaluation_steps))
    return (nid, node.type, verdicts, extra)


def path_signature(graph: Graph) -> tuple[object, ...]:
    """Everything path analysis depends on. Typing in a criteria or a label leaves it
    unchanged, so the (costly, on big graphs) analysis is reused for such edits."""
    metric = graph.metric
    head = (metric.roots and tuple(metric.roots), metric.threshold, metric.strict)
    return (*head, *(_path_part(nid, node) for nid, node in graph.nodes.items()))


class _AnalysisMemo:
    """`paths.analyze` remembered for the last path signature.

    Kept although validation now runs in a worker: without it a 1,000-node text edit costs
    ~108 ms of CPU instead of ~60 (each keystroke re-analysing every path).
    """

    def __init__(self) -> None:
        self.key: tuple[object, ...] | None = None
        self.report: Any = None

    def analyze(self, graph: Graph, topo: Any = None, **kwargs: Any) -> Any:
        key = path_signature(graph)
        if key != self.key or kwargs:
            from dagtui.graph import paths as _paths

            self.report = _paths.analyze(graph, topo, **kwargs)
            self.key = key if not kwargs else None
        return self.report


_memo = _AnalysisMemo()


def check_graph(graph: Graph, positions: Positions | None = None) -> Checked:
    """Check an in-memory graph as edited (positions are those of the last loaded text).

    Path analysis is reused when only text changed (see `path_signature`).
    """
    from dagtui.graph import validate as _validate

    report = _validate.check_graph(graph, positions, analyzer=_memo.analyze)
    return Checked(list(report.diagnostics), report.paths)


def render(graph: Graph, original_text: str | None, renames: dict[str, str]) -> str:
    """The file text for `graph`, merged into `original_text` so comments survive."""
    from dagtui.graph import tomlio  # tomlkit is only needed on save: keep it out of startup

    return tomlio.render(graph, original_text, renames=renames or None)


def atomic_write(path: str | Path, text: str, *, expected: Stamp | None = None,
                 force: bool = False) -> Stamp:
    """Write as every dagtui command does (`dagtui.safewrite`): refuses a read-only file
    (`ReadOnlyFile`) and one no longer holding what `expected` says was read
    (`ChangedOnDisk`); returns the stamp of what was written."""
    return safewrite.atomic_write(path, text, expected=expected, force=force)


def read_text(path: str | Path) -> tuple[str, Stamp, bool]:
    """The file's text with `\n` line breaks (what the editor shows and merges into), the
    stamp a later save checks the disk against, and whether the file was CRLF throughout
    (its save is then written CRLF again, not silently converted)."""
    raw, stamp = safewrite.read_text(path, universal_newlines=False)
    crlf = "\r\n" in raw and raw.count("\r\n") == raw.count("\n")
    return raw.replace("\r\n", "\n").replace("\r", "\n"), stamp, crlf


def starter_names() -> list[str]:
    from dagtui.graph import starters as _starters

    return list(_starters.STARTERS)


def starter_description(name: str) -> str:
    from dagtui.graph import starters as _starters

    return _starters.starter_description(name)


def starter_text(name: str) -> str:
    from dagtui.graph import starters as _starters

    return _starters.starter_text(name)

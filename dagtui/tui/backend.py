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
from .. import tomlio as _tomlio
from .. import validate as _validate
from ..diagnostics import Diagnostic, sort_key
from ..loader import LoadResult
from ..model import Graph
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


def check_graph(graph: Graph, positions: Positions | None = None) -> Checked:
    """Check an in-memory graph as edited (positions are those of the last loaded text)."""
    run_all = getattr(_validate, "_run", None)
    if run_all is not None:
        # one pass gives diagnostics and the path report (validate() would analyse the paths
        # and then throw the report away; analyze() again would double the cost)
        diags, report = run_all(graph, positions, file=graph.path, base_dir=None, raw=None)
        return Checked(sorted(_validate._dedupe(diags), key=sort_key), report)
    diags = _validate.validate(graph, positions)
    return Checked(diags, _paths.analyze(graph))


def render(graph: Graph, original_text: str | None, renames: dict[str, str]) -> str:
    """The file text for `graph`, merged into `original_text` so comments survive."""
    return _tomlio.render(graph, original_text, renames=renames or None)


def atomic_write(path: str | Path, text: str) -> None:
    _tomlio.atomic_write(path, text)


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

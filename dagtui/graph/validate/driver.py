"""The entry points: validate a graph, a text, a file or a load, and keep the path report;
a failure of the validator itself becomes a DAG023 diagnostic."""

from __future__ import annotations

import os
import traceback
from typing import Any

from dagtui.diagnostics import Diagnostic, severity_of, sort_key
from dagtui.graph.loader import LoadResult, load_file, load_text
from dagtui.graph.model import Graph
from dagtui.graph.paths import PathAnalysis, analyze
from dagtui.graph.positions import Positions
from dagtui.graph.validate.base import Analyzer
from dagtui.graph.validate.cases import missing_cases_file
from dagtui.graph.validate.checker import Checker
from dagtui.graph.validate.models import misspelt_models
from dagtui.graph.validate.report import ValidationResult
from dagtui.run.schedule import Topology


def validate(
    graph: Graph,
    positions: Positions | None = None,
    *,
    file: str | None = None,
    base_dir: str | None = None,
    raw: dict[str, Any] | None = None,
) -> list[Diagnostic]:
    """Semantic errors and warnings of `graph` (docs/format.md lists the codes), sorted.

    `positions` (from the loader) place each diagnostic at its key or value; `raw` (the
    parsed TOML, `LoadResult.raw`) lets the validator skip what the loader already reported
    and map verdict numbers to the file. `base_dir` resolves json_schema files (default: the
    graph file's directory).
    """
    diags, _, _ = _run(graph, positions, file=file, base_dir=base_dir, raw=raw)
    return sorted(_dedupe(diags), key=sort_key)


def check_graph(
    graph: Graph,
    positions: Positions | None = None,
    *,
    file: str | None = None,
    base_dir: str | None = None,
    raw: dict[str, Any] | None = None,
    analyzer: Analyzer | None = None,
) -> ValidationResult:
    """Validate an in-memory graph (as edited) and keep the path report: `validate` plus
    `ValidationResult.paths` in one pass, for callers that have a graph rather than text.

    `analyzer` replaces `paths.analyze` (the editor passes a memo that reuses the last
    report while only text changed)."""
    file = file if file is not None else graph.path
    diags, paths, topology = _run(graph, positions, file=file, base_dir=base_dir, raw=raw,
                                  analyzer=analyzer)
    load = LoadResult(graph, [], positions=positions, raw=raw, file=file)
    return ValidationResult(load, sorted(_dedupe(diags), key=sort_key), paths, topology)


def check_text(text: str, file: str | None = None, *, base_dir: str | None = None) -> ValidationResult:
    """Load and validate TOML text: what the editor calls on every keystroke."""
    return check_load(load_text(text, file), base_dir=base_dir)


def check_file(path: str | os.PathLike[str]) -> ValidationResult:
    """Load and validate a graph file. Unreadable input is a DAG022 diagnostic, not an error.
    A graph file on disk is also checked for its `[metric].cases` file (DAG113) and for a
    misspelt judge model (DAG118)."""
    report = check_load(load_file(path))  # a FIFO or device is refused unread (dagtui.inputs)
    missing = file_checks(report.load)
    if missing:
        report.diagnostics = sorted([*report.diagnostics, *missing], key=sort_key)
    return report


def file_checks(load: LoadResult) -> list[Diagnostic]:
    """What is checked of a graph file on disk besides the graph itself: its
    `[metric].cases` file (DAG113) and its judge models (DAG118); not on the editor's every
    keystroke, where the problems are about the text being typed."""
    return missing_cases_file(load) + misspelt_models(load)


def check_load(load: LoadResult, *, base_dir: str | None = None) -> ValidationResult:
    """Validate what the loader produced (text already parsed): loader and semantic
    diagnostics together, plus the path report."""
    diags = list(load.diagnostics)
    paths: PathAnalysis | None = None
    topology: Topology | None = None
    if load.graph is not None:
        semantic, paths, topology = _run(
            load.graph, load.positions, file=load.file, base_dir=base_dir, raw=load.raw,
            prior=load.diagnostics,
        )
        # a more specific explanation replaces the loader's generic "unknown key"
        specific = {(d.node, d.field) for d in semantic if d.code == "DAG019"}
        diags = [d for d in diags if not (d.code == "DAG002" and (d.node, d.field) in specific)]
        diags.extend(semantic)
    return ValidationResult(load, sorted(_dedupe(diags), key=sort_key), paths, topology)


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for d in diags:
        key = (d.code, d.line, d.col, d.node, d.field, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _run(
    graph: Graph,
    positions: Positions | None,
    *,
    file: str | None,
    base_dir: str | None,
    raw: dict[str, Any] | None,
    prior: list[Diagnostic] | tuple[Diagnostic, ...] = (),
    analyzer: Analyzer | None = None,
) -> tuple[list[Diagnostic], PathAnalysis | None, Topology | None]:
    """One Checker pass: its diagnostics, path report and the Topology it built."""
    file = file if file is not None else graph.path
    if base_dir is None:
        base_dir = os.path.dirname(file) if file else os.getcwd()
    checker = Checker(graph, positions or Positions(), file, base_dir, raw, analyzer or analyze)
    try:
        diags, paths = checker.run(prior)
        return diags, paths, checker.topology_built
    except Exception as exc:  # a validator bug must not take the editor or CI down with it
        where = traceback.extract_tb(exc.__traceback__)[-1]
        diag = Diagnostic(
            "DAG023", severity_of("DAG023"),
            f"the validator itself failed ({type(exc).__name__}: {exc} at "
            f"{os.path.basename(where.filename)}:{where.lineno}); this is a dagtui bug, please "
            "report it with the graph file. The checks before the failure are shown.",
            file, 1, 1,
        )
        return [*checker.diags, diag], None, None

"""A graph read, parsed, validated and path-analysed at most once per process.

`dagtui run` used to read a graph file to ask whether it was a suite, read and parse it again
to load it, validate it (path analysis included), then validate it once more when the engine
was built. A `CheckedGraph` holds each stage's result the first time it is asked for: the
file is read and parsed when the object is made, and validation with path analysis runs on
the first look at `report` (a command that only needs the model, or only asks whether the
file is a suite, never pays for it). Every command that runs a graph, `dagtui validate`, the
Python API and the suite runner start from one, and an `Engine` built from one trusts its
check instead of repeating it.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING

from dagtui.diagnostics import Diagnostic, unreadable
from dagtui.graph.loader import GraphError, LoadResult, load_file
from dagtui.graph.model import Graph

if TYPE_CHECKING:
    from dagtui.graph.paths import PathAnalysis
    from dagtui.graph.validate import ValidationResult
    from dagtui.run.schedule import Topology


class CheckedGraph:
    """One graph's load, and its validation once asked for (see the module doc).

    `on_disk` says the graph came from a file, which is then also checked for its
    `[metric].cases` file (DAG113), as `dagtui validate` does.
    """

    def __init__(self, load: LoadResult, *, on_disk: bool = False) -> None:
        self.load = load
        self.on_disk = on_disk

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> CheckedGraph:
        """Read and parse the graph file at `path` (never raises: problems are diagnostics)."""
        return cls(load_file(path), on_disk=True)

    @classmethod
    def of_graph(cls, graph: Graph) -> CheckedGraph:
        """An in-memory graph (built in Python or as edited), validated without its text."""
        return cls(LoadResult(graph, file=graph.path))

    @classmethod
    def of_check(cls, graph: Graph, diagnostics: list[Diagnostic],
                 paths: PathAnalysis | None) -> CheckedGraph:
        """An in-memory graph with the check its holder made of it as it is now (the
        editor's latest), taken as this graph's check instead of validating again."""
        from dagtui.graph.validate import ValidationResult

        checked = cls.of_graph(graph)
        checked.__dict__["report"] = ValidationResult(checked.load, list(diagnostics), paths)
        return checked

    # -- what was read ------------------------------------------------------------------
    @property
    def file(self) -> str | None:
        return self.load.file

    @property
    def text(self) -> str | None:
        return self.load.text

    @property
    def graph(self) -> Graph | None:
        """The model, whatever its diagnostics (None when nothing usable was read)."""
        return self.load.graph

    @property
    def is_suite(self) -> bool:
        """True when the file is a suite of rules rather than a graph (see
        `dagtui.suite.sniff.is_suite_text`), from the tables of the parse already made
        (the text is parsed again only when it did not parse, to look at its headers)."""
        from dagtui.suite.sniff import is_suite_tables, is_suite_text

        if self.load.raw is not None:  # parsed: decided from the tables
            return is_suite_tables(self.load.raw)
        return self.load.text is not None and is_suite_text(self.load.text)

    # -- its check (computed on first use) ------------------------------------------------
    @cached_property
    def report(self) -> ValidationResult:
        """Loader and validator diagnostics with the path report, from one validation."""
        from dagtui.graph.validate import check_graph, check_load, file_checks

        if self.load.text is None and self.load.graph is not None:  # built, not read
            return check_graph(self.load.graph)
        report = check_load(self.load)
        if self.on_disk:
            missing = file_checks(self.load)
            if missing:
                from dagtui.diagnostics import sort_key

                report.diagnostics = sorted([*report.diagnostics, *missing], key=sort_key)
        return report

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.report.diagnostics

    @property
    def errors(self) -> list[Diagnostic]:
        return self.report.errors

    @property
    def warnings(self) -> list[Diagnostic]:
        return self.report.warnings

    @property
    def paths(self) -> PathAnalysis | None:
        return self.report.paths

    @property
    def topology(self) -> Topology | None:
        """The graph's compiled edges as its validation built them, for an `Engine` to take
        instead of compiling the graph again (None when validation did not build them)."""
        report = self.report
        return report.topology if report.graph is self.graph else None

    @property
    def ok(self) -> bool:
        """True when the graph can run (warnings allowed)."""
        return self.graph is not None and self.report.ok

    @property
    def unreadable(self) -> bool:
        """True when the file did not read or parse (exit 2 in every command): the
        loader's verdict, so asking does not validate."""
        return unreadable(self.load.diagnostics)

    def require(self) -> Graph:
        """The graph, checked; GraphError (carrying every diagnostic) when it cannot run."""
        if not self.ok or self.graph is None:
            raise GraphError(list(self.diagnostics))
        return self.graph

    def __repr__(self) -> str:
        return f"<CheckedGraph {self.file or '(in memory)'}>"

"""What one check of a graph text produced: the load, the diagnostics, the path analysis."""

from __future__ import annotations

from dataclasses import dataclass, field

from dagtui.diagnostics import Diagnostic, Severity, unreadable
from dagtui.graph.loader import LoadResult
from dagtui.graph.model import Graph
from dagtui.graph.paths import PathAnalysis
from dagtui.run.schedule import Topology


@dataclass
class ValidationResult:
    """Load + validate + path analysis of one graph text, for the CLI and the editor."""

    load: LoadResult
    diagnostics: list[Diagnostic] = field(default_factory=list)
    paths: PathAnalysis | None = None
    #: the graph's compiled edges as validation built them (None when it did not get that
    #: far): an Engine built from this check takes them instead of compiling the graph again
    topology: Topology | None = None

    @property
    def graph(self) -> Graph | None:
        return self.load.graph

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]

    @property
    def notes(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.INFO]

    @property
    def ok(self) -> bool:
        """True when the graph can run (warnings allowed)."""
        return not self.errors

    @property
    def unreadable(self) -> bool:
        """True when the input could not be read or parsed (DAG022, DAG001): exit 2, as in
        every command."""
        return unreadable(self.diagnostics)

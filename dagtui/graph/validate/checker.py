"""One validation pass: every group of checks in order, then path analysis when the graph's
shape allows it."""

from __future__ import annotations

from dagtui.diagnostics import Diagnostic
from dagtui.graph.paths import PathAnalysis
from dagtui.graph.validate.metric import MetricChecks
from dagtui.graph.validate.nodes import NodeChecks
from dagtui.graph.validate.path_checks import PathChecks
from dagtui.graph.validate.shape import ShapeChecks
from dagtui.run.schedule import Topology

#: errors that change the graph's shape: path analysis on top of them would only repeat them
#: (a dangling `then` makes every run through it "reach no leaf"), so path-derived
#: diagnostics wait until these are fixed
STRUCTURAL = frozenset({
    "DAG001", "DAG002", "DAG004", "DAG005", "DAG008", "DAG009", "DAG010", "DAG012",
    "DAG014", "DAG017", "DAG018", "DAG019", "DAG022",
})


class Checker(MetricChecks, NodeChecks, ShapeChecks, PathChecks):
    """One validation pass over one graph: collects positioned diagnostics."""

    def run(
        self, prior: list[Diagnostic] | tuple[Diagnostic, ...]
    ) -> tuple[list[Diagnostic], PathAnalysis | None]:
        graph = self.graph
        self.check_metric()
        self.check_ids()
        if not graph.nodes:
            if not any(d.is_error for d in prior):
                empty = self.raw is not None and not self.raw
                self.add("DAG018", ("the file holds no graph" if empty else "the graph has no "
                         "nodes") + "; add [metric] and at least one [nodes.<id>] table (for "
                         "example a task that extracts evidence and a binary judgement that "
                         "scores it)", ("nodes",))
            return self.diags, None
        for nid, node in graph.nodes.items():
            self.check_node(nid, node)
        self.check_roots()
        acyclic = self.check_cycles()
        self.check_gate_depth(acyclic)
        report: PathAnalysis | None = None
        blocked = any(d.code in STRUCTURAL for d in (*prior, *self.diags))
        try:
            report = self.analyzer(graph, self.topology())
        except Exception:  # pragma: no cover - analysis must never break validation
            report = None
        if report is not None and not blocked:
            self.check_paths(report)
        return self.diags, report

    def topology(self) -> Topology:
        """`Topology.of(graph)`, reusing the parents this pass already computed."""
        topo = Topology.of(self.graph, self.parents)
        self.topology_roots = topo.roots
        self.topology_built = topo
        return topo

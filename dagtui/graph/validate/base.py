"""The state one validation pass shares: the graph, where each key sits in the file, and
the raw TOML, with the helpers every check uses (`add` a positioned diagnostic, `require` a
field, map a verdict number to the file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dagtui.graph.loader import Collector
from dagtui.graph.model import MULTI_TURN_PARAMS, SINGLE_TURN_PARAMS, Graph, NodeBase
from dagtui.graph.paths import PathAnalysis, analyze
from dagtui.graph.positions import KeyPath, Positions
from dagtui.run.schedule import Topology
from dagtui.text import suggest

#: what path analysis looks like to the validator (`paths.analyze` or a memo of it)
Analyzer = Callable[[Graph, Topology], PathAnalysis]


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple | dict):
        return len(value) == 0
    return False


class CheckerBase:
    """One validation pass over one graph: collects positioned diagnostics."""

    def __init__(
        self,
        graph: Graph,
        positions: Positions,
        file: str | None,
        base_dir: str,
        raw: dict[str, Any] | None,
        analyzer: Analyzer = analyze,
    ) -> None:
        self.graph = graph
        self.analyzer = analyzer
        self.sink = Collector(file, positions, top_fallback=True)
        self.diags = self.sink.diags
        self.add = self.sink.add
        self.file = file
        self.base_dir = base_dir
        self.raw = raw if isinstance(raw, dict) else None
        raw_nodes = self.raw.get("nodes") if self.raw else None
        self.raw_nodes: dict[str, Any] = raw_nodes if isinstance(raw_nodes, dict) else {}
        self.multi = bool(graph.metric.multi_turn)
        self.mode_params = MULTI_TURN_PARAMS if self.multi else SINGLE_TURN_PARAMS
        self.other_params = SINGLE_TURN_PARAMS if self.multi else MULTI_TURN_PARAMS
        self.parents = graph.parents()
        #: dead nodes a DAG015 message already explains (no separate DAG102 for them)
        self.explained_dead: set[str] = set()
        self.dead: set[str] = set()
        self.topology_roots: tuple[str, ...] = ()
        #: the compiled edges path analysis walked (None until built): kept on the report so
        #: an Engine built from this check does not compile the graph again
        self.topology_built: Topology | None = None
        self.topo_order: list[str] = []
        self.verdict_index: dict[str, list[int]] = {}
        #: nodes whose verdict list the loader had to shorten (count checks would mislead)
        self.lossy_verdicts: set[str] = set()
        self._map_verdicts()

    # -- reporting: `self.add` is the shared Collector's (placed at path) ------------
    def vpath(self, nid: str, i: int, *rest: str) -> KeyPath:
        """File path of model verdict #i of `nid` (the loader may have skipped bad ones)."""
        index = self.verdict_index.get(nid)
        raw_i = index[i] if index and i < len(index) else i
        return ("nodes", nid, "verdicts", raw_i, *rest)

    def _map_verdicts(self) -> None:
        for nid, node in self.graph.nodes.items():
            if not hasattr(node, "verdicts"):
                continue
            raw_node = self.raw_nodes.get(nid)
            raw_vs = raw_node.get("verdicts") if isinstance(raw_node, dict) else None
            if not isinstance(raw_vs, list):
                continue
            kept = [
                i for i, item in enumerate(raw_vs)
                if isinstance(item, dict) and "verdict" in item
                and isinstance(item["verdict"], bool | str)
            ]
            self.verdict_index[nid] = kept
            if len(kept) != len(raw_vs):
                self.lossy_verdicts.add(nid)

    def raw_has(self, nid: str, key: str) -> bool:
        raw_node = self.raw_nodes.get(nid)
        return isinstance(raw_node, dict) and key in raw_node

    def missing(self, nid: str, key: str, value: Any) -> bool:
        """True when a required field is absent or empty (not when the loader dropped a
        wrongly typed value: that already has its own DAG004)."""
        if not _blank(value):
            return False
        if self.raw is not None and self.raw_has(nid, key):
            raw_value = self.raw_nodes[nid][key]
            return _blank(raw_value)
        return True

    def require(self, nid: str, node: NodeBase, key: str, why: str) -> None:
        value = getattr(node, "schema_" if key == "schema" else key, None)
        if self.missing(nid, key, value):
            state = "is empty" if self.raw_has(nid, key) else "is missing"
            self.add("DAG003", f"'{key}' {state}: {why}", ("nodes", nid, key), node=nid,
                     fld=key, at_value=self.raw_has(nid, key))

    def param_problem(self, p: str) -> str:
        if p in self.other_params:
            if self.multi:
                return (f"'{p}' is a single-turn param, but this graph is multi-turn "
                        f"(multi_turn = true); use one of: {', '.join(self.mode_params)}")
            return (f"'{p}' is a multi-turn param; set multi_turn = true in [metric] or use "
                    f"one of: {', '.join(self.mode_params)}")
        return (f"unknown param '{p}'{suggest(p, self.mode_params)}; use one of: "
                f"{', '.join(self.mode_params)}")

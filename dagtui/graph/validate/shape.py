"""Checks of the graph's shape: cycles (one DAG009 per strongly connected group, with the
shortest loop) and gates stacked too deep (DAG110).

Both come from one pass of Tarjan's algorithm (`dagtui.graph.cycles.components`): its
strongly connected groups are the cycles to report, and when there is none, its order is the
topological order the gate depth is counted in.
"""

from __future__ import annotations

from dagtui.graph.cycles import components, cycles
from dagtui.graph.model import TaskNode
from dagtui.graph.positions import KeyPath
from dagtui.graph.validate.base import CheckerBase

#: how many gates (judgement or check nodes) one path may pass before DAG110
MAX_GATE_DEPTH = 4


class ShapeChecks(CheckerBase):
    """Edges, topological order, cycles and gate depth."""

    def edges(self) -> dict[str, list[tuple[str, KeyPath]]]:
        """node -> [(target, path of the key/value that makes the edge)], known targets only."""
        out: dict[str, list[tuple[str, KeyPath]]] = {}
        for nid, node in self.graph.nodes.items():
            items: list[tuple[str, KeyPath]] = []
            if isinstance(node, TaskNode):
                for k, c in enumerate(node.children):
                    if c in self.graph.nodes:
                        items.append((c, ("nodes", nid, "children", k)))
            for i, v in enumerate(getattr(node, "verdicts", []) or []):
                if v.then is not None and v.then in self.graph.nodes:
                    items.append((v.then, self.vpath(nid, i, "then")))
            out[nid] = items
        return out

    def check_cycles(self) -> bool:
        """Report one cycle per strongly connected group. Returns True when acyclic (and
        then `topo_order` holds the nodes, each after its parents)."""
        nodes = self.graph.nodes
        # followed backwards (child -> parents) the groups are the same, and each comes
        # after the groups it points at: after its parents, a topological order as it stands
        found = components(nodes, self.parents)
        groups = cycles(found, self.parents)
        if not groups:
            self.topo_order = [c[0] for c in found]
            return True
        edges = self.edges()
        order = list(nodes)
        for group in groups:
            self.report_cycle(group, edges, order)
        return False

    def report_cycle(self, group: list[str], edges: dict[str, list[tuple[str, KeyPath]]],
                     order: list[str]) -> None:
        members = set(group)
        start = min(group, key=order.index)
        # shortest way back to `start` inside the group (breadth first)
        prev: dict[str, tuple[str, KeyPath]] = {}
        queue = [start]
        closing: tuple[str, KeyPath] | None = None
        while queue and closing is None:
            nxt = []
            for v in queue:
                for w, p in edges[v]:
                    if w == start:
                        closing = (v, p)
                        break
                    if w in members and w not in prev:
                        prev[w] = (v, p)
                        nxt.append(w)
                if closing:
                    break
            queue = nxt
        if closing is None:  # pragma: no cover - a strongly connected group always closes
            return
        last, path = closing
        chain = [last]
        while chain[-1] != start:
            chain.append(prev[chain[-1]][0])
        chain.reverse()
        shown = " → ".join([*chain, start])
        self.add("DAG009", f"cycle {shown}: these nodes wait for each other, so none of them "
                 "can ever run; remove one of the edges", path, node=last,
                 fld="children" if path[2] == "children" else "verdicts", at_value=True)

    def check_gate_depth(self, acyclic: bool) -> None:
        """DAG110: more than MAX_GATE_DEPTH judgement/check nodes one after another."""
        if not acyclic:
            return
        nodes = self.graph.nodes
        depth: dict[str, int] = {}
        best_parent: dict[str, str | None] = {}
        # the longest chain of gates into each node, in topological order: a node runs only
        # after every parent, so the deepest parent counts
        for n in self.topo_order:
            own = 1 if nodes[n].is_judgement else 0
            best, arg = 0, None
            for p in self.parents[n]:
                if depth.get(p, 0) > best:
                    best, arg = depth[p], p
            depth[n] = best + own
            best_parent[n] = arg
        too_deep = [n for n in nodes if depth.get(n, 0) > MAX_GATE_DEPTH
                    and nodes[n].is_judgement]
        if not too_deep:
            return
        position = {n: k for k, n in enumerate(nodes)}
        first = min(too_deep, key=lambda n: (depth[n], position[n]))
        chain = [first]
        while up := best_parent.get(chain[-1]):
            chain.append(up)
        gates = [n for n in reversed(chain) if nodes[n].is_judgement]
        more = (f" ({len(too_deep) - 1} more node(s) sit deeper than that)"
                if len(too_deep) > 1 else "")
        self.add("DAG110", f"'{first}' is gate number {depth[first]} on the path "
                 f"{' → '.join(gates)}; one early wrong verdict misroutes everything below "
                 f"it, so keep gates at most {MAX_GATE_DEPTH} deep (flatten, or settle rules in "
                 f"code checks){more}", ("nodes", first), node=first)

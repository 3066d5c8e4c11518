"""Checks of the `[metric]` table and of node ids: threshold, pinned model, roots, ids that
print alike or drive the terminal."""

from __future__ import annotations

import unicodedata

from dagtui.graph.model import Metric, field_spec
from dagtui.graph.validate.base import CheckerBase
from dagtui.text import escape_controls, is_unsafe_char, suggest


class MetricChecks(CheckerBase):
    """`[metric]`, roots and node ids."""

    def check_metric(self) -> None:
        m = self.graph.metric
        threshold = field_spec(Metric, "threshold")  # its range, as the model declares it
        if not threshold.in_bounds(m.threshold):
            self.add("DAG021", f"threshold {m.threshold:g} is outside {threshold.bounds_words}; "
                     "a run passes when "
                     "its score (0..1, the leaf's 0..10 divided by 10) is at least the "
                     "threshold", ("metric", "threshold"), fld="threshold", at_value=True)
        uses_judge = any(node.uses_llm for node in self.graph.nodes.values())
        if not (m.model and m.model.strip()) and uses_judge:
            self.add("DAG108", "no judge model is pinned in [metric] (model = \"...\"); the "
                     "model then comes from --model or DAGTUI_MODEL, and a silent model change "
                     "is a silent change of the rubric", ("metric",), fld="model")
        if m.roots is not None:
            if not m.roots:
                self.add("DAG018", "roots = [] declares no root, so nothing would run; name "
                         "the first node(s) or delete the line to use the nodes nothing points "
                         "to", ("metric", "roots"), fld="roots", at_value=True)
            for k, r in enumerate(m.roots):
                if r not in self.graph.nodes and r not in self.raw_nodes:
                    self.add("DAG008", f"roots names '{r}', which is not a node"
                             f"{suggest(r, self.graph.nodes)}", ("metric", "roots", k),
                             fld="roots", at_value=True)

    def check_ids(self) -> None:
        """Node ids reach terminals, prompts and file names: refuse characters that are
        invisible or drive the terminal (DAG024), and warn when two ids differ only in case
        or Unicode form, so they print alike but are different nodes (DAG112)."""
        seen: dict[str, str] = {}
        for nid in self.graph.nodes:
            bad = sorted({ch for ch in nid if is_unsafe_char(ch)})
            if bad:
                shown = ", ".join(f"U+{ord(ch):04X}" for ch in bad)
                self.add("DAG024", f"node id '{escape_controls(nid)}' contains {shown}: "
                         "control, zero-width and bidi characters are invisible or move the "
                         "cursor, so the id would not print as it is; rename the node",
                         ("nodes", nid), node=nid)
            key = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", nid).casefold())
            if key in seen:
                self.add("DAG112", f"node ids '{escape_controls(seen[key])}' and "
                         f"'{escape_controls(nid)}' differ only in case or Unicode form; they "
                         "read as one node but are two; rename one", ("nodes", nid), node=nid)
            else:
                seen[key] = nid

    def check_roots(self) -> None:
        m = self.graph.metric
        if m.roots is not None:
            for k, r in enumerate(m.roots):
                if r in self.graph.nodes and self.parents.get(r):
                    who = ", ".join(self.parents[r])
                    self.add("DAG019", f"'{r}' is declared a root but {who} points at it; a "
                             "root runs first and must have no parents", ("metric", "roots", k),
                             node=r, fld="roots", at_value=True)
        elif all(self.parents[nid] for nid in self.graph.nodes):
            self.add("DAG018", "every node has a parent, so no node can start the run; one "
                     "node must be a root (nothing points at it), or list them in [metric] "
                     "roots", ("nodes",))

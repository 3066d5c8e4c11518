"""Draw a suite's rule DAG with box characters (no textual: the TUI and scripts share it).

Rules sit in their dependency levels, top to bottom, one box each with the rule's name, its
label, its kind (code or LLM) and status; the boxes of a level are equally tall. An edge runs
from a dependency down to the rule that depends on it, ending in a bold arrow. Layout and
routing (one port per edge, a track of its own in the channel between levels, a point in each
level a long edge skips so nothing crosses a box) are `dagtui.graph.dagdraw`'s, shared with the
editor's graph view.

`focus` keeps only a rule with everything upstream and downstream of it, and `styles`
lets the caller mark rules (the focused one, its upstream, its downstream).
"""

from __future__ import annotations

from dagtui.graph.dagdraw import Edge, EdgeLook, Node, Picture, draw_dag
from dagtui.graph.dagdraw import neighbourhood as _reachable
from dagtui.suite.model import Suite
from dagtui.text import shorten

MAX_NAME = 28
DEPENDENCY = "dependency"
LOOKS = {DEPENDENCY: EdgeLook(arrow="bold")}


class SuiteDrawing(Picture):
    """Rows of text, style spans (row, start, end, style) and each rule's box (x, y, w, h)."""

    def rule_at(self, x: int, y: int) -> str | None:
        return self.box_at(x, y)


def _dependents(suite: Suite) -> dict[str, list[str]]:
    down: dict[str, list[str]] = {rid: [] for rid in suite.rules}
    for rid, rule in suite.rules.items():
        for dep in rule.depends_on:
            if dep in down:
                down[dep].append(rid)
    return down


def neighbourhood(suite: Suite, rule_id: str) -> set[str]:
    """The rule with everything it depends on and everything depending on it."""
    return _reachable(rule_id, _dependents(suite))


def box_lines(suite: Suite, rid: str, kinds: dict[str, str]) -> list[str]:
    rule = suite.rules[rid]
    lines = [shorten(rid, MAX_NAME)]
    if rule.label and rule.label != rid:
        lines.append(shorten(rule.label, MAX_NAME))
    lines.append(f"{kinds.get(rid, '?')} · {rule.status}")
    return lines


def draw_suite(
    suite: Suite,
    kinds: dict[str, str] | None = None,
    *,
    focus: str | None = None,
    styles: dict[str, str] | None = None,
) -> SuiteDrawing:
    """Lay out and draw the rule DAG (only `focus`'s neighbourhood when given)."""
    kinds = kinds or {}
    styles = styles or {}
    keep = neighbourhood(suite, focus) if focus in suite.rules else set(suite.rules)
    nodes = [
        Node(rid, box_lines(suite, rid, kinds), styles.get(rid) or _default_style(suite, rid))
        for rid in suite.rules if rid in keep
    ]
    if not nodes:
        return SuiteDrawing(["(no rules)"])
    edges = [Edge(dep, rid, DEPENDENCY) for rid in suite.rules if rid in keep
             for dep in suite.rules[rid].depends_on if dep in keep]
    pic = draw_dag(nodes, edges, LOOKS, even_heights=True)
    rows = pic.rows
    while rows and not rows[-1].strip():  # the channel under the last level stays empty
        rows = rows[:-1]
    return SuiteDrawing(rows, pic.spans, pic.boxes)


def _default_style(suite: Suite, rid: str) -> str:
    return "dim" if not suite.rules[rid].active else ""

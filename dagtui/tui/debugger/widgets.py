"""Widgets of the debugger screen: the path tree and the step panes.

The tree is built once per graph shape and relabelled in place as steps complete (a
relabel costs a fraction of a rebuild and keeps the cursor where the reader left it). After
a step only the rows that can have changed are relabelled: the nodes that just got a record
and those whose mark (next, running, breakpoint, override) moved, so a step costs the same
on a 5,000-node graph as on a 10-node one.
The panes are read-only TextAreas: scrollable, selectable and copyable, which a Static
is not.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import TabbedContent, TabPane, TextArea, Tree
from textual.widgets.tree import TreeNode

from dagtui.graph.model import Graph
from dagtui.kinds import scores
from dagtui.tui.debugger.run_model import (
    DONE,
    FAILED,
    NEXT,
    PENDING,
    RUNNING,
    SKIPPED,
    DebugRun,
    NodeStatus,
    answer_summary,
    show_value,
)
from dagtui.tui.keys import DEBUGGER_PANES, PATH_TREE_KEYS, bindings

#: (icon, style) per status
STATUS_LOOK: dict[str, tuple[str, str]] = {
    PENDING: ("·", "dim"),
    NEXT: ("▷", "bold"),
    RUNNING: ("●", "bold yellow"),
    DONE: ("✔", "green"),
    FAILED: ("✘", "bold red"),
    SKIPPED: ("–", "dim"),
}

#: (pane id, tab title)

#: a row of the tree: (node id, verdict index or None for the node row itself)
RowRef = tuple[str, int | None]


def node_label(nid: str, node_type: str, st: NodeStatus, width: int = 13,
               leaf: bool = False) -> Text:
    icon, style = STATUS_LOOK[st.status]
    text = Text()
    text.append("◉ " if st.breakpoint else "  ", style="bold red")
    text.append(f"{icon} ", style=style)
    text.append(f"{nid:<{width}}", style="bold" if st.status in (NEXT, RUNNING) else "")
    if st.record is not None:
        text.append(f" {answer_summary(st.record)}", style=style)
    elif st.status == RUNNING:
        text.append(" asking…", style=style)
    elif st.status == NEXT:
        text.append(" next", style="italic")
    elif st.status == SKIPPED:
        text.append(" skipped", style="dim")
    else:
        text.append(f" {node_type}", style="dim")
    if st.overridden:
        text.append(" ⚑", style="bold magenta")
    if leaf:
        text.append(" ◀ leaf", style="bold green")
    return text


def verdict_label(verdict: Any, then: str | None, score: float | None, chosen: bool,
                  reached: bool, decided: bool) -> Text:
    where = f"→ {then}" if then is not None else f"→ score {score}"
    style = "green" if chosen else ("dim" if decided else "")
    text = Text()
    text.append("✔ " if chosen else "  ", style=style)
    text.append(f"{show_value(verdict)} {where}", style=style)
    if reached:
        text.append(" ◀ leaf", style="bold green")
    return text


class PathTree(Tree[RowRef]):
    """Each node in run order, its verdicts beneath it; the path taken is lit up."""

    BINDINGS = bindings(PATH_TREE_KEYS)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("path", **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self._rows: dict[RowRef, TreeNode[RowRef]] = {}
        self._shape: tuple[Any, ...] | None = None
        self._width = 8
        self._verdict_rows: dict[str, int] = {}
        #: what the labels were drawn from: the run (identity and finished), the records
        #: labelled so far, and the marks shown
        self._drawn: tuple[Any, ...] | None = None
        self._drawn_records = 0
        self._drawn_marks: set[tuple[str, str]] = set()

    def build(self, graph: Graph, order: list[str], run: DebugRun | None = None) -> None:
        """One row per node and per verdict; labelled from `run` when given (so the first
        paint sets each label once: a relabel afterwards costs a redraw message per row,
        which on a 5,000-node graph is most of the time to open)."""
        shape = tuple((n, len(getattr(graph.nodes[n], "verdicts", []) or [])) for n in order)
        if shape == self._shape:
            return
        self._shape = shape
        self._drawn = None
        self._width = max((len(n) for n in order), default=8) + 1
        self._verdict_rows = {n: k for n, k in shape}
        self.clear()
        self._rows = {}
        result = run.result() if run is not None else None
        for nid in order:
            node = graph.nodes[nid]
            verdicts = getattr(node, "verdicts", None) or []
            labels = self._labels(run, nid, result) if run is not None else None
            row = self.root.add(labels[0] if labels else nid, data=(nid, None), expand=True,
                                allow_expand=bool(verdicts))
            self._rows[(nid, None)] = row
            for i, _v in enumerate(verdicts):
                self._rows[(nid, i)] = row.add_leaf(labels[i + 1] if labels else "",
                                                    data=(nid, i))
        if run is not None:
            self._drawn = run.view_key()
            self._drawn_records = run.record_count()
            self._drawn_marks = run.marks()

    def refresh_from(self, run: DebugRun) -> None:
        """Relabel the rows whose status can have changed since the last call (every row
        when the run was replaced, restarted or has just finished; no rebuild)."""
        result = run.result()
        drawn = run.view_key()
        marks = run.marks()
        if drawn != self._drawn:
            nodes: Any = self._verdict_rows  # every node with a row
        else:
            nodes = set(run.nodes_recorded_since(self._drawn_records))
            nodes.update(nid for _, nid in marks ^ self._drawn_marks)
        for nid in nodes:
            self._relabel(run, nid, result)
        self._drawn = drawn
        self._drawn_records = run.record_count()
        self._drawn_marks = marks

    def _relabel(self, run: DebugRun, nid: str, result: Any) -> None:
        row = self._rows.get((nid, None))
        labels = self._labels(run, nid, result)
        if row is None or labels is None:
            return
        row.set_label(labels[0])
        for idx, label in enumerate(labels[1:]):
            vrow = self._rows.get((nid, idx))
            if vrow is not None:
                vrow.set_label(label)

    def _labels(self, run: DebugRun, nid: str, result: Any) -> list[Text] | None:
        """The node row's label, then one per verdict row (None: not a node of the run)."""
        node = run.graph.nodes.get(nid)
        if node is None:
            return None
        st = run.status(nid)
        # a scored leaf has no verdict rows: the node row itself says it ended the path
        leaf = result is not None and result.leaf == nid and scores(node.type)
        out = [node_label(nid, node.type, st, self._width, leaf)]
        rec = st.record
        decided = rec is not None and rec.error is None
        verdicts = getattr(node, "verdicts", [])
        for idx in range(self._verdict_rows.get(nid, 0)):
            v = verdicts[idx]
            chosen = decided and rec is not None and rec.answer == v.verdict \
                and type(rec.answer) is type(v.verdict)
            reached = bool(chosen and v.score is not None and result is not None
                           and result.leaf == nid)
            out.append(verdict_label(v.verdict, v.then, v.score, chosen, reached, decided))
        return out

    # selects by node id, not by TreeNode as Tree's does (Textual itself never calls it)
    def select_node(self, nid: str) -> None:  # type: ignore[override]
        row = self._rows.get((nid, None))
        if row is not None:
            self.move_cursor(row)

    @property
    def selected_node(self) -> str | None:
        row = self.cursor_node
        if row is None or row.data is None:
            return None
        return row.data[0]


class PaneText(TextArea):
    """A read-only, selectable, copyable text pane (no bracket or line highlighting)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", read_only=True, soft_wrap=True, show_line_numbers=False,
                         highlight_cursor_line=False, **kwargs)
        self.match_cursor_bracket = False


class StepPanes(Vertical):
    """Prompt · Response · Evidence · Verdict · Usage of the selected step."""

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="pane-prompt", id="dbg-tabs"):
            for pid, title in DEBUGGER_PANES:
                with TabPane(title, id=f"pane-{pid}"):
                    yield PaneText(id=f"text-{pid}", classes="step-text")

    def switch(self, pid: str) -> None:
        self.query_one(TabbedContent).active = f"pane-{pid}"

    @property
    def active(self) -> str:
        """The pane shown: prompt, response, evidence, verdict or usage."""
        return (self.query_one(TabbedContent).active or "pane-prompt").removeprefix("pane-")

    def show(self, texts: dict[str, str]) -> None:
        for pid, text in texts.items():
            area = self.query_one(f"#text-{pid}", TextArea)
            if area.text != text:
                area.load_text(text)

    def text_of(self, pid: str) -> str:
        return self.query_one(f"#text-{pid}", TextArea).text

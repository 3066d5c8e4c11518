"""Widgets of the debugger screen: the path tree and the step panes.

The tree is built once per graph shape and relabelled in place as steps complete (a
relabel costs a fraction of a rebuild and keeps the cursor where the reader left it).
The panes are read-only TextAreas: scrollable, selectable and copyable, which a Static
is not.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import TabbedContent, TabPane, TextArea, Tree
from textual.widgets.tree import TreeNode

from ...model import Graph
from .run_model import (
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
PANES: list[tuple[str, str]] = [
    ("prompt", "Prompt"),
    ("response", "Response"),
    ("evidence", "Evidence"),
    ("verdict", "Verdict"),
    ("usage", "Usage"),
]

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


def verdict_label(verdict: Any, then: str | None, score: int | None, chosen: bool,
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

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="debugger.tree.down"),
        Binding("k", "cursor_up", "Up", show=False, id="debugger.tree.up"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("path", **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self._rows: dict[RowRef, TreeNode[RowRef]] = {}
        self._shape: tuple[Any, ...] | None = None

    def build(self, graph: Graph, order: list[str]) -> None:
        shape = tuple((n, len(getattr(graph.nodes[n], "verdicts", []) or [])) for n in order)
        if shape == self._shape:
            return
        self._shape = shape
        self.clear()
        self._rows = {}
        for nid in order:
            node = graph.nodes[nid]
            verdicts = getattr(node, "verdicts", None) or []
            row = self.root.add(nid, data=(nid, None), expand=True, allow_expand=bool(verdicts))
            self._rows[(nid, None)] = row
            for i, _v in enumerate(verdicts):
                self._rows[(nid, i)] = row.add_leaf("", data=(nid, i))

    def refresh_from(self, run: DebugRun) -> None:
        """Relabel every row from the run's state (cheap; no rebuild)."""
        result = run.result()
        width = max((len(n) for n in run.order), default=8) + 1
        for (nid, idx), row in self._rows.items():
            node = run.graph.nodes.get(nid)
            if node is None:
                continue
            st = run.status(nid)
            if idx is None:
                # a geval leaf has no verdict rows: the node row itself says it ended the path
                leaf = result is not None and result.leaf == nid and node.type == "geval"
                row.set_label(node_label(nid, node.type, st, width, leaf))
                continue
            v = node.verdicts[idx]  # type: ignore[attr-defined]
            rec = st.record
            decided = rec is not None and rec.error is None
            chosen = decided and rec.answer == v.verdict and type(rec.answer) is type(v.verdict)
            reached = bool(chosen and v.score is not None and result is not None
                           and result.leaf == nid)
            row.set_label(verdict_label(v.verdict, v.then, v.score, chosen, reached, decided))

    def select_node(self, nid: str) -> None:
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
            for pid, title in PANES:
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

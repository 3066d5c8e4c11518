"""The graph drawn with box characters (`dagtui.graph.layout`), scrollable both ways.

Drawing is redone only when the graph, the scope or the selection changed, and only while
the Graph tab is visible, so typing in a 1,000-node graph never pays for the picture.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.widgets import Static

from dagtui.graph.model import Graph
from dagtui.tui.keys import GRAPH_VIEW_KEYS, bindings

# `dagtui.graph.layout` is imported by the first `show` (the Graph tab shown): the editor's first
# frame never draws the graph, so it does not pay for the import.



def styled_text(drawing: Any) -> Text:
    """A box drawing (graph or suite: `.rows` of text plus `(row, start, end, style)`
    `.spans`) as one rich Text, each span applied to its row."""
    by_row: dict[int, list[tuple[int, int, str]]] = {}
    for y, start, end, style in drawing.spans:
        by_row.setdefault(y, []).append((start, end, style))
    text = Text()
    for y, row in enumerate(drawing.rows):
        line = Text(row.rstrip())
        for start, end, style in by_row.get(y, ()):
            if start < len(line):
                line.stylize(style, start, min(end, len(line)))
        text.append_text(line)
        text.append("\n")
    return text

class GraphView(ScrollableContainer):
    """Whole graph, or (focus mode) the selected node with its upstream and downstream."""

    # every scroll key carries an id, so F1 lists how to move around the drawing (the
    # container's own arrow bindings have none) and each can be remapped
    BINDINGS = bindings(GRAPH_VIEW_KEYS)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.focus_mode = False
        self._key: object = None
        self.drawing_text = ""
        #: where each node's box is in the drawing: (x, y, width, height)
        self.boxes: dict[str, tuple[int, int, int, int]] = {}
        #: the node the drawing starts from (the first root drawn), for `reveal_root`
        self.root: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="graph-legend")
        yield Static(id="graph-canvas")

    def show(self, graph: Graph, selected: str | None,
             badges: dict[str, tuple[int, int]] | None = None) -> None:
        key = (id(graph.nodes), tuple(graph.nodes), self.focus_mode, selected,
               tuple(sorted((badges or {}).items())), _graph_sig(graph))
        if key == self._key:
            return
        from dagtui.graph.layout import LEGEND, draw

        if self._key is None:
            self.query_one("#graph-legend", Static).update(Text(LEGEND, style="dim"))
        self._key = key
        focus = selected if self.focus_mode else None
        drawing = draw(graph, focus, badges=badges, selected=selected)
        text = styled_text(drawing)
        self.drawing_text = drawing.text()
        self.boxes = dict(drawing.boxes)
        self.root = next((r for r in graph.roots() if r in self.boxes), None)
        title = "Graph · " + (f"{selected}: upstream + downstream" if focus else "whole graph")
        self.border_title = title
        self.query_one("#graph-canvas", Static).update(text)
        if selected and selected in drawing.boxes:
            x, y, w, h = drawing.boxes[selected]
            self.call_after_refresh(self._reveal, x, y, w, h)

    def reveal_root(self) -> None:
        """Scroll so the root's box is in view (the top, and the root's column).

        The enlarged drawing opens here: the small view follows the selection, which can
        leave the top of the graph, where a reader starts, off screen."""
        self.scroll_to(y=0, animate=False)
        if self.root is not None and self.root in self.boxes:
            x, _y, w, _h = self.boxes[self.root]
            region_w = self.scrollable_content_region.width
            if not (self.scroll_x <= x and x + w <= self.scroll_x + region_w):
                self.scroll_to(x=max(0, x - 4), animate=False)
        else:
            self.scroll_to(x=0, animate=False)

    def _reveal(self, x: int, y: int, w: int, h: int) -> None:
        region_w, region_h = self.scrollable_content_region.size
        if not (self.scroll_x <= x and x + w <= self.scroll_x + region_w):
            self.scroll_to(x=max(0, x - 4), animate=False)
        if not (self.scroll_y <= y + 1 and y + h + 1 <= self.scroll_y + region_h):
            self.scroll_to(y=max(0, y - 1), animate=False)


def _graph_sig(graph: Graph) -> int:
    """Cheap change detector: node objects are replaced on every edit (copy-on-write)."""
    return hash(tuple(id(n) for n in graph.nodes.values()))

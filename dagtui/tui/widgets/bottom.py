"""The editor's bottom panels as one widget: problems, paths and the graph drawing, as tabs.

The editor mounts them right after its first frame (`EditorScreen._mount_bottom`) and imports
this module only then: a tabbed panel holding two data tables costs more to import, build
and style than the rest of the screen together, and none of it has anything to show before
the first validation anyway.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TabbedContent, TabPane

from dagtui.tui.widgets.graph_view import GraphView
from dagtui.tui.widgets.panels import PathsTable, ProblemsTable

#: the panels' stylesheet (`DagtuiScreen.read_css` reads it before they mount)
CSS_PATH = Path(__file__).with_name("bottom.tcss")


class BottomPanels(TabbedContent):
    """Tabs `problems`, `paths` and `graph`; the widgets are reachable as attributes."""

    def __init__(self) -> None:
        super().__init__(id="bottom", initial="problems")
        self.problems = ProblemsTable(id="problems-table")
        self.paths = PathsTable(id="paths-table")
        self.graph = GraphView(id="graph-view")
        for title, pane_id, content in (("Problems", "problems", self.problems),
                                        ("Paths", "paths", self.paths),
                                        ("Graph", "graph", self.graph)):
            self.compose_add_child(TabPane(title, content, id=pane_id))

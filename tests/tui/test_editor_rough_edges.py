"""The rough edges a keyboard user hits, each tried with keys as a new user would."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagtui.tui.app import EditorApp
from dagtui.tui.screens.help import HelpScreen
from dagtui.tui.widgets.graph_tree import GraphTree
from dagtui.tui.widgets.graph_view import GraphView
from dagtui.tui.widgets.node_form import NodeForm

from .conftest import make_app

pytestmark = pytest.mark.timeout(60)

SMALL = (80, 24)


def header_text(app: EditorApp) -> str:
    """The header and status line as shown (where 'modified' appears)."""
    return " ".join(str(w.render()) for w in app.query("#header-file, #status"))


async def test_enlarged_graph_takes_focus_opens_at_the_root_and_scrolls(
        graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SMALL) as pilot:
        app.query_one(GraphTree).select_node_id("order")  # a node near the bottom
        await pilot.pause()
        await pilot.press("g")
        await pilot.pause()
        view = app.query_one(GraphView)
        await pilot.press("g")
        await pilot.pause()
        await pilot.pause()
        assert app.graph_big and app.focused is view
        assert view.scroll_y == 0 and view.max_scroll_y > 0
        await pilot.press("j", "down")
        await pilot.pause()
        assert view.scroll_y == 2
        await pilot.press("pagedown")
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        await pilot.press("home")
        await pilot.pause()
        assert view.scroll_y == 0
        await pilot.press("escape")
        await pilot.pause()
        assert not app.graph_big and isinstance(app.focused, GraphTree)


async def test_help_names_the_way_into_the_graph_view(graph_file: Path) -> None:
    app: EditorApp = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        titles = [title for title, _ in app.screen.groups]
        assert any("g g" in t for t in titles)
        listed = {b.id: b.key for _, bindings in app.screen.groups for b in bindings}
        for bid in ("graph.down", "graph.up", "graph.page_down", "graph.page_up",
                    "graph.home"):
            assert bid in listed, bid
        assert "down" in listed["graph.down"] and "j" in listed["graph.down"]


async def test_after_choosing_a_starter_the_cursor_is_on_the_first_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path / "new.toml")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("down", "enter")  # the second starter, not the blank one
        await pilot.pause()
        await pilot.pause()
        tree = app.query_one(GraphTree)
        first = app.state.graph.roots()[0]
        assert app.focused is tree
        assert tree.current is not None and tree.current.node == first
        assert app.state.selected == first
        line = tree.cursor_line
        await pilot.press("j")
        await pilot.pause()
        assert tree.cursor_line == line + 1  # moves down from the top, not to the last row


async def test_undoing_every_keystroke_in_a_field_leaves_the_file_unmodified(
        graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        app.query_one(GraphTree).select_node_id("present")
        await pilot.pause()
        area = app.query_one(NodeForm).field("criteria")
        area.focus()
        await pilot.pause()
        before = app.state.graph.nodes["present"].criteria
        await pilot.press("end", "x", "y")
        await pilot.pause()
        assert app.state.dirty and "modified" in header_text(app)
        await pilot.press("ctrl+z", "ctrl+z")  # the text area's own undo, key by key
        await pilot.pause()
        assert app.state.graph.nodes["present"].criteria == before
        assert not app.state.dirty
        assert "modified" not in header_text(app)

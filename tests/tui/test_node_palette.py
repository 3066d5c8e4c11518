"""ctrl+p finds a node by its id or by its label (the name the tree shows), and enter
jumps to it: in the editor (the tree and the form) and in the debugger (the path tree and
the step panes), at 80x24 and 120x36."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagtui.judges.labels import LabelsJudge
from dagtui.tui.widgets.graph_tree import GraphTree
from tui.conftest import make_app
from tui.debugger_helpers import meeting_app, settle
from tui.test_debugger_palette import palette

pytestmark = pytest.mark.timeout(120)

SIZES = [(80, 24), (120, 36)]


@pytest.mark.parametrize("size", SIZES)
async def test_ctrl_p_in_the_editor_finds_a_node_by_label_and_by_id(
        graph_file: Path, size: tuple[int, int]) -> None:
    from dagtui.tui.widgets.node_form import NodeForm

    app = make_app(graph_file)
    async with app.run_test(size=size) as pilot:
        assert app.query_one(GraphTree).current.node != "order"
        # "Heading order" is order's label: no id or command spells it
        await palette(app, pilot, "heading order", "order · non_binary · Heading order")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        assert app.query_one(GraphTree).current.node == "order"
        assert app.editor.state.selected == "order" and app.query_one(NodeForm).node_id == "order"
        listed = await palette(app, pilot, "present", "present · binary")
        assert any(title.startswith("Headings present") or "Headings present" in title
                   for title, _ in listed[:1])
        await pilot.press("enter")
        await pilot.pause()
        assert app.editor.state.selected == "present"


@pytest.mark.parametrize("size", SIZES)
async def test_ctrl_p_in_the_debugger_selects_the_node_in_the_path_tree(
        size: tuple[int, int]) -> None:
    from dagtui.tui.debugger.widgets import PathTree

    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=size) as pilot:
        screen = await settle(app, pilot)
        assert screen.query_one(PathTree).selected_node == "extract"
        await palette(app, pilot, "headings present", "present · binary")
        await pilot.press("enter")
        await pilot.pause()
        assert screen.query_one(PathTree).selected_node == "present"
        assert screen.selected == "present"
        assert str(screen.query_one("#dbg-right").border_title).startswith("present")

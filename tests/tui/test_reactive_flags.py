"""The UI flags that are reactives, driven by keys: each change shows without a manual redraw.

Editor: `modified` (the header's ● and "modified") and `read_only` (the header, and the
footer's keys: a file that does not parse hides the editing keys until ctrl+r reads a fixed
one). Debugger: `selected` (the step panes follow the tree's cursor and each step) and
`viewing` (a saved trace's footer offers no stepping; esc returns to the live run's keys).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Footer

from dagtui.judges.labels import LabelsJudge
from dagtui.tui.debugger.widgets import StepPanes
from tui.conftest import SIZE, make_app
from tui.debugger_helpers import SIZE as DEBUGGER_SIZE
from tui.debugger_helpers import meeting_app, select, settle
from tui.test_editor_files import BROKEN
from tui.test_editor_rough_edges import focus_criteria, header_text

pytestmark = pytest.mark.timeout(60)


def footer_actions(screen) -> set[str]:  # type: ignore[no-untyped-def]
    """The actions the footer shows keys for, as drawn now (its keys, by type name)."""
    return {key.action for key in screen.query_one(Footer).query("FooterKey")}


async def test_typing_sets_the_modified_marker_and_undo_to_the_saved_text_clears_it(
        graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await focus_criteria(pilot, app)
        assert not app.editor.modified and "saved" in header_text(app)
        await pilot.press("end", "x")
        await pilot.pause()
        assert app.editor.modified and "●" in str(app.query_one("#header").render())
        assert "modified" in header_text(app)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert not app.editor.modified and "●" not in str(app.query_one("#header").render())
        assert "modified" not in header_text(app) and "saved" in header_text(app)


async def test_read_only_hides_the_editing_keys_until_a_fixed_file_is_reloaded(
        graph_file: Path) -> None:
    graph_file.write_text(BROKEN)
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.editor.read_only and "read-only" in header_text(app)
        assert "add_node" not in footer_actions(app.screen)
        graph_file.write_text(BROKEN.replace('"binary\n', '"binary"\n'))
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.pause()
        assert not app.editor.read_only and "read-only" not in header_text(app)
        assert "add_node" in footer_actions(app.screen)  # the footer followed the flag


async def test_stepping_and_moving_the_cursor_redraw_the_step_panes() -> None:
    app = meeting_app(LabelsJudge(), case="intro and body swapped")
    async with app.run_test(size=DEBUGGER_SIZE) as pilot:
        screen = await settle(app, pilot)
        panes = screen.query_one(StepPanes)
        assert screen.selected == "extract" and "not run yet" in panes.text_of("response")
        await pilot.press("n")
        screen = await settle(app, pilot)
        assert screen.selected == "extract"
        assert "not run yet" not in panes.text_of("response")  # the same node, its new record shown
        assert "extract" in str(screen.query_one("#dbg-right").border_title)
        await select(app, pilot, "present")
        assert screen.selected == "present" and "not run yet" in panes.text_of("response")
        assert "present" in str(screen.query_one("#dbg-right").border_title)
        await select(app, pilot, "extract")
        assert screen.selected == "extract" and "not run yet" not in panes.text_of("response")


async def test_viewing_a_trace_swaps_the_footer_keys_and_esc_brings_them_back(
        tmp_path: Path) -> None:
    app = meeting_app(LabelsJudge(), case="intro and body swapped")
    async with app.run_test(size=DEBUGGER_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        path = screen.save_trace(tmp_path / "t.json")
        assert "restart" in footer_actions(screen)
        assert screen.open_trace(path)
        await pilot.pause()
        assert screen.viewing is not None
        assert "restart" not in footer_actions(screen) and "step" not in footer_actions(screen)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.pause()
        assert screen.viewing is None and app.screen is screen
        assert "restart" in footer_actions(screen)

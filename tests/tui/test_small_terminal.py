"""At 80x24 (and at 120x36) the panes give way instead of cutting what a person needs:
the editor's header keeps the model, its footer F1 and ctrl+p, the tree an id's label,
F1 its binding-id column, the paths table its result and calls; the debugger's step panes
keep their tabs, its footer esc, ? and ctrl+s; a dialog's buttons are never cut."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget

from dagtui.judges.labels import LabelsJudge
from tui.conftest import make_app
from tui.debugger_helpers import copied_graph, meeting_app, settle

pytestmark = pytest.mark.timeout(120)

SIZES = [(80, 24), (120, 36)]


def inside(inner: Widget, outer: Widget | tuple[int, int]) -> bool:
    """True when `inner` is drawn whole within `outer` (a widget, or the screen's size)."""
    r = inner.region
    if isinstance(outer, tuple):
        return r.x >= 0 and r.right <= outer[0] and r.bottom <= outer[1]
    o = outer.region
    return o.x <= r.x and r.right <= o.right and o.y <= r.y and r.bottom <= o.bottom


def footer_keys(screen: Any, size: tuple[int, int]) -> set[str]:
    """The footer keys shown whole on `screen` ("^s", "esc", ...)."""
    return {key.key_display for key in screen.query("FooterKey")
            if key.region.width and inside(key, size)}


@pytest.mark.parametrize("size", SIZES)
async def test_the_editor_keeps_the_model_f1_palette_labels_and_path_results(
        graph_file: Path, size: tuple[int, int]) -> None:
    from dagtui.tui.screens.help import HelpScreen
    from dagtui.tui.widgets.graph_tree import GraphTree
    from dagtui.tui.widgets.panels import PathsTable

    app = make_app(graph_file)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        header = app.query_one("#header")
        assert "gpt-4.1-mini" in str(header.render()) and inside(header, size)
        assert {"f1", "^p", "^s", "f5"} <= footer_keys(app.screen, size)
        tree = app.query_one(GraphTree)
        label = next(text for key, text in ((k, tree.row_label(k)) for k in tree._rows)
                     if key[0] == "node" and key[1] == "present")
        assert "Headings present" in label
        # narrow, the row leaves out the type (the icon and the form say it) to fit
        assert ("binary" in label) == (size[0] >= 110)
        indent = tree.guide_depth + 2  # one level in, then its fold mark
        assert indent + len(label) <= tree.scrollable_content_region.width
        await pilot.press("t")
        await pilot.pause()
        table = app.query_one(PathsTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[:4] == ["#", "score", "result", "calls"]
        short = sum(c.get_render_width(table) for c in list(table.columns.values())[:4])
        assert short <= table.size.width
        await pilot.press("escape", "f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert inside(app.screen.query_one(".dialog-help"), size)


@pytest.mark.parametrize("size", SIZES)
async def test_the_debugger_keeps_its_tabs_and_esc_help_and_save_in_the_footer(
        size: tuple[int, int]) -> None:
    from textual.widgets import Tab

    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=size) as pilot:
        await pilot.press("n")
        screen = await settle(app, pilot)
        assert {"esc", "?", "n", "c", "^s"} <= footer_keys(screen, size)
        right = screen.query_one("#dbg-right")
        tabs = list(screen.query(Tab))
        assert [str(t.label) for t in tabs] == ["Prompt", "Response", "Evidence", "Verdict",
                                                "Usage"]
        assert all(inside(t, right) for t in tabs)
        assert right.size.width >= 46  # was 36 at 80 columns
        await pilot.press("4")  # the verdict pane is reachable by its key as before
        await pilot.pause()
        assert screen.query_one("#dbg-tabs").active == "pane-verdict"


@pytest.mark.parametrize("size", SIZES)
async def test_leaving_the_debugger_shows_every_button_whole(
        tmp_path: Path, size: tuple[int, int]) -> None:
    from textual.widgets import Button

    from dagtui.tui.screens.dialogs import ChoiceScreen

    app = copied_graph(tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = await settle(app, pilot)
        screen.unsaved_edits.append("present.criteria")
        screen.edit_values[("present", "criteria")] = "Are all three there?"
        await pilot.press("escape")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceScreen)
        box = dialog.query_one(".dialog")
        buttons = list(dialog.query(Button))
        assert [str(b.label) for b in buttons] == [
            "Write the edits to meeting_summary.toml and leave", "Leave without saving",
            "Stay"]
        for button in buttons:
            assert inside(button, box), button.label
            assert button.content_size.width >= len(str(button.label))
        await pilot.press("escape")  # stay
        await pilot.pause()
        assert app.screen is screen

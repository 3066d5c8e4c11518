"""The node form a keyboard user types into: the focused field and its name stand out,
ctrl+a selects the whole value in every field, the add-node dialog chooses the type, and a
verdict row reads `score 0`, `then order` with a `then` box wide enough, at 80x24 and
120x36."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Label

from dagtui.tui.screens.dialogs import AddNodeScreen
from dagtui.tui.widgets.node_form import NodeForm
from tui.conftest import make_app
from tui.test_editor_actions import goto_row, node_key, verdict_key

pytestmark = pytest.mark.timeout(120)

SIZES = [(80, 24), (120, 36)]


def name_label(widget) -> Label:  # type: ignore[no-untyped-def]
    """The field-name label of the row holding `widget`."""
    row = next(a for a in widget.ancestors if a.has_class("field-row"))
    return row.query_one(".field-name", Label)


@pytest.mark.parametrize("size", SIZES)
async def test_the_focused_field_and_its_name_stand_out(
        graph_file: Path, size: tuple[int, int]) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=size) as pilot:
        await goto_row(pilot, app, node_key("present", "extract"))
        form = app.query_one(NodeForm)
        label, criteria = form.field("label"), form.field("criteria")
        label.focus()
        await pilot.pause()
        assert name_label(label).styles.text_style.bold
        assert not name_label(criteria).styles.text_style.bold
        lit = label.styles.background
        criteria.focus()
        await pilot.pause()
        assert criteria.styles.background == lit != label.styles.background
        assert name_label(criteria).styles.text_style.bold
        assert not name_label(label).styles.text_style.bold


@pytest.mark.parametrize("size", SIZES)
async def test_ctrl_a_selects_all_in_one_line_and_long_fields_alike(
        graph_file: Path, size: tuple[int, int]) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=size) as pilot:
        await goto_row(pilot, app, node_key("present", "extract"))
        form = app.query_one(NodeForm)
        form.field("label").focus()
        await pilot.press("end", "ctrl+a", "N", "e", "w")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].label == "New"  # replaced, not prefixed
        form.field("criteria").focus()
        await pilot.press("ctrl+a", "W", "h", "y", "?")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].criteria == "Why?"
        form.verdict_widget(1, "then").focus()
        await pilot.press("end", "ctrl+a", "backspace")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].verdicts[1].then is None


@pytest.mark.parametrize("size", SIZES)
async def test_the_add_node_dialog_chooses_the_type(graph_file: Path,
                                                     size: tuple[int, int]) -> None:
    from textual.widgets import OptionList

    app = make_app(graph_file)
    async with app.run_test(size=size) as pilot:
        await goto_row(pilot, app, node_key("extract"))
        await pilot.press("a")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, AddNodeScreen)
        types = dialog.query_one("#add-type", OptionList)
        assert types.region.bottom <= size[1] and types.option_count == 6
        assert dialog.node_type == "non_binary"  # under a task: a choice among labels
        await pilot.press("down")  # the id keeps the focus; the arrows choose the type
        assert dialog.node_type == "check"
        await pilot.press("up", "up")
        assert dialog.node_type == "binary"
        await pilot.press("ctrl+u", *"gate2", "enter")
        await pilot.pause()
        assert app.editor.state.graph.nodes["gate2"].type == "binary"
        assert "gate2" in app.editor.state.graph.nodes["extract"].children


@pytest.mark.parametrize("size", SIZES)
async def test_a_verdict_row_reads_score_and_then_with_room(
        graph_file: Path, size: tuple[int, int]) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=size) as pilot:
        await goto_row(pilot, app, verdict_key("present", 1, "order"))
        form = app.query_one(NodeForm)
        then = form.verdict_widget(1, "then")
        score = form.verdict_widget(1, "score")
        then.focus()
        await pilot.pause()
        form.scroll_to_widget(then, animate=False)
        await pilot.pause()
        row = then.parent
        labels = list(row.query(".v-label"))
        assert [str(lbl.render()) for lbl in labels] == ["score", "then"]
        for lbl in labels:  # a column of space either side: not `score0`, `thennode id`
            assert lbl.styles.padding.left >= 1 and lbl.styles.padding.right >= 1
            assert lbl.region.right <= score.region.x or lbl.region.x >= score.region.right
        assert then.region.width >= 10 and then.value == "order"
        assert then.region.right <= form.region.right  # on screen, not pushed out of sight
        assert score.region.width >= 5

"""ctrl+s when the file on disk is read-only or was changed by someone else since it was read:
the editor says so and writes nothing unless the person chooses to overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagtui.tui.screens.dialogs import ChoiceScreen
from tui.conftest import SIZE, make_app

pytestmark = pytest.mark.timeout(60)


async def test_save_over_a_change_on_disk_asks_and_overwrites_only_when_told(
        graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        app.editor.state.add_verdict("order")
        await app.editor.sync(rebuild_form=True)
        theirs = graph_file.read_text().replace('"Heading order"', '"Theirs"')
        graph_file.write_text(theirs)
        await app.editor.action_save()
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        assert "changed on disk" in app.screen.title_text
        await pilot.press("enter")  # "Don't save" is focused first
        await pilot.pause()
        assert graph_file.read_text() == theirs and app.editor.state.dirty
        await app.editor.action_save()
        await pilot.pause()
        app.screen.query_one("#overwrite").press()
        await pilot.pause()
        await pilot.pause()
        assert not app.editor.state.dirty
        assert graph_file.read_text() != theirs
        assert len(app.editor.state.graph.nodes["order"].verdicts) == 4


async def test_save_of_a_read_only_file_shows_an_error(graph_file: Path) -> None:
    graph_file.chmod(0o444)
    before = graph_file.read_text()
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        app.editor.state.add_verdict("order")
        await app.editor.sync(rebuild_form=True)
        await app.editor.action_save()
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("read-only" in m for m in messages), messages
        assert graph_file.read_text() == before and app.editor.state.dirty


async def keep_my_edits_then_save(app, pilot, graph_file: Path, theirs: str) -> None:  # type: ignore[no-untyped-def]
    """The file changes on disk while edits are unsaved: "Keep my edits", then ctrl+s."""
    graph_file.write_text(theirs)
    await app.editor._poll_disk()
    await pilot.pause()
    assert isinstance(app.screen, ChoiceScreen)
    await pilot.press("enter")  # keep my edits (focused first)
    await pilot.pause()
    assert app.screen is app.screen_stack[0]
    await pilot.press("ctrl+s")
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_keep_my_edits_then_save_asks_and_merges_both_changes(
        graph_file: Path, size: tuple[int, int]) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=size) as pilot:
        app.editor.state.add_verdict("order")  # ours: a fourth verdict on order
        await app.editor.sync(rebuild_form=True)
        theirs = graph_file.read_text().replace('"Headings present"', '"Theirs"')
        await keep_my_edits_then_save(app, pilot, graph_file, theirs)
        # before, this save silently overwrote their change (a toast only)
        assert isinstance(app.screen, ChoiceScreen), app.notices[-1:]
        assert graph_file.read_text() == theirs
        app.screen.query_one("#merge").press()
        await pilot.pause()
        await pilot.pause()
        assert not app.editor.state.dirty
        text = graph_file.read_text()
        assert 'label = "Theirs"' in text  # their change kept
        assert len(app.editor.state.graph.nodes["order"].verdicts) == 4  # and ours
        assert text.count("verdict =") == theirs.count("verdict =") + 1
        assert "# The gate:" in text  # comments survive the merge
        assert app.editor.state.graph.nodes["present"].label == "Theirs"


async def test_a_merge_of_the_same_node_changed_twice_is_refused(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        app.editor.state.add_verdict("order")
        await app.editor.sync(rebuild_form=True)
        theirs = graph_file.read_text().replace('"Heading order"', '"Theirs"')
        await keep_my_edits_then_save(app, pilot, graph_file, theirs)
        app.screen.query_one("#merge").press()
        await pilot.pause()
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceScreen)  # asked again, saying why
        assert "Cannot merge: order" in dialog.message
        assert not dialog.query("#merge")  # overwrite, reload or don't save
        assert graph_file.read_text() == theirs and app.editor.state.dirty

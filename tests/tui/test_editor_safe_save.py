"""ctrl+s when the file on disk is read-only or was changed by someone else since it was read:
the editor says so and writes nothing unless the person chooses to overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagtui.tui.screens.dialogs import ChoiceScreen

from .conftest import SIZE, make_app

pytestmark = pytest.mark.timeout(60)


async def test_save_over_a_change_on_disk_asks_and_overwrites_only_when_told(
        graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        app.state.add_verdict("order")
        await app.sync(rebuild_form=True)
        theirs = graph_file.read_text().replace('"Heading order"', '"Theirs"')
        graph_file.write_text(theirs)
        await app.action_save()
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        assert "changed on disk" in app.screen.title_text
        await pilot.press("enter")  # "Don't save" is focused first
        await pilot.pause()
        assert graph_file.read_text() == theirs and app.state.dirty
        await app.action_save()
        await pilot.pause()
        app.screen.query_one("#overwrite").press()
        await pilot.pause()
        await pilot.pause()
        assert not app.state.dirty
        assert graph_file.read_text() != theirs
        assert len(app.state.graph.nodes["order"].verdicts) == 4


async def test_save_of_a_read_only_file_shows_an_error(graph_file: Path) -> None:
    graph_file.chmod(0o444)
    before = graph_file.read_text()
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        app.state.add_verdict("order")
        await app.sync(rebuild_form=True)
        await app.action_save()
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("read-only" in m for m in messages), messages
        assert graph_file.read_text() == before and app.state.dirty

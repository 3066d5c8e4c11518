"""The editor and the file on disk: starters, unparsable files, reload, outside changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea

from dagtui.tui.screens.dialogs import ChoiceScreen, StarterScreen
from dagtui.tui.state import EditorState, EditRefused
from tui.conftest import SIZE, make_app
from tui.test_editor_actions import problems_shown, tree_text

pytestmark = pytest.mark.timeout(60)

BROKEN = """\
# a graph with a syntax error on line 6
[metric]
name = "Broken"

[nodes.a]
type = "binary
criteria = "x"
"""


async def test_missing_file_offers_starters_and_saves_on_ctrl_s(tmp_path: Path,
                                                                monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "new.toml"
    app = make_app(target)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StarterScreen)
        await pilot.press("enter")  # first starter
        await pilot.pause()
        assert not isinstance(app.screen, StarterScreen)
        assert app.editor.state.graph.nodes and app.editor.state.dirty
        assert not target.exists()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert target.exists() and not app.editor.state.dirty
        assert target.read_text().startswith("#")  # the starter's comments are kept


async def test_starter_option(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path / "g.toml", starter="gate-geval")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not isinstance(app.screen, StarterScreen)
        assert any(n.type == "geval" for n in app.editor.state.graph.nodes.values())


async def test_escape_on_starter_chooser_quits_without_writing(tmp_path: Path,
                                                                monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path / "g.toml")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
    assert not (tmp_path / "g.toml").exists()


async def test_unparsable_file_opens_read_only_and_reloads_after_fix(
        graph_file: Path) -> None:
    graph_file.write_text(BROKEN)
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.editor.state.read_only
        assert problems_shown(app)[0].startswith("DAG001")
        assert app.query_one(ProblemsTableType()).diagnostics[0].line == 6
        source = app.query_one("#source", TextArea)
        assert source.display and source.cursor_location[0] == 5  # 0-based line 6
        assert "line 6" in source.border_subtitle
        assert "read-only" in str(app.query_one("#header").render())
        await pilot.press("ctrl+s", "a", "d", "r")
        await pilot.pause()
        assert graph_file.read_text() == BROKEN  # never overwritten
        graph_file.write_text(BROKEN.replace('"binary\n', '"binary"\n'))
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert not app.editor.state.read_only
        assert "a" in tree_text(app)
        assert app.query_one("#form").display


def ProblemsTableType():  # noqa: N802 - reads like the class in the assertion above
    from dagtui.tui.widgets.panels import ProblemsTable

    return ProblemsTable


def test_state_refuses_to_save_unparsable(tmp_path: Path) -> None:
    path = tmp_path / "b.toml"
    path.write_text(BROKEN)
    state = EditorState.open(path)
    with pytest.raises(EditRefused):
        state.save()
    with pytest.raises(EditRefused):
        state.add_verdict("a")
    assert path.read_text() == BROKEN


async def test_outside_change_reloads_when_clean(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        graph_file.write_text(graph_file.read_text().replace('"Heading order"', '"Order!"'))
        await app.editor._poll_disk()
        await pilot.pause()
        assert app.editor.state.graph.nodes["order"].label == "Order!"
        assert "Order!" in tree_text(app)
        assert not app.editor.state.dirty


async def test_outside_change_asks_when_dirty(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        app.editor.state.add_verdict("order")
        await app.editor.sync(rebuild_form=True)
        graph_file.write_text(graph_file.read_text().replace('"Heading order"', '"Order!"'))
        await app.editor._poll_disk()
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("enter")  # keep my edits (focused first)
        await pilot.pause()
        assert len(app.editor.state.graph.nodes["order"].verdicts) == 4
        assert app.editor.state.graph.nodes["order"].label == "Heading order"
        await app.editor._poll_disk()  # the same outside version is not asked about twice
        await pilot.pause()
        assert not isinstance(app.screen, ChoiceScreen)


async def test_outside_change_is_polled(graph_file: Path) -> None:
    app = make_app(graph_file, poll_interval=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        graph_file.write_text(graph_file.read_text().replace('"Heading order"', '"Polled"'))
        for _ in range(30):
            await pilot.pause(0.1)
            if app.editor.state.graph.nodes["order"].label == "Polled":
                break
        assert app.editor.state.graph.nodes["order"].label == "Polled"


def test_cli_lists_starters_and_rejects_unknown_ones(capsys) -> None:  # type: ignore[no-untyped-def]
    from dagtui.cli import main
    from dagtui.graph.starters import STARTERS

    assert main(["edit", "x.toml", "--list-starters"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()
              if line and not line.startswith(" ")]  # a name, then its description
    assert listed == list(STARTERS)
    assert main(["edit", "x.toml", "--starter", "nope"]) == 2
    assert "unknown starter" in capsys.readouterr().err

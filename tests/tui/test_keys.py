"""One key table, one help screen, one quit flow for the editor, the debugger and the suite
view (dagtui/tui/keys.py, screens/help.py, screens/dialogs.py, dagtui/keyfile.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagtui.judges.labels import LabelsJudge
from dagtui.keyfile import KeymapError, checked_keymap
from dagtui.tui.app import debugger_app, editor_app, suite_app
from dagtui.tui.keys import (
    DEBUGGER_KEYS,
    EDITOR_KEYS,
    SUITE_KEYS,
    binding_ids,
    describe_key,
)
from dagtui.tui.screens.dialogs import ChoiceScreen, QuitScreen
from dagtui.tui.screens.editor import EditorScreen
from dagtui.tui.screens.help import HelpScreen
from dagtui.tui.suite_view import SuiteScreen
from tui.debugger_helpers import settle

ROOT = Path(__file__).resolve().parents[2]
SUITES = ROOT / "graphs" / "suites"
SIZE = (120, 42)


@pytest.fixture
def suite_path(tmp_path: Path) -> Path:
    for name in ("spans.toml", "correctness.toml", "deep_analysis.toml"):
        shutil.copy(SUITES / name, tmp_path / name)
    return tmp_path / "spans.toml"


def test_every_screen_binding_comes_from_the_table_with_an_id() -> None:
    from dagtui.tui.debugger.screen import DebuggerScreen

    tables = {EditorScreen: EDITOR_KEYS, DebuggerScreen: DEBUGGER_KEYS, SuiteScreen: SUITE_KEYS}
    for owner, table in tables.items():
        ids = [b.id for b in owner.BINDINGS]  # type: ignore[union-attr]
        assert all(ids), owner
        assert {spec.id for spec in table} <= set(ids), owner
    every = binding_ids()
    assert {spec.id for t in tables.values() for spec in t} <= every
    assert binding_ids("debugger") <= binding_ids("editor")  # F5 opens it in the editor
    assert "suite.delete" in binding_ids("suite") and "suite.delete" not in binding_ids(
        "editor")
    assert describe_key("question_mark,f1") == "? or F1"



def test_f1_and_list_keys_read_one_table_of_groups() -> None:
    """F1's groups (and the docs' tables) and `--list-keys` come from key_scopes_table:
    every key F1 shows is listed, and every listed key but the calibration view's (its own
    screen, no F1) is in some F1."""
    from dagtui.tui.keys import (
        debugger_groups,
        editor_groups,
        help_groups,
        key_groups,
        suite_groups,
    )

    listed = {b.id for _title, bound in key_groups() for b in bound}
    shown = {b.id for groups in (editor_groups(), debugger_groups(), suite_groups(),
                                 help_groups("label"))
             for _title, bound in groups for b in bound}
    assert shown <= listed
    assert listed - shown == {"calibration.close", "calibration.align"}
    assert [title for title, _ in editor_groups()] == [
        "editor", "tree", "problems list", "graph (g g)", "form field", "add-node dialog"]
    assert [title for title, _ in debugger_groups()] == ["debugger", "path tree", "dialogs"]

def test_one_keys_file_serves_every_screen(tmp_path: Path) -> None:
    missing = tmp_path / "keys.toml"
    env = {"DAGTUI_KEYS": "suite.delete=backspace; editor.rename=n; debugger.step=s"}
    assert checked_keymap(binding_ids, env, missing) == {
        "suite.delete": "backspace", "editor.rename": "n", "debugger.step": "s"}
    with pytest.raises(KeymapError, match="suite.delet\\b"):
        checked_keymap(binding_ids, {"DAGTUI_KEYS": "suite.delet=x"}, missing)
    asked: list[int] = []
    assert checked_keymap(lambda: asked.append(1) or set(), {}, missing) == {}
    assert not asked  # no remaps: the screens' ids are not even collected


async def test_suite_view_has_help_jk_and_remaps(suite_path: Path) -> None:
    app = suite_app(suite_path)
    app.set_keymap({"suite.delete": "backspace"})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = app.suite.selected
        await pilot.press("j")
        await pilot.pause()
        assert app.suite.selected != first
        await pilot.press("k")
        await pilot.pause()
        assert app.suite.selected == first
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.key_for("suite.delete") == "backspace"  # the key in force
        assert {spec.id for spec in SUITE_KEYS} <= app.screen.binding_ids
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_suite_quit_asks_once_and_can_save(suite_path: Path) -> None:
    app = suite_app(suite_path)
    before = suite_path.read_text()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("p", "q")  # pause a rule, quit: asked
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        app.screen.query_one("#save").press()
        await pilot.pause()
    assert app.return_value is None and suite_path.read_text() != before


async def test_the_editor_and_the_debugger_share_the_help_screen(tmp_path: Path) -> None:
    graph = tmp_path / "g.toml"
    shutil.copy(ROOT / "graphs" / "meeting_summary.toml", graph)
    app = editor_app(graph, poll_interval=0, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        help_ = app.screen
        assert isinstance(help_, HelpScreen)
        assert {spec.id for spec in EDITOR_KEYS} <= help_.binding_ids
        assert "debugger.step" not in help_.binding_ids  # the editor's keys, not F5's


async def test_ctrl_q_in_dagtui_step_asks_like_esc(tmp_path: Path) -> None:
    from dagtui.api import load_checked
    from dagtui.run.cases import load_cases
    from tui.debugger_helpers import CASES, GRAPH

    graph, _ = load_checked(GRAPH)
    app = debugger_app(graph, str(GRAPH), cases=load_cases(CASES), case=0,
                      judge=LabelsJudge(), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settle(app, pilot)
        screen.unsaved_edits.append("present.criteria")  # only in this run
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        assert "present.criteria" in app.screen.message
        await pilot.press("escape")  # stay
        await pilot.pause()
        assert app.screen is screen and app.is_running

"""The suite dependencies view: Pilot tests of its refusals and navigation, and snapshots."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagtui.tui.app import DagtuiApp, suite_app
from dagtui.tui.screens.editor import EditorScreen

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_DIR = ROOT / "graphs" / "suites"
SIZE = (120, 42)


@pytest.fixture
def suite_path(tmp_path: Path) -> Path:
    for name in ("spans.toml", "correctness.toml", "deep_analysis.toml"):
        shutil.copy(EXAMPLE_DIR / name, tmp_path / name)
    return tmp_path / "spans.toml"


async def _select(pilot, app: DagtuiApp, rule: str) -> None:
    ids = [app.query_one("#rules").get_option_at_index(i).id
           for i in range(app.query_one("#rules").option_count)]
    app.query_one("#rules").highlighted = ids.index(rule)
    await pilot.pause()
    assert app.suite.selected == rule


async def test_whole_dag_lists_every_rule_with_kind_and_status(suite_path: Path) -> None:
    app = suite_app(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for rid in ("has_output", "is_english", "correctness", "deep_analysis", "concise"):
            assert rid in app.suite.drawing_text
        assert "LLM · active" in app.suite.drawing_text and "code · paused" in app.suite.drawing_text
        await _select(pilot, app, "correctness")
        details = str(app.query_one("#details").render())
        assert "graph: correctness.toml" in details and "needed by: deep_analysis, concise" in details


async def test_delete_with_dependents_is_refused_with_their_names(suite_path: Path) -> None:
    app = suite_app(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "correctness")
        await pilot.press("delete")
        await pilot.pause()
        assert "correctness" in app.suite.load.suite.rules
        assert "deep_analysis, concise" in app.suite.status_text
        assert "cannot delete rule 'correctness'" in app.suite.status_text
        assert not app.suite.modified
        # a rule nothing depends on goes
        await _select(pilot, app, "concise")
        await pilot.press("d")
        await pilot.pause()
        assert "concise" not in app.suite.load.suite.rules and app.suite.modified
        assert "concise" not in app.suite.drawing_text


async def test_dependency_that_makes_a_cycle_is_refused_at_once(suite_path: Path) -> None:
    app = suite_app(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "has_output")
        await pilot.press("a")
        await pilot.pause()
        picker = app.screen.query_one("#pick-list")
        ids = [picker.get_option_at_index(i).id for i in range(picker.option_count)]
        picker.highlighted = ids.index("deep_analysis")
        await pilot.press("enter")
        await pilot.pause()
        assert app.suite.load.suite.rules["has_output"].depends_on == []
        assert "has_output -> deep_analysis -> correctness -> has_output" in app.suite.status_text
        assert not app.suite.modified
        # a harmless one is accepted and drawn
        assert app.suite.add_dependency("deep_analysis", "is_english")
        assert app.suite.load.suite.rules["deep_analysis"].depends_on == ["correctness", "is_english"]


async def test_focus_view_shows_upstream_and_downstream_only(suite_path: Path) -> None:
    app = suite_app(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "is_english")
        await pilot.press("f")
        await pilot.pause()
        assert "has_output" not in app.suite.drawing_text
        assert {"is_english", "correctness", "deep_analysis"} <= set(
            w for w in app.suite.drawing_text.split() if w.isidentifier())
        assert "upstream" in str(app.query_one("#dag").border_title)
        await pilot.press("f")
        await pilot.pause()
        assert "has_output" in app.suite.drawing_text


async def test_enter_opens_the_rule_graph_and_checks_explain_themselves(suite_path: Path) -> None:
    """Enter on a graph rule pushes the editor on its graph in the same app; leaving the
    editor comes back to the suite view (read again), that rule still selected."""
    app = suite_app(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "has_output")
        await pilot.press("enter")
        await pilot.pause()
        assert "inline check" in app.suite.status_text and app.is_running
        await _select(pilot, app, "correctness")
        suite = app.screen
        await pilot.press("enter")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        assert editor.state.path == suite_path.parent / "correctness.toml"
        await editor.ready()
        await pilot.pause()
        await pilot.press("q")  # nothing edited: leaves the editor at once
        await pilot.pause()
        assert app.screen is suite and app.is_running
        assert app.suite.selected == "correctness"
        assert app.screen_stack == [suite]

async def test_pause_and_save_keep_the_file_readable(suite_path: Path) -> None:
    app = suite_app(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "deep_analysis")
        await pilot.press("p")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not app.suite.modified and "saved" in app.suite.status_text
    text = suite_path.read_text()
    assert 'status = "paused"' in text.split("[rules.deep_analysis]")[1].split("[rules.")[0]
    assert "# the same spans are picked on every run" in text


async def test_quit_with_unsaved_edits_asks_once(suite_path: Path) -> None:
    app = suite_app(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "concise")
        await pilot.press("p", "q")
        await pilot.pause()
        assert app.is_running and "unsaved" in app.suite.status_text
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value is None


def test_snapshot_whole_dag(snap_compare, suite_path: Path) -> None:
    assert snap_compare(suite_app(EXAMPLE_DIR / "spans.toml", select="correctness"),
                        terminal_size=SIZE)


def test_snapshot_focused_rule(snap_compare) -> None:
    assert snap_compare(suite_app(EXAMPLE_DIR / "spans.toml", select="is_english"),
                        press=["f"], terminal_size=SIZE)


async def test_edits_are_rechecked_and_clicks_select_rules(suite_path: Path) -> None:
    app = suite_app(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "is_english")
        await pilot.press("p")  # pause a rule that correctness depends on
        await pilot.pause()
        assert any(d.code == "SUI101" and d.node == "correctness" for d in app.suite.diagnostics)
        x, y, _w, _h = app.suite.drawing.boxes["deep_analysis"]
        await pilot.click("#dag-canvas", offset=(x + 2, y + 1))
        await pilot.pause()
        assert app.suite.selected == "deep_analysis"


def status_line(app: DagtuiApp) -> str:
    return str(app.query_one("#status").render())


async def test_ctrl_z_and_ctrl_y_take_back_and_redo_edits(suite_path: Path) -> None:
    app = suite_app(suite_path, select="concise")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("d")  # nothing depends on concise: deleted
        await pilot.pause()
        assert "concise" not in app.suite.load.suite.rules and app.suite.modified
        assert "● modified" in status_line(app) and "concise" not in app.suite.drawing_text
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert "concise" in app.suite.load.suite.rules and not app.suite.modified
        assert app.suite.selected == "concise" and "concise" in app.suite.drawing_text
        assert "undid: delete rule 'concise'" in status_line(app)
        assert "● modified" not in status_line(app)
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert "concise" not in app.suite.load.suite.rules and app.suite.modified
        assert "redid: delete rule 'concise'" in status_line(app)
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert app.suite.status_text == "nothing to redo"


async def test_undo_brings_back_the_problems_of_the_restored_suite(suite_path: Path) -> None:
    app = suite_app(suite_path, select="is_english")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("p")  # correctness now depends on a paused rule
        await pilot.pause()
        assert any(d.code == "SUI101" for d in app.suite.diagnostics)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert not any(d.code == "SUI101" for d in app.suite.diagnostics)
        assert app.suite.load.suite.rules["is_english"].status == "active"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.suite.status_text == "nothing to undo"


async def test_focus_mode_is_a_flag_the_picture_follows(suite_path: Path) -> None:
    app = suite_app(suite_path, select="is_english")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.suite.focus_mode = True  # set directly, as the `f` key does: the watcher redraws
        await pilot.pause()
        assert "has_output" not in app.suite.drawing_text
        assert "upstream" in str(app.query_one("#dag").border_title)
        app.suite.focus_mode = False
        await pilot.pause()
        assert "has_output" in app.suite.drawing_text

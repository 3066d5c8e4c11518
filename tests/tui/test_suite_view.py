"""The suite dependencies view: Pilot tests of its refusals and navigation, and snapshots."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagtui.tui.suite_view import OpenGraph, SuiteApp

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_DIR = ROOT / "graphs" / "suites"
SIZE = (120, 42)


@pytest.fixture
def suite_path(tmp_path: Path) -> Path:
    for name in ("spans.toml", "correctness.toml", "deep_analysis.toml"):
        shutil.copy(EXAMPLE_DIR / name, tmp_path / name)
    return tmp_path / "spans.toml"


async def _select(pilot, app: SuiteApp, rule: str) -> None:
    ids = [app.query_one("#rules").get_option_at_index(i).id
           for i in range(app.query_one("#rules").option_count)]
    app.query_one("#rules").highlighted = ids.index(rule)
    await pilot.pause()
    assert app.selected == rule


async def test_whole_dag_lists_every_rule_with_kind_and_status(suite_path: Path) -> None:
    app = SuiteApp(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for rid in ("has_output", "is_english", "correctness", "deep_analysis", "concise"):
            assert rid in app.drawing_text
        assert "LLM · active" in app.drawing_text and "code · paused" in app.drawing_text
        await _select(pilot, app, "correctness")
        details = str(app.query_one("#details").render())
        assert "graph: correctness.toml" in details and "needed by: deep_analysis, concise" in details


async def test_delete_with_dependents_is_refused_with_their_names(suite_path: Path) -> None:
    app = SuiteApp(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "correctness")
        await pilot.press("delete")
        await pilot.pause()
        assert "correctness" in app.load.suite.rules
        assert "deep_analysis, concise" in app.status_text
        assert "cannot delete rule 'correctness'" in app.status_text
        assert not app.modified
        # a rule nothing depends on goes
        await _select(pilot, app, "concise")
        await pilot.press("d")
        await pilot.pause()
        assert "concise" not in app.load.suite.rules and app.modified
        assert "concise" not in app.drawing_text


async def test_dependency_that_makes_a_cycle_is_refused_at_once(suite_path: Path) -> None:
    app = SuiteApp(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "has_output")
        await pilot.press("a")
        await pilot.pause()
        picker = app.screen.query_one("#pick-list")
        ids = [picker.get_option_at_index(i).id for i in range(picker.option_count)]
        picker.highlighted = ids.index("deep_analysis")
        await pilot.press("enter")
        await pilot.pause()
        assert app.load.suite.rules["has_output"].depends_on == []
        assert "has_output -> deep_analysis -> correctness -> has_output" in app.status_text
        assert not app.modified
        # a harmless one is accepted and drawn
        assert app.add_dependency("deep_analysis", "is_english")
        assert app.load.suite.rules["deep_analysis"].depends_on == ["correctness", "is_english"]


async def test_focus_view_shows_upstream_and_downstream_only(suite_path: Path) -> None:
    app = SuiteApp(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "is_english")
        await pilot.press("f")
        await pilot.pause()
        assert "has_output" not in app.drawing_text
        assert {"is_english", "correctness", "deep_analysis"} <= set(
            w for w in app.drawing_text.split() if w.isidentifier())
        assert "upstream" in str(app.query_one("#dag").border_title)
        await pilot.press("f")
        await pilot.pause()
        assert "has_output" in app.drawing_text


async def test_enter_opens_the_rule_graph_and_checks_explain_themselves(suite_path: Path) -> None:
    app = SuiteApp(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "has_output")
        await pilot.press("enter")
        await pilot.pause()
        assert "inline check" in app.status_text and app.is_running
        await _select(pilot, app, "correctness")
        await pilot.press("enter")
        await pilot.pause()
    assert app.return_value == OpenGraph(str(suite_path.parent / "correctness.toml"),
                                         "correctness")


async def test_pause_and_save_keep_the_file_readable(suite_path: Path) -> None:
    app = SuiteApp(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "deep_analysis")
        await pilot.press("p")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not app.modified and "saved" in app.status_text
    text = suite_path.read_text()
    assert 'status = "paused"' in text.split("[rules.deep_analysis]")[1].split("[rules.")[0]
    assert "# the same spans are picked on every run" in text


async def test_quit_with_unsaved_edits_asks_once(suite_path: Path) -> None:
    app = SuiteApp(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "concise")
        await pilot.press("p", "q")
        await pilot.pause()
        assert app.is_running and "unsaved" in app.status_text
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value is None


def test_snapshot_whole_dag(snap_compare, suite_path: Path) -> None:
    assert snap_compare(SuiteApp(EXAMPLE_DIR / "spans.toml", select="correctness"),
                        terminal_size=SIZE)


def test_snapshot_focused_rule(snap_compare) -> None:
    assert snap_compare(SuiteApp(EXAMPLE_DIR / "spans.toml", select="is_english"),
                        press=["f"], terminal_size=SIZE)


def test_run_suite_editor_opens_the_graph_then_returns_to_the_suite(monkeypatch,
                                                                      suite_path: Path) -> None:
    import dagtui.tui.app as editor_app
    from dagtui.tui import suite_view

    results = [OpenGraph(str(suite_path.parent / "correctness.toml"), "correctness"), None]
    seen: list[tuple[str, str | None]] = []
    opened: list[str] = []

    def fake_suite_run(self: SuiteApp) -> OpenGraph | None:
        seen.append((self.path, self.selected))
        return results.pop(0)

    class FakeEditor:
        def __init__(self, path: str) -> None:
            opened.append(path)

        def run(self) -> None:
            return None

    monkeypatch.setattr(suite_view.SuiteApp, "run", fake_suite_run)
    monkeypatch.setattr(editor_app, "EditorApp", FakeEditor)
    assert suite_view.run_suite_editor(suite_path) == 0
    assert opened == [str(suite_path.parent / "correctness.toml")]
    assert seen == [(str(suite_path), None), (str(suite_path), "correctness")]


async def test_edits_are_rechecked_and_clicks_select_rules(suite_path: Path) -> None:
    app = SuiteApp(suite_path)
    async with app.run_test(size=SIZE) as pilot:
        await _select(pilot, app, "is_english")
        await pilot.press("p")  # pause a rule that correctness depends on
        await pilot.pause()
        assert any(d.code == "SUI101" and d.node == "correctness" for d in app.diagnostics)
        x, y, _w, _h = app.drawing.boxes["deep_analysis"]
        await pilot.click("#dag-canvas", offset=(x + 2, y + 1))
        await pilot.pause()
        assert app.selected == "deep_analysis"


def status_line(app: SuiteApp) -> str:
    return str(app.query_one("#status").render())


async def test_ctrl_z_and_ctrl_y_take_back_and_redo_edits(suite_path: Path) -> None:
    app = SuiteApp(suite_path, select="concise")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("d")  # nothing depends on concise: deleted
        await pilot.pause()
        assert "concise" not in app.load.suite.rules and app.modified
        assert "● modified" in status_line(app) and "concise" not in app.drawing_text
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert "concise" in app.load.suite.rules and not app.modified
        assert app.selected == "concise" and "concise" in app.drawing_text
        assert "undid: delete rule 'concise'" in status_line(app)
        assert "● modified" not in status_line(app)
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert "concise" not in app.load.suite.rules and app.modified
        assert "redid: delete rule 'concise'" in status_line(app)
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert app.status_text == "nothing to redo"


async def test_undo_brings_back_the_problems_of_the_restored_suite(suite_path: Path) -> None:
    app = SuiteApp(suite_path, select="is_english")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("p")  # correctness now depends on a paused rule
        await pilot.pause()
        assert any(d.code == "SUI101" for d in app.diagnostics)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert not any(d.code == "SUI101" for d in app.diagnostics)
        assert app.load.suite.rules["is_english"].status == "active"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.status_text == "nothing to undo"


async def test_focus_mode_is_a_flag_the_picture_follows(suite_path: Path) -> None:
    app = SuiteApp(suite_path, select="is_english")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.focus_mode = True  # set directly, as the `f` key does: the watcher redraws
        await pilot.pause()
        assert "has_output" not in app.drawing_text
        assert "upstream" in str(app.query_one("#dag").border_title)
        app.focus_mode = False
        await pilot.pause()
        assert "has_output" in app.drawing_text

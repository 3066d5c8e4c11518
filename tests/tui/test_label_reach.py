"""The labelling screen reached from the editor (`L`, at the selected node) and from the
calibration view (`L`, on the selected node's disagreeing cases): keys pressed, the screen
pushed, a label written into the cases file (its other lines byte-identical), esc back on the
screen it came from, and the graph file (and the editor's idea of it) untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.screen import Screen
from textual.widgets import Footer

from dagtui.tui.app import editor_app, label_app
from dagtui.tui.label import LabelScreen
from dagtui.tui.screens.calibration import CalibrationScreen
from dagtui.tui.screens.editor import EditorScreen
from tui.debugger_helpers import SIZE
from tui.test_calibration_view import CASES, open_view, workdir  # noqa: F401 - a fixture
from tui.test_label_screen import GRAPH, session_for

pytestmark = pytest.mark.timeout(120)

#: "swapped" is labelled up to its gate: its order node is the one to label next
JSONL = (
    '{"name": "intro", "actual_output": "# Intro\\n# Body\\n# End"}\n'
    '{"name": "plain",  "actual_output": "no headings at all"}\n'
    '{"name": "swapped", "actual_output": "# End\\n# Intro", "expected": {"present": true}}\n'
)


async def test_editor_l_labels_from_the_selected_node_and_esc_comes_back(
        tmp_path: Path) -> None:
    graph = tmp_path / "doc.toml"
    graph.write_text(GRAPH)
    cases = tmp_path / "doc.cases.jsonl"
    cases.write_text(JSONL)
    app = editor_app(graph, poll_interval=0, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.editor
        editor.go_to("order")
        await pilot.pause()
        assert editor.state.selected == "order"
        await pilot.press("L")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LabelScreen)
        session = screen.session
        assert session.case.name == "swapped" and session.current() == "order"
        await pilot.press("2")  # order: Two headings swapped
        await pilot.pause()
        assert cases.read_text().splitlines(keepends=True) == [
            *JSONL.splitlines(keepends=True)[:2],
            '{"name": "swapped", "actual_output": "# End\\n# Intro", "expected": '
            '{"present": true, "order": "Two headings swapped"}}\n']
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is editor
        assert not editor.state.dirty and not editor.state.changed_on_disk()
        await editor._poll_disk()  # what the editor's disk watch would do next
        await pilot.pause()
        assert app.screen is editor and not editor.state.dirty
        assert not any("changed on disk" in n for n in app.notices)
    assert graph.read_text() == GRAPH


def esc_says(screen: Screen[object]) -> str:
    """The description the footer of `screen` shows beside esc."""
    return next(key.description for key in screen.query_one(Footer).query("FooterKey")
                if key.key == "escape")


async def test_esc_says_back_over_the_editor_and_quit_in_dagtui_label(tmp_path: Path) -> None:
    graph = tmp_path / "doc.toml"
    graph.write_text(GRAPH)
    (tmp_path / "doc.cases.jsonl").write_text(JSONL)
    app = editor_app(graph, poll_interval=0, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("L")
        await pilot.pause()
        assert isinstance(app.screen, LabelScreen)
        assert esc_says(app.screen) == "back"

    start = label_app(session_for(tmp_path, "doc.cases.jsonl", JSONL), title="doc.toml")
    async with start.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(start.screen, LabelScreen)
        assert esc_says(start.screen) == "quit"


async def test_editor_l_refuses_a_graph_without_a_cases_file(tmp_path: Path) -> None:
    graph = tmp_path / "doc.toml"
    graph.write_text(GRAPH.replace('cases = "doc.cases.jsonl"\n', ""))
    app = editor_app(graph, poll_interval=0, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("L")
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen)
        assert any("names no cases file" in n for n in app.notices)


async def test_calibration_l_labels_the_disagreeing_cases_and_rereads(
        workdir: Path) -> None:  # noqa: F811 - the fixture
    cases = workdir / CASES
    before = cases.read_text().splitlines(keepends=True)
    app = editor_app("meeting_summary.toml", poll_interval=0, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_view(pilot, "present", 1)
        disagreeing = [d["case"] for d in view.data["nodes"]["present"]["disagreements"]]
        assert disagreeing
        await pilot.press("L")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LabelScreen)
        session = screen.session
        assert [c.name for c in session.cases] == disagreeing
        first = session.case.name
        assert session.current() == "extract"  # walked again from its first node
        await pilot.press("s")  # keep the extraction as labelled
        await pilot.pause()
        assert session.current() == "present"
        await pilot.press("2")  # present: true (it was labelled false)
        await pilot.pause()
        after = cases.read_text().splitlines(keepends=True)
        index = next(i for i, line in enumerate(before) if json.loads(line)["name"] == first)
        assert [ln for i, ln in enumerate(after) if i != index] == \
            [ln for i, ln in enumerate(before) if i != index]
        old, new = json.loads(before[index]), json.loads(after[index])
        assert old["expected"]["present"] is False
        assert new == {**old, "expected": {**old["expected"], "present": True}}
        # a calibrate run meanwhile: coming back shows its result
        saved = workdir / ".dagtui" / "calibration" / "meeting_summary.json"
        data = json.loads(saved.read_text())
        data["cases"] = 999
        saved.write_text(json.dumps(data))
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is view and isinstance(view, CalibrationScreen)
        assert view.data["cases"] == 999 and view.selected == "present"
        assert "999 cases" in str(view.query_one("#cal-head").render())
        assert not app.editor.state.dirty

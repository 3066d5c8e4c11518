"""F5 in the editor opens the debugger on the graph being edited; esc comes back; an
"edit & re-run" lands in the editor as an ordinary (undoable, unsaved) edit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagtui.tui.debugger.screen import DebuggerScreen
from dagtui.tui.debugger.widgets import PathTree
from tui.debugger_helpers import ROOT, SIZE

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("meeting_summary.toml", "meeting_summary.cases.jsonl"):
        shutil.copy(ROOT / "graphs" / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def editor():  # type: ignore[no-untyped-def]
    from dagtui.tui.app import editor_app

    return editor_app("meeting_summary.toml", poll_interval=0, cursor_blink=False)


async def test_f5_opens_the_debugger_and_esc_returns(workdir: Path) -> None:
    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DebuggerScreen)
        assert screen.live.judge.name == "labels"  # the cases carry labels
        assert len(screen.cases) == 6
        await pilot.press("c")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.live.result().score == 1.0
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, DebuggerScreen)


def esc_says(screen: DebuggerScreen) -> str:
    """The description the debugger's footer shows beside esc."""
    from textual.widgets import Footer

    return next(key.description for key in screen.query_one(Footer).query("FooterKey")
                if key.key == "escape")


async def test_esc_says_back_over_the_editor_quit_in_dagtui_step_and_back_over_a_trace(
        workdir: Path) -> None:
    from dagtui.judges.labels import LabelsJudge
    from tui.debugger_helpers import meeting_app, settle

    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await pilot.pause()
        assert isinstance(app.screen, DebuggerScreen)
        assert esc_says(app.screen) == "back"

    step = meeting_app(LabelsJudge(), case="intro and body swapped")
    async with step.run_test(size=SIZE) as pilot:
        screen = await settle(step, pilot)
        assert esc_says(screen) == "quit"
        await pilot.press("c")
        await settle(step, pilot)
        path = screen.save_trace(workdir / "t.json")
        assert screen.open_trace(path)
        await pilot.pause()
        assert esc_says(screen) == "back"  # esc closes the trace, the app stays
        await pilot.press("escape")
        await pilot.pause()
        assert step.screen is screen and screen.viewing is None
        assert esc_says(screen) == "quit"


async def test_edit_and_rerun_goes_back_into_the_editor(workdir: Path) -> None:
    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await pilot.pause()
        screen = app.screen
        await pilot.press("c")
        await pilot.pause()
        await app.workers.wait_for_complete()
        screen.query_one(PathTree).select_node("present")
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#text-value").load_text("Are Intro, Body and Conclusion all there?")
        await pilot.press("f2")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        # order gets the same evidence and criteria: its earlier answer is reused
        assert [r.source for r in screen.live.records] == ["reused", "judge", "reused"]
        await pilot.press("escape")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].criteria == \
            "Are Intro, Body and Conclusion all there?"
        assert app.editor.state.dirty


async def test_editor_keys_reach_the_debugger_not_the_editor(workdir: Path) -> None:
    """Over the debugger, d / ctrl+s / F1 are the debugger's: the editor's graph, its file
    and its help stay untouched, while ctrl+s saves the trace and F1 lists the debugger's
    keys."""
    from dagtui.tui.screens.dialogs import TextScreen
    from dagtui.tui.screens.help import HelpScreen

    graph_file = workdir / "meeting_summary.toml"
    on_disk = graph_file.read_bytes()
    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.editor.go_to("present")  # a node `d` would delete in the editor
        await pilot.pause()
        assert app.editor.state.selected == "present"
        model = app.editor.state.graph.to_raw()
        await pilot.press("f5")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DebuggerScreen)
        assert screen.check_action("save_trace", ()) is None  # shown, nothing run yet
        # the editor's keys are its screen's: none of them acts while the debugger is on top
        assert not any(active.node is app.editor for active in screen.active_bindings.values())
        await pilot.press("c")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)  # the debugger's keys, not the editor's
        assert app.screen.key_for("debugger.step") and not app.screen.key_for("editor.save")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, TextScreen)  # the trace's file name
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        assert app.editor.state.graph.to_raw() == model and not app.editor.state.dirty
        assert app.editor.state.selected == "present"
    assert graph_file.read_bytes() == on_disk
    assert len(list(workdir.glob(".dagtui/traces/meeting_summary.*.trace.json"))) == 1


async def test_editor_keys_do_not_act_behind_the_debugger(workdir: Path) -> None:
    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await pilot.pause()
        screen = app.screen
        before = dict(app.editor.state.graph.nodes)
        for key in ["d", "a", "D", "ctrl+z", "v", "x", "q", "f5"]:
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen, key  # no editor dialog, no second debugger
        await pilot.press("o")  # and inside a debugger dialog
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        assert app.editor.state.graph.nodes == before and not app.editor.state.dirty
        assert sum(isinstance(s, DebuggerScreen) for s in app.screen_stack) == 1


async def test_f5_refuses_a_graph_with_errors(workdir: Path) -> None:
    text = (workdir / "meeting_summary.toml").read_text()
    (workdir / "meeting_summary.toml").write_text(text.replace('then = "order"',
                                                              'then = "nowhere"'))
    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await pilot.pause()
        assert not any(isinstance(s, DebuggerScreen) for s in app.screen_stack)


async def test_an_invalid_graph_shows_its_errors_instead_of_crashing() -> None:
    from dagtui.graph.loader import load_text
    from dagtui.judges.labels import LabelsJudge
    from dagtui.tui.app import debugger_app

    text = (ROOT / "graphs" / "meeting_summary.toml").read_text()
    graph = load_text(text.replace('then = "order"', 'then = "nowhere"'), "bad.toml").graph
    app = debugger_app(graph, "bad.toml", judge=LabelsJudge(), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.debugger
        banner = str(screen.query_one("#dbg-banner").render())
        assert "cannot run" in banner and "nowhere" in banner
        await pilot.press("n", "c", "o", "e")
        await pilot.pause()
        assert app.screen is screen

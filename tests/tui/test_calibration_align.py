"""Alignment in the TUI (issue 24): `a` in the calibration view aligns the selected node in a
worker (candidates with train kappa, the winner's held-out kappa before -> after, the node's
diff), `enter` applies it as an undoable edit; and the criteria loop: `f6` in the editor
re-measures the edited node on its labelled cases and shows kappa calibrated -> now beside
its criteria. A real litellm judge against the loopback stub (tests/align_helpers.py: it
agrees with the labels only when the criteria hold PHRASE)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from align_helpers import PHRASE, Judge, write
from stub_server import StubServer

from dagtui.cli import main
from dagtui.tui.screens.calibration import CalibrationScreen
from dagtui.tui.widgets.node_form import NodeForm
from tui.debugger_helpers import SIZE

pytestmark = pytest.mark.timeout(180)
MODEL = "openai/gpt-4.1-mini"
GOOD = f"Is the reply polite, {PHRASE}?"
DECOY = "Is the reply courteous and kind?"
BEFORE = "Is the reply polite?"


async def _until(pilot, done, tries: int = 400) -> None:  # type: ignore[no-untyped-def]
    for _ in range(tries):
        await pilot.pause(0.05)
        if done():
            return
    raise AssertionError("timed out")


@pytest.fixture
def calibrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    write(tmp_path)
    script = Judge(20, proposals=[DECOY, GOOD])
    with StubServer(script) as stub:
        assert main(["calibrate", "align.toml", "--model", MODEL, "--api-base",
                     stub.base_url, "--retries", "0"]) == 0
        saved = json.loads((tmp_path / ".dagtui" / "calibration" / "align.json").read_text())
        assert saved["nodes"]["polite"]["kappa"] == 0.0  # the judge says true to everything
        yield stub, script


def _editor():  # type: ignore[no-untyped-def]
    from dagtui.tui.app import editor_app

    return editor_app("align.toml", poll_interval=0, cursor_blink=False)


async def _aligned(pilot) -> CalibrationScreen:  # type: ignore[no-untyped-def]
    """`K`, then `a` on the one node; back when its alignment finished."""
    await pilot.pause()
    await pilot.press("K")
    await pilot.pause()
    view = pilot.app.screen
    assert isinstance(view, CalibrationScreen) and view.selected == "polite"
    await pilot.press("a")
    await _until(pilot, lambda: "polite" in view.aligned)
    return view


async def test_a_aligns_the_node_and_enter_applies_the_winner_as_an_undoable_edit(
        calibrated) -> None:
    stub, script = calibrated
    app = _editor()
    async with app.run_test(size=SIZE) as pilot:
        view = await _aligned(pilot)
        await pilot.pause()
        result = view.aligned["polite"]
        assert result.winner is not None and result.winner.text == GOOD
        assert script.proposer_calls == 1
        shown = str(view.query_one("#cal-matrix").render())
        # every candidate with its train kappa, the best marked
        assert "candidates on train (κ):" in shown
        for c in result.candidates:
            assert c.name in shown
        assert "rewrite 2" in shown and "1.00  ← best" in shown
        # the held-out figures before -> after, and the diff of the node
        assert "held-out κ 0.00 [0.00, 0.00] → 1.00 [1.00, 1.00]" in shown
        assert "agreement 50% → 100%" in shown and "improved on the held-out cases" in shown
        assert f'- criteria = "{BEFORE}"' in shown and f'+ criteria = "{GOOD}"' in shown
        cases = view.query_one("#cal-cases")
        assert str(cases.get_option_at_index(0).prompt).startswith("⏎ apply rewrite 2 to polite")
        assert app.focused is cases
        await pilot.press("enter")
        await _until(pilot, lambda: not isinstance(app.screen, CalibrationScreen))
        await pilot.pause()
        assert app.editor.state.graph.nodes["polite"].criteria == GOOD
        assert app.editor.state.dirty
        assert BEFORE in Path("align.toml").read_text()  # not saved: an edit, undoable
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.editor.state.graph.nodes["polite"].criteria == BEFORE
        # a second alignment is answered from the cache: no request
        calls = stub.calls
        view = await _aligned(pilot)
        assert stub.calls == calls
        assert view.aligned["polite"].calls == 0


async def test_f6_remeasures_the_edited_criteria_and_shows_kappa_before_and_now(
        calibrated) -> None:
    stub, _ = calibrated
    from dagtui.tui.widgets.graph_tree import GraphTree

    app = _editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.query_one(GraphTree).select_node_id("polite")
        await pilot.pause()
        form = app.query_one(NodeForm)
        assert form.node_id == "polite"
        # the wording as it was calibrated: every answer is calibrate's, cached
        calls = stub.calls
        await pilot.press("f6")
        await _until(pilot, lambda: "now" in str(form.message("criteria").render()))
        line = str(form.message("criteria").render())
        assert "κ 0.00 calibrated → 0.00 now on 20 labelled · 0 calls, 20 cached" in line
        assert stub.calls == calls
        # the criteria edited in the form, then f6: the new wording measured (20 requests)
        app.editor.state.set_field("polite", "criteria", GOOD)
        await app.editor.sync(rebuild_form=True)
        await pilot.pause()
        await pilot.press("f6")
        await _until(pilot, lambda: "1.00 now" in str(form.message("criteria").render()))
        line = str(form.message("criteria").render())
        assert "κ 0.00 calibrated → 1.00 now on 20 labelled · 20 calls, 0 cached" in line
        assert stub.calls == calls + 20

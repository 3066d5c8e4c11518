"""The calibration result in the TUI: the kappa badge in the editor's tree, the calibration
view (`K`) with the node's confusion matrix and disagreeing cases, `enter` on a case opening
the debugger paused at that node, and the debugger's human label beside the verdict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import dagtui
from dagtui.judges.base import CallbackJudge
from dagtui.tui.calibration import badge, label_note, load_calibration
from dagtui.tui.debugger.screen import DebuggerScreen
from dagtui.tui.screens.calibration import CalibrationScreen
from dagtui.tui.widgets.graph_tree import GraphTree
from tui.debugger_helpers import ROOT, SIZE

pytestmark = pytest.mark.timeout(120)
CASES = "meeting_summary.calibration.jsonl"


def _judge(ask):  # type: ignore[no-untyped-def]
    """Extracts every short line, says every summary has its headings, always 'Correct'."""
    if ask.kind == "task":
        out = ask.case.fields.get("actual_output") or ""
        return "\n".join(ln for ln in out.splitlines() if 0 < len(ln.split()) <= 3)
    if ask.kind == "binary":
        return True
    return ask.prompt.labels[0]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("meeting_summary.toml", CASES):
        shutil.copy(ROOT / "graphs" / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    cal = dagtui.calibrate(str(tmp_path / "meeting_summary.toml"), str(tmp_path / CASES),
                           judge=CallbackJudge(_judge))
    saved = tmp_path / ".dagtui" / "calibration" / "meeting_summary.json"
    saved.parent.mkdir(parents=True)
    saved.write_text(json.dumps(cal.to_dict(), default=str))
    return tmp_path


def editor():  # type: ignore[no-untyped-def]
    from dagtui.tui.app import editor_app

    return editor_app("meeting_summary.toml", poll_interval=0, cursor_blink=False)


def row_text(app, node_id: str) -> str:  # type: ignore[no-untyped-def]
    tree = app.query_one(GraphTree)
    return next(text for key, text in ((k, tree.row_label(k)) for k in tree._rows)
                if key[0] == "node" and key[1] == node_id)


async def test_tree_shows_a_kappa_badge_per_calibrated_node(workdir: Path) -> None:
    data = load_calibration("meeting_summary.toml")
    assert data is not None
    present = data["nodes"]["present"]["kappa"]
    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert f"κ {present:.2f}" in row_text(app, "present")
        assert "κ " in row_text(app, "order")
        assert "recall " in row_text(app, "extract")
    assert badge(data, "present").style == "bold red"  # a judge that always says true


async def open_view(pilot, node: str, downs: int) -> CalibrationScreen:  # type: ignore[no-untyped-def]
    """`K`, then down the node list to `node`."""
    await pilot.pause()
    await pilot.press("K")
    await pilot.pause()
    view = pilot.app.screen
    assert isinstance(view, CalibrationScreen)
    await pilot.press(*["down"] * downs)
    await pilot.pause()
    assert view.selected == node
    return view


async def test_calibration_view_jumps_to_the_debugger_paused_at_the_node(workdir: Path) -> None:
    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_view(pilot, "present", 1)
        matrix = str(view.query_one("#cal-matrix").render())
        assert "label ↓" in matrix and "false" in matrix
        cases = view.query_one("#cal-cases")
        first = str(cases.get_option_at_index(0).prompt)
        assert first.startswith("✖ ") and "label false, judge true" in first
        case = first[2:].split(" — ")[0]
        await pilot.press("enter")  # into the cases list
        await pilot.press("enter")  # open this case in the debugger
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        dbg = app.screen
        assert isinstance(dbg, DebuggerScreen)
        run = dbg.live
        assert run.case.name == case
        assert run.next_node() == "present"  # extract ran, paused before present
        await pilot.press("n")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        title = str(dbg.query_one("#dbg-right").border_title)
        assert "label false ✔" in title  # the labels judge answers the label itself


def test_label_note_marks_mismatches_and_close_calls() -> None:
    data = {"nodes": {"present": {"close_calls": [{"case": "c1", "votes": {"true": 2}}]}}}
    assert label_note({"present": True}, "present", False).plain == "label true ✖ mismatch"
    assert label_note({"present": "true"}, "present", True).plain == "label true ✔"
    assert label_note({}, "present", True, data, "c1").plain == "≈ close call"
    assert label_note({"extract": ["Intro"]}, "extract", "Intro").plain == "label Intro"
    assert load_calibration("nowhere.toml") is None


async def _checked(pilot) -> None:  # type: ignore[no-untyped-def]
    """Wait for the first validation, so the picture never depends on timing."""
    await pilot.app.editor.first_check_done.wait()
    await pilot.pause()


def test_snapshot_tree_badges(workdir: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(editor(), terminal_size=SIZE, run_before=_checked, press=["j"])


def test_snapshot_calibration_view(workdir: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(editor(), terminal_size=SIZE, run_before=_checked,
                        press=["K", "down", "enter"])


async def test_jump_asks_the_calibrated_model_with_the_labels_forcing_the_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After `dagtui calibrate` with a model, the jump steps that model (its cached answers:
    no new call) with the other labelled nodes answering their labels."""
    from stub_server import StubServer
    from test_calibrate import GRAPH, JUDGE, PerSample, case_rows

    from dagtui.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "calib.toml").write_text(GRAPH)
    (tmp_path / "calib.cases.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in case_rows()))
    with StubServer(PerSample(JUDGE)) as stub:
        import asyncio

        assert await asyncio.to_thread(main, [
            "calibrate", "calib.toml", "--model", "openai/gpt-4.1-mini", "--api-base",
            stub.base_url, "--retries", "0"]) == 0
        calls = stub.calls
        from dagtui.tui.app import editor_app

        app = editor_app("calib.toml", poll_interval=0, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await open_view(pilot, "kind", 2)  # extract, gate, kind
            await pilot.press("enter", "enter")  # c04: label B, the judge said A
            for _ in range(100):
                await pilot.pause(0.05)
                dbg = app.screen
                if isinstance(dbg, DebuggerScreen) and not dbg.busy \
                        and dbg.live.next_node() == "kind":
                    break
            dbg = app.screen
            assert isinstance(dbg, DebuggerScreen)
            assert dbg.live.case.name == "c04" and dbg.live.judge.name == "litellm"
            assert dbg.live.overrides == {"gate": True}
            await pilot.press("n")
            for _ in range(100):
                await pilot.pause(0.05)
                if dbg.live.record("kind") is not None and not dbg.busy:
                    break
            title = str(dbg.query_one("#dbg-right").border_title)
            assert "verdict: A" in title and "label B ✖ mismatch" in title
        assert stub.calls == calls  # every answer came from calibrate's cache


async def test_step_marks_close_calls_from_the_saved_calibration(tmp_path: Path,
                                                                 monkeypatch) -> None:
    """`dagtui step` reads the saved result too: a node whose samples split on this case is
    marked beside its verdict."""
    from dagtui.tui.app import debugger_app

    monkeypatch.chdir(tmp_path)
    shutil.copy(ROOT / "graphs" / "meeting_summary.toml", tmp_path / "meeting_summary.toml")
    saved = tmp_path / ".dagtui" / "calibration" / "meeting_summary.json"
    saved.parent.mkdir(parents=True)
    saved.write_text(json.dumps({"nodes": {"present": {"kappa": 0.5, "close_calls": [
        {"case": "c", "majority": "true", "margin": 0.2, "votes": {"true": 3, "false": 2}}]}}}))
    graph = dagtui.load("meeting_summary.toml").graph
    case = {"name": "c", "actual_output": "Intro\nBody\nConclusion",
            "expected": {"extract": "Intro\nBody\nConclusion", "present": True,
                         "order": "Correct order"}}
    from dagtui.judges.labels import LabelsJudge
    from dagtui.run.cases import case_from_dict

    app = debugger_app(graph, "meeting_summary.toml", cases=[case_from_dict(case)],
                      judge=LabelsJudge(), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("n", "n")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        dbg = app.debugger
        dbg.query_one("#dbg-tree").select_node("present")
        await pilot.pause()
        title = str(dbg.query_one("#dbg-right").border_title)
        assert "label true ✔  ≈ close call" in title


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_esc_in_the_debugger_returns_to_the_calibration_view_at_that_case(
        workdir: Path, size: tuple[int, int]) -> None:
    app = editor()
    async with app.run_test(size=size) as pilot:
        view = await open_view(pilot, "present", 1)
        case = str(view.query_one("#cal-cases").get_option_at_index(0).prompt)[2:].split(
            " — ")[0]
        await pilot.press("enter", "enter")  # into the cases, then open the first one
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, DebuggerScreen)
        await pilot.press("escape")
        await pilot.pause()
        back = app.screen
        assert isinstance(back, CalibrationScreen)  # not the editor
        assert back.selected == "present" and back.case == case
        cases = back.query_one("#cal-cases")
        assert cases.has_focus and cases.highlighted == 0
        await pilot.press("escape")  # and esc there goes on to the editor
        await pilot.pause()
        assert app.screen is app.screen_stack[0]

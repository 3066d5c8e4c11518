"""Debugger rough edges a keyboard user hits: read-only footers, counts and costs that read
right when no call was made."""

from __future__ import annotations

import io

from dagtui.judges.labels import LabelsJudge
from dagtui.tui.debugger.panes_text import calls_text
from dagtui.tui.debugger.widgets import StepPanes
from tui.debugger_helpers import SIZE, meeting_app, select, settle


def shown_keys(screen) -> set[str]:  # type: ignore[no-untyped-def]
    """Keys in the footer: shown bindings that check_action does not hide."""
    return {key for key, active in screen.active_bindings.items() if active.binding.show}


async def test_a_step_with_no_call_shows_no_cost_rather_than_an_unknown_one() -> None:
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")  # the task, answered from the labels: no call
        screen = await settle(app, pilot)
        await pilot.press("5")
        await pilot.pause()
        usage = screen.query_one(StepPanes).text_of("usage")
        assert "none (no call made)" in usage
        assert "unknown to litellm" not in usage
        assert "0 calls" in str(screen.query_one("#dbg-header-right").render())
    assert calls_text(1) == "1 call" and calls_text(2) == "2 calls"


async def test_a_read_only_trace_footer_offers_only_keys_that_work(tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        live_keys = shown_keys(screen)
        assert "r" in live_keys  # restart is offered on a live run
        path = screen.save_trace(tmp_path / "t.json")
        assert screen.open_trace(path)
        await pilot.pause()
        keys = shown_keys(screen)
        assert {"n", "c", "r", "b", "o", "e", "i", "p"}.isdisjoint(keys), keys


def test_run_summary_prints_no_node_cost_when_no_call_was_priced() -> None:
    import asyncio

    from dagtui.api import load
    from dagtui.commands.run import print_summary
    from dagtui.run.batch import BatchResult
    from dagtui.run.cases import load_cases
    from tui.debugger_helpers import CASES, GRAPH

    graph = load(GRAPH)
    results = [asyncio.run(graph.a_measure(case, judge="labels"))
               for case in load_cases(CASES)[:2]]
    out = io.StringIO()
    print_summary(BatchResult("m", 0.5, results), out)
    text = out.getvalue()
    assert "cost -" in text and "0.0000" not in text


def copied_app(tmp_path):  # type: ignore[no-untyped-def]
    """`dagtui step` on a copy of the meeting-summary graph and its cases (files written
    here must not touch the repository's)."""
    import shutil

    from dagtui.api import load_checked
    from dagtui.run.cases import load_cases
    from dagtui.tui.app import debugger_app
    from tui.debugger_helpers import CASES, GRAPH

    graph_path = tmp_path / "meeting_summary.toml"
    cases_path = tmp_path / "meeting_summary.cases.jsonl"
    shutil.copy(GRAPH, graph_path)
    shutil.copy(CASES, cases_path)
    graph, _ = load_checked(graph_path)
    app = debugger_app(graph, str(graph_path), cases=load_cases(cases_path), case=0,
                      judge=LabelsJudge(), cursor_blink=False, cases_source=str(cases_path))
    return app, cases_path


async def test_a_case_written_with_i_is_offered_to_the_cases_file_on_esc(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from dagtui.tui.screens.dialogs import CaseEditScreen, ChoiceScreen

    app, cases_path = copied_app(tmp_path)
    before = cases_path.read_text().splitlines()
    async with app.run_test(size=SIZE) as pilot:
        screen = await settle(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, CaseEditScreen)
        editor.query_one("#case-name").load_text("written here")
        await pilot.press("f2")
        screen = await settle(app, pilot)
        assert [c.name for c in screen.unsaved_cases] == ["written here"]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("enter")  # append and leave
        await pilot.pause()
    after = cases_path.read_text().splitlines()
    assert after[:-1] == before
    assert json.loads(after[-1])["name"] == "written here"


async def test_edits_in_standalone_step_are_not_dropped_on_esc_without_a_question(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    from textual.widgets import TextArea

    from dagtui.tui.screens.dialogs import ChoiceScreen

    app, _ = copied_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settle(app, pilot)
        await select(app, pilot, "present")
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one(TextArea).load_text("Are all three headings there?")
        await pilot.press("f2")
        screen = await settle(app, pilot)
        assert screen.unsaved_edits == ["present.criteria"]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        assert "present.criteria" in str(app.screen.message)
        await pilot.press("escape")  # stay
        await pilot.pause()
        assert app.screen is screen and app.is_running

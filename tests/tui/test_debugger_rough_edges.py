"""Debugger rough edges a keyboard user hits: read-only footers, counts and costs that read
right when no call was made."""

from __future__ import annotations

import io

from dagtui.judges.labels import LabelsJudge
from dagtui.tui.debugger.panes_text import calls_text
from dagtui.tui.debugger.widgets import StepPanes

from .debugger_helpers import SIZE, meeting_app, settle


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
    from dagtui.batch import Report
    from dagtui.cases import load_cases
    from dagtui.commands.run import print_summary

    from .debugger_helpers import CASES, GRAPH

    graph = load(GRAPH)
    results = [asyncio.run(graph.a_measure(case, judge="labels"))
               for case in load_cases(CASES)[:2]]
    out = io.StringIO()
    print_summary(Report("m", 0.5, results), out)
    text = out.getvalue()
    assert "cost -" in text and "0.0000" not in text

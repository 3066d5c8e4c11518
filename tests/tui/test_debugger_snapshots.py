"""SVG snapshots of the debugger at 120×36 (cursor blink off): paused mid-run, finished,
and the human judge's question.

Regenerate after an intended visual change with
`.venv/bin/pytest tests/tui/test_debugger_snapshots.py --snapshot-update` and review them.
"""

from __future__ import annotations

from typing import Any

import pytest

from dagtui.judges.labels import LabelsJudge
from dagtui.tui.debugger.human import TuiHumanJudge
from tui.debugger_helpers import SIZE, meeting_app

pytestmark = pytest.mark.timeout(120)


def keys(*pressed: str):  # type: ignore[no-untyped-def]
    """A run_before that presses keys one by one, letting the judge worker finish each."""

    async def run_before(pilot: Any) -> None:
        await pilot.pause()
        for key in pressed:
            await pilot.press(key)
            await pilot.pause()
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()

    return run_before


def test_debugger_mid_run(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = meeting_app(LabelsJudge(), case="intro and body swapped")
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("n", "n", "4"))


def test_debugger_finished(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = meeting_app(LabelsJudge(), case="intro and body swapped")
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("c"))


def test_debugger_human_judge_asks(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = meeting_app(TuiHumanJudge(), case=0)

    async def run_before(pilot: Any) -> None:
        await pilot.pause()
        await pilot.press("o")  # what-if on extract: skip typing evidence by hand
        await pilot.pause()
        pilot.app.screen.query_one("#text-value").load_text("Intro\nBody\nConclusion")
        await pilot.press("f2")
        await pilot.pause()
        await pilot.press("n")  # extract: answered by the override
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.press("n")  # present: the person is asked
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

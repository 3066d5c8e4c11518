"""ctrl+s in the debugger saves under `.dagtui/traces/` (git-ignored), not the repository root."""

from __future__ import annotations

import json

from dagtui.judges.labels import LabelsJudge
from tui.debugger_helpers import SIZE, meeting_app, settle


async def test_ctrl_s_saves_under_dagtui_traces(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    app = meeting_app(LabelsJudge(), case="intro and body swapped")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        value = app.screen.query_one("#text-value").value
        assert value == ".dagtui/traces/meeting_summary.intro-and-body-swapped.trace.json"
        await pilot.press("enter")
        await settle(app, pilot)
    saved = tmp_path / value
    assert json.loads(saved.read_text())["dagtui_trace"] == 1
    assert (tmp_path / ".dagtui" / ".gitignore").read_text() == "*\n"
    assert [p.name for p in tmp_path.iterdir()] == [".dagtui"]  # nothing loose

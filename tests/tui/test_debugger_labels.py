"""The debugger's human-judge verdicts saved as the case's labels (`L`), through
`dagtui.labels.write`: only that case's line of the cases file changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dagtui.tui.debugger import TuiHumanJudge
from tui.debugger_helpers import SIZE, meeting_app, settle

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "graphs" / "meeting_summary.cases.jsonl"


async def test_human_verdicts_written_as_labels(tmp_path: Path) -> None:
    target = tmp_path / "cases.jsonl"
    shutil.copy(CASES, target)
    before = target.read_text().splitlines(keepends=True)
    judge = TuiHumanJudge()
    app = meeting_app(judge, case="intro and body swapped", cases_source=str(target))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(*"Body", "enter", *"Intro", "f2")  # the task's evidence
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("1")  # present: true
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("2")  # order: Two headings swapped
        await settle(app, pilot)
        await pilot.press("L")
        await settle(app, pilot)
    after = target.read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(before) if '"intro and body swapped"' in line)
    assert [ln for i, ln in enumerate(after) if i != index] == \
        [ln for i, ln in enumerate(before) if i != index]
    old = json.loads(before[index])
    new = json.loads(after[index])
    assert new == {**old, "expected": {**old.get("expected", {}), "extract": "Body\nIntro",
                                       "present": True, "order": "Two headings swapped"}}

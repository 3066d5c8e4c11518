"""The debugger's human-judge verdicts saved as the case's labels (`L`), through
`dagtui.labels.write`: only that case's line of the cases file changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from dagtui.tui.debugger.human import TuiHumanJudge
from tui.debugger_helpers import SIZE, meeting_app, settle

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "graphs" / "meeting_summary.cases.jsonl"


async def answer_each_node(app: Any, pilot: Any) -> None:
    """Step each node, answering as the human judge: the headings Body, Intro; present
    true; order "Two headings swapped"."""
    await pilot.press("n")
    await pilot.pause()
    await pilot.press(*"Body", "enter", *"Intro", "f2")  # the task's evidence
    await settle(app, pilot)
    for pick in ("1", "2"):  # present: true; order: Two headings swapped
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(pick)
        await settle(app, pilot)


async def test_human_verdicts_written_as_labels(tmp_path: Path) -> None:
    target = tmp_path / "cases.jsonl"
    shutil.copy(CASES, target)
    before = target.read_text().splitlines(keepends=True)
    judge = TuiHumanJudge()
    app = meeting_app(judge, case="intro and body swapped", cases_source=str(target))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await answer_each_node(app, pilot)
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


async def test_inline_case_appended_with_the_human_verdicts_as_its_labels(
        tmp_path: Path) -> None:
    """`i` writes a case inline, the person answers each node as the human judge, and esc
    appends the case: its line carries those answers as its `expected` labels (so `dagtui
    test` and `calibrate` can use it), and every line already in the file is unchanged."""
    from textual.widgets import TextArea

    from dagtui.tui.screens.dialogs import CaseEditScreen, QuitScreen

    target = tmp_path / "cases.jsonl"
    shutil.copy(CASES, target)
    before = target.read_text()
    source = json.loads(next(ln for ln in before.splitlines()
                             if '"intro and body swapped"' in ln))
    app = meeting_app(TuiHumanJudge(), case="intro and body swapped", cases_source=str(target))
    async with app.run_test(size=SIZE) as pilot:
        dbg = await settle(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        edit = app.screen
        assert isinstance(edit, CaseEditScreen)
        edit.query_one("#case-name", TextArea).text = "swapped, written here"
        edit.query_one("#case-expected", TextArea).text = ""
        edit.query_one("#case-expected_score", TextArea).text = ""
        await pilot.press("f2")
        await settle(app, pilot)
        assert [c.name for c in dbg.unsaved_cases] == ["swapped, written here"]
        assert dbg.live.case is dbg.unsaved_cases[0]
        await answer_each_node(app, pilot)
        await pilot.press("escape")  # unsaved case: asks
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("enter")  # the first button: append and leave
        await pilot.pause()
    after = target.read_text()
    assert after.startswith(before)
    assert after[len(before):] == json.dumps({
        "name": "swapped, written here", "input": source["input"],
        "actual_output": source["actual_output"],
        "expected": {"extract": "Body\nIntro", "present": True,
                     "order": "Two headings swapped"}}, ensure_ascii=False) + "\n"

"""`unsure = "human"` in the debugger: when the judge cannot tell, the person at the
keyboard is asked the same request, and the run goes on with the answer (in `dagtui run`
the same case is unscored: tests/test_unsure.py)."""

from __future__ import annotations

import pytest

from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.loader import load_text
from dagtui.judges import CallbackJudge
from dagtui.run.cases import Case
from dagtui.tui.app import debugger_app
from dagtui.tui.screens.dialogs import HumanAnswerScreen
from tui.debugger_helpers import SIZE, settle

pytestmark = pytest.mark.timeout(60)

GRAPH = '''
[metric]
name = "dates"
model = "openai/gpt-4.1-mini"

[nodes.dated]
type = "binary"
criteria = "Was the purchase within 30 days?"
params = ["actual_output"]
unsure = "human"
verdicts = [
  { verdict = true, score = 10 },
  { verdict = false, score = 0 },
]
'''


async def test_the_person_answers_what_the_judge_could_not_tell() -> None:
    graph = CheckedGraph.of_graph(load_text(GRAPH).graph).require()
    asked: list[str] = []

    def judge(ask):  # type: ignore[no-untyped-def]
        asked.append(ask.node.id)
        return "cannot tell", "the purchase date is missing"

    case = Case("no date", {"actual_output": "It broke."})
    app = debugger_app(graph, "dates.toml", cases=[case], case=0,
                      judge=CallbackJudge(judge), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, HumanAnswerScreen) and modal.ask.node.id == "dated"
        assert "cannot tell" in modal.choices
        await pilot.press("2")  # 2. false
        screen = await settle(app, pilot)
        result = screen.live.result()
        assert result.status == "fail" and result.score == 0.0 and asked == ["dated"]
        step = result.step("dated")
        assert step.unsure and not step.unscored
        assert any("a person answered" in n for n in step.notes)


async def test_the_debugger_lists_the_items_and_overrides_one() -> None:
    from test_map_node import graph_text

    from dagtui.tui.debugger.panes_text import verdict_text
    from dagtui.tui.screens.dialogs import PickScreen
    from tui.debugger_helpers import select

    graph = CheckedGraph.of_graph(load_text(graph_text()).graph).require()
    asked: list[str] = []

    def judge(ask):  # type: ignore[no-untyped-def]
        if ask.kind == "task":
            return "alpha\nbeta\ngamma", "listed"
        item = next(iter(ask.evidence.values()))
        asked.append(item)
        return item != "beta", f"checked {item}"

    case = Case("c", {"actual_output": "x", "context": "y"})
    app = debugger_app(graph, "claims.toml", cases=[case],
                      case=0, judge=CallbackJudge(judge), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        assert screen.live.result().score == round(20 / 3 / 10, 6)
        shown = verdict_text(screen.live.record("supported"), "map")
        assert "false  beta" in shown and "checked beta" in shown
        await select(app, pilot, "supported")
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, PickScreen)
        await pilot.press("down", "enter")  # item 2: beta
        await pilot.pause()
        assert isinstance(app.screen, PickScreen)
        await pilot.press("enter")  # true
        screen = await settle(app, pilot)
        result = screen.live.result()
        assert result.score == 1.0
        items = result.step("supported").items
        assert [e["source"] for e in items] == ["reused", "override", "reused"]
        assert asked.count("alpha") == 1  # unchanged items were not asked again

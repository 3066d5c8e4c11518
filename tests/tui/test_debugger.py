"""Pilot tests of the step debugger with offline judges (labels, human, scripted callbacks).

Each test drives the real screen by keys at 120×36 and checks what a person would see: the
tree's statuses, the panes' text, the result box, and the run behind them.
"""

from __future__ import annotations

import json
import sys

from dagtui.judges.base import CallbackJudge
from dagtui.judges.labels import LabelsJudge
from dagtui.tui.debugger.human import TuiHumanJudge
from dagtui.tui.debugger.panes_text import format_messages
from dagtui.tui.debugger.widgets import StepPanes
from dagtui.tui.screens.dialogs import CaseEditScreen, HumanAnswerScreen, PickScreen
from tui.debugger_helpers import (
    SIZE,
    held_task_app,
    meeting_app,
    result_text,
    select,
    settle,
    tree_label,
)


async def test_labels_judge_steps_one_node_at_a_time_to_the_result() -> None:
    app = meeting_app(LabelsJudge(), case="intro and body swapped")
    async with app.run_test(size=SIZE) as pilot:
        screen = await settle(app, pilot)
        assert "next" in tree_label(screen, "extract")
        await pilot.press("n")
        screen = await settle(app, pilot)
        run = screen.live
        assert [r.node for r in run.records] == ["extract"]
        assert "✔" in tree_label(screen, "extract") and "evidence" in tree_label(screen, "extract")
        assert "next" in tree_label(screen, "present")
        panes = screen.query_one(StepPanes)
        # the prompt pane holds the exact messages the engine built for this node
        assert format_messages(run.records[0].prompt) in panes.text_of("prompt")
        assert "Body\nIntro\nConclusion" in panes.text_of("evidence")
        await pilot.press("n", "n")
        screen = await settle(app, pilot)
        assert [r.node for r in run.records] == ["extract", "present", "order"]
        assert "Two headings swapped" in tree_label(screen, "order")
        text = result_text(screen)
        assert "0.40" in text and "fails" in text and "< 0.5" in text
        assert "3/3" in str(screen.query_one("#dbg-header-right").render())
        # the run is over: step and continue are greyed out
        assert screen.check_action("step", ()) is None
        assert screen.check_action("continue_run", ()) is None


async def test_continue_runs_to_the_end_and_skipped_nodes_are_marked() -> None:
    app = meeting_app(LabelsJudge(), case="missing conclusion")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        result = screen.live.result()
        assert result.score == 0.0 and result.leaf == "present"
        assert "skipped" in tree_label(screen, "order")
        text = result_text(screen)
        assert "0.00" in text and "fails" in text
        assert "present: false ▸ score 0" in text


async def test_breakpoint_stops_continue_before_the_node_and_c_goes_on() -> None:
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select(app, pilot, "order")
        await pilot.press("b")
        screen = await settle(app, pilot)
        assert "◉" in tree_label(screen, "order")
        await pilot.press("c")
        screen = await settle(app, pilot)
        run = screen.live
        assert [r.node for r in run.records] == ["extract", "present"]
        assert run.next_node() == "order" and not run.finished
        assert "breakpoint" in result_text(screen)
        await pilot.press("c")
        screen = await settle(app, pilot)
        assert run.finished and run.result().score == 1.0


async def test_override_reaches_the_other_leaf_and_is_marked() -> None:
    app = meeting_app(LabelsJudge(), case="all headings in order")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        assert screen.live.result().score == 1.0
        await select(app, pilot, "present")
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, PickScreen)
        await pilot.press("enter")  # verdicts are listed false, true: the first is false
        screen = await settle(app, pilot)
        result = screen.live.result()
        assert result.score == 0.0 and result.leaf == "present"
        step = result.step("present")
        assert step.source == "override" and step.answer is False
        assert screen.live.records[0].source == "reused"  # upstream not asked again
        text = result_text(screen)
        assert "overridden" in text and "0.00" in text
        assert "⚑" in tree_label(screen, "present")


async def test_override_of_a_node_not_reached_yet_applies_when_it_runs() -> None:
    app = meeting_app(LabelsJudge(), case="all headings in order")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select(app, pilot, "order")
        await pilot.press("o")
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # "All headings out of order"
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        result = screen.live.result()
        assert result.score == 0.2 and result.step("order").source == "override"


async def test_human_judge_is_answered_by_keys_in_the_modal() -> None:
    judge = TuiHumanJudge()
    app = meeting_app(judge, case="intro and body swapped")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, HumanAnswerScreen)
        # the modal shows the exact prompt the engine built
        shown = modal.query_one("#human-prompt").text
        assert "Extract all headings" in shown and "── user ──" in shown
        await pilot.press(*"Body", "enter", *"Intro", "enter", *"Conclusion")
        await pilot.press("f2")
        screen = await settle(app, pilot)
        assert screen.live.records[0].answer == "Body\nIntro\nConclusion"
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, HumanAnswerScreen) and app.screen.ask.kind == "binary"
        await pilot.press("1")  # 1. true
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen.ask.kind == "non_binary"
        await pilot.press("2")  # 2. Two headings swapped
        screen = await settle(app, pilot)
        result = screen.live.result()
        assert result.score == 0.4 and judge.asked == 3
        assert result.step("order").answer == "Two headings swapped"


async def test_escape_in_the_human_modal_stops_the_run_without_killing_the_app() -> None:
    app = meeting_app(TuiHumanJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, HumanAnswerScreen)
        await pilot.press("escape")
        screen = await settle(app, pilot)
        assert app.screen is screen and screen.live.records == []
        assert not screen.busy and screen.check_action("step", ()) is True


async def test_stop_cancels_a_judge_that_hangs_and_the_node_can_be_stepped_again() -> None:
    app, gate = held_task_app(case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        screen = app.debugger
        assert screen.busy and "asking" in tree_label(screen, "extract")
        assert screen.check_action("stop", ()) is True
        await pilot.press("x")
        screen = await settle(app, pilot)
        assert not screen.busy and screen.live.records == []
        gate.set()
        await pilot.press("c")
        screen = await settle(app, pilot)
        assert screen.live.result().score == 1.0


async def test_a_failing_step_shows_its_error_and_the_app_stays_usable() -> None:
    calls = {"n": 0}

    def flaky(ask):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if ask.kind == "binary" and calls["n"] == 2:
            raise RuntimeError("judge exploded")
        return {"task": "Intro\nBody\nConclusion", "binary": True}.get(ask.kind,
                                                                       "Correct order")

    app = meeting_app(CallbackJudge(flaky, needs_params=False), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        assert "✘" in tree_label(screen, "present")
        assert "judge exploded" in screen.query_one(StepPanes).text_of("verdict")
        assert "error" in result_text(screen)
        await pilot.press("r", "c")
        screen = await settle(app, pilot)
        assert screen.live.result().score == 1.0


async def test_missing_params_are_flagged_before_any_call() -> None:
    asked: list[str] = []

    def judge_fn(ask):  # type: ignore[no-untyped-def]
        asked.append(ask.node.id)
        return "x"

    from dagtui.run.cases import Case

    bare = Case("no output", {"input": "hello"})
    app = meeting_app(CallbackJudge(judge_fn), case=bare)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settle(app, pilot)
        banner = str(screen.query_one("#dbg-banner").render())
        assert "actual_output" in banner and "extract" in banner
        await pilot.press("n")
        await settle(app, pilot)
        assert asked == []


async def test_pick_a_case_from_the_list_and_edit_one_inline() -> None:
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("p")
        await pilot.pause()
        await pilot.press("down", "down", "down", "enter")
        screen = await settle(app, pilot)
        assert screen.live.case.name == "every heading out of place"
        await pilot.press("c")
        screen = await settle(app, pilot)
        assert screen.live.result().score == 0.2
        await pilot.press("i")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, CaseEditScreen)
        area = editor.query_one("#case-expected")
        labels = json.loads(area.text)
        labels["order"] = "Correct order"
        area.load_text(json.dumps(labels))
        editor.query_one("#case-name").load_text("edited inline")
        await pilot.press("f2")
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        assert screen.live.case.name == "edited inline"
        assert screen.live.result().score == 1.0


async def test_edit_and_rerun_with_labels_reuses_upstream_steps() -> None:
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        await select(app, pilot, "order")
        await pilot.press("e")
        await pilot.pause()
        area = app.screen.query_one("#text-value")
        area.load_text("Is the order Intro, Body, Conclusion?")
        await pilot.press("f2")
        screen = await settle(app, pilot)
        run = screen.live
        assert run.graph.nodes["order"].criteria == "Is the order Intro, Body, Conclusion?"
        assert [r.source for r in run.records] == ["reused", "reused", "judge"]
        assert run.result().score == 1.0


async def test_save_a_trace_and_open_it_read_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = meeting_app(LabelsJudge(), case="intro and body swapped")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        path = screen.save_trace(tmp_path / "t.json")
        data = json.loads(path.read_text())
        assert data["dagtui_trace"] == 1 and data["result"]["score"] == 0.4
        assert [s["node"] for s in data["steps"]] == ["extract", "present", "order"]
        await pilot.press("r")
        await settle(app, pilot)
        assert screen.open_trace(path)
        await pilot.pause()
        assert screen.run.read_only
        assert "read-only" in str(screen.query_one("#dbg-header-left").render())
        assert screen.check_action("step", ()) is False  # hidden from the footer
        assert "0.40" in result_text(screen)
        await pilot.press("escape")  # back to the live run, not out of the app
        await pilot.pause()
        assert screen.viewing is None and app.screen is screen
        await pilot.press("t")  # the same, by key
        await pilot.pause()
        app.screen.query_one("#text-value").value = str(path)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen and screen.run.read_only


async def test_switch_judge_by_key() -> None:
    from dagtui.judges.factory import make_judge
    from dagtui.tui.debugger.human import TuiHumanJudge
    from tui.debugger_helpers import GRAPH

    def factory(name: str):  # type: ignore[no-untyped-def]
        from dagtui.api import load_checked

        return make_judge(name, load_checked(GRAPH)[0], human=TuiHumanJudge)

    app = meeting_app(LabelsJudge(), case=0, judge_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("J")
        await pilot.pause()
        await pilot.press("down", "enter")  # human
        screen = await settle(app, pilot)
        assert screen.live.judge.name == "human" and screen.live.judge.app is app
        assert "judge human" in str(screen.query_one("#dbg-header-left").render())


async def test_ctrl_s_asks_for_a_file_name_and_saves(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
    saved = list(tmp_path.glob(".dagtui/traces/*.trace.json"))  # never loose in the repo
    assert len(saved) == 1 and saved[0].name.startswith("meeting_summary.all-headings")


async def test_escape_quits_the_standalone_app() -> None:
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code in (0, None)


def test_labels_stepping_never_imports_litellm() -> None:
    import subprocess

    code = (
        "import asyncio, sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from tui.debugger_helpers import meeting_app, settle, SIZE\n"
        "from dagtui.judges.labels import LabelsJudge\n"
        "async def main():\n"
        "    app = meeting_app(LabelsJudge())\n"
        "    async with app.run_test(size=SIZE) as pilot:\n"
        "        await settle(app, pilot)\n"
        "        await pilot.press('c')\n"
        "        await settle(app, pilot)\n"
        "asyncio.run(main())\n"
        "print('litellm' in sys.modules)\n"
    )
    from tui.debugger_helpers import ROOT

    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"


async def test_number_keys_switch_panes() -> None:
    from textual.widgets import TabbedContent

    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        tabs = app.debugger.query_one(TabbedContent)
        for key, pane in zip("54321", ["usage", "verdict", "evidence", "response", "prompt"],
                             strict=True):
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == f"pane-{pane}"
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("y")
        assert copied == [app.debugger.query_one(StepPanes).text_of("prompt")]
        assert copied[0].startswith("(not sent yet")


async def test_geval_leaf_shows_its_scoring_method_and_takes_a_what_if_score() -> None:
    from dagtui.api import load_checked
    from dagtui.run.cases import load_cases
    from dagtui.tui.app import debugger_app
    from tui.debugger_helpers import ROOT

    graph, _ = load_checked(ROOT / "graphs" / "refund_policy.toml")
    cases = load_cases(ROOT / "graphs" / "refund_policy.cases.jsonl")
    app = debugger_app(graph, "graphs/refund_policy.toml", cases=cases, case=0,
                      judge=LabelsJudge(), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        result = screen.live.result()
        assert result.leaf == "tone" and result.score == 0.9
        assert "◀ leaf" in tree_label(screen, "tone")
        await select(app, pilot, "tone")
        assert "scoring method    label" in screen.query_one(StepPanes).text_of("usage")
        assert "tone ▸ score 9" in result_text(screen)
        await pilot.press("o")
        await pilot.pause()
        await pilot.press("1", "1", "enter")  # 11 is out of range: refused
        await pilot.pause()
        assert "0 to 10" in str(app.screen.query_one("#text-error").render())
        await pilot.press("backspace", "backspace", "3", "enter")
        screen = await settle(app, pilot)
        result = screen.live.result()
        assert result.score == 0.3 and "overridden" in result_text(screen)


async def test_a_trace_given_at_start_opens_read_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from dagtui.api import load
    from dagtui.report.trace import Trace
    from dagtui.run.cases import load_cases
    from tui.debugger_helpers import CASES, GRAPH

    graph = load(GRAPH)
    case = load_cases(CASES)[3]
    result = await graph.a_measure(case, judge="labels")
    trace = Trace.of(graph.graph, case, graph.engine("labels").judge, result)
    app = meeting_app(LabelsJudge(), case=0, trace=trace)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settle(app, pilot)
        assert screen.run.read_only and "every heading out of place" in str(
            screen.query_one("#dbg-header-left").render())
        assert "0.20" in result_text(screen)
        assert "All headings out of order" in tree_label(screen, "order")
        await pilot.press("c")  # disabled while viewing a trace
        await settle(app, pilot)
        assert screen.live.records == []


async def test_human_judge_scores_a_geval_leaf() -> None:
    from dagtui.api import load_checked
    from dagtui.run.cases import load_cases
    from dagtui.tui.app import debugger_app
    from tui.debugger_helpers import ROOT

    graph, _ = load_checked(ROOT / "graphs" / "refund_policy.toml")
    cases = load_cases(ROOT / "graphs" / "refund_policy.cases.jsonl")
    app = debugger_app(graph, "graphs/refund_policy.toml", cases=cases, case=0,
                      judge=TuiHumanJudge(), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.ask.node.id == "policy"
        await pilot.press("2")  # false: the policy is not violated, go on to the tone
        await pilot.pause()
        await pilot.pause()
        assert app.screen.ask.kind == "geval"
        await pilot.press("8", "tab", *"clear and kind", "f2")
        screen = await settle(app, pilot)
        result = screen.live.result()
        assert result.score == 0.8 and result.reason == "clear and kind"
        assert result.step("tone").method == "human"


MULTI_TURN_GRAPH = """\
[metric]
name = "Stays polite"
threshold = 0.5
model = "gpt-4.1-mini"
multi_turn = true

[nodes.polite]
type = "binary"
criteria = "Is every assistant turn polite?"
params = ["role", "content"]
verdicts = [
  { verdict = true, score = 10 },
  { verdict = false, score = 0 },
]
"""


async def test_inline_case_editor_shows_the_multi_turn_fields(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from dagtui.api import load_checked
    from dagtui.tui.app import debugger_app

    path = tmp_path / "chat.toml"
    path.write_text(MULTI_TURN_GRAPH)
    graph, _ = load_checked(path)
    asked: list[str] = []

    def judge_fn(ask):  # type: ignore[no-untyped-def]
        asked.append(ask.prompt.messages[1]["content"])
        return True

    app = debugger_app(graph, str(path), judge=CallbackJudge(judge_fn), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await settle(app, pilot)
        assert screen.live.case is None and screen.check_action("step", ()) is None
        assert "no case yet: i writes one" in result_text(screen)
        await pilot.press("i")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, CaseEditScreen)
        names = editor.names
        assert "turns" in names and "scenario" in names and "actual_output" not in names
        assert editor.needed == ["turns"]  # role and content live in the turns
        editor.query_one("#case-name").load_text("chat 1")
        editor.query_one("#case-turns").load_text(json.dumps([
            {"role": "user", "content": "Where is my parcel?"},
            {"role": "assistant", "content": "Let me check that for you right away."},
        ]))
        await pilot.press("f2")
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        assert screen.live.result().score == 1.0
        assert "Let me check that for you right away." in asked[0]


async def test_inline_case_editor_rejects_bad_json_and_stays_open() -> None:
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        editor = app.screen
        editor.query_one("#case-context").load_text("[not json")
        await pilot.press("f2")
        await pilot.pause()
        assert app.screen is editor
        assert "context" in str(editor.query_one("#case-error").render())

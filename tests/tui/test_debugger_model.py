"""The debugger's state and pane text without any UI: statuses, progress, what-ifs, reuse."""

from __future__ import annotations

from dagtui.api import load_checked
from dagtui.judges.labels import LabelsJudge
from dagtui.run.cases import Case, load_cases
from dagtui.tui.debugger.panes_text import format_messages, path_text, result_lines
from dagtui.tui.debugger.run_model import (
    DONE,
    NEXT,
    PENDING,
    SKIPPED,
    DebugRun,
    editable_field,
    field_as_text,
    field_from_text,
)
from tui.debugger_helpers import CASES, GRAPH, ROOT


def meeting_run(case: int) -> DebugRun:
    graph, _ = load_checked(GRAPH)
    run = DebugRun(graph, LabelsJudge(), load_cases(CASES)[case])
    run.restart()
    return run


def test_format_messages_keeps_content_exactly() -> None:
    messages = [{"role": "system", "content": "  spaced\ttab\n\ntrailing  "},
                {"role": "user", "content": "x"}]
    text = format_messages(messages)
    assert text == "── system ──\n  spaced\ttab\n\ntrailing  \n\n── user ──\nx"


async def test_statuses_and_progress_follow_the_run() -> None:
    run = meeting_run(4)  # missing conclusion: the gate ends it
    assert run.status("extract").status == NEXT and run.progress() == (0, 3)
    assert run.status("order").status == PENDING
    await run.session.step()
    assert run.status("extract").status == DONE and run.progress() == (1, 3)
    await run.session.step()
    assert run.finished and run.progress() == (2, 2)
    assert run.status("order").status == SKIPPED
    head, details = result_lines(run.result(), run.overridden)
    assert head.startswith("Result 0.00  ✘ fails") and "present: false ▸ score 0" in details


async def test_override_then_restart_with_reuse_asks_nothing_again() -> None:
    run = meeting_run(0)
    await run.session.run_all(concurrent=False)
    run.keep_records()
    run.set_override("present", False)
    run.restart(reuse=run.previous)
    await run.session.run_all(concurrent=False)
    assert [r.source for r in run.records] == ["reused", "override"]
    assert run.overridden and run.result().score == 0.0
    assert "overridden" in result_lines(run.result(), run.overridden)[0]


def test_geval_steps_are_edited_one_per_line() -> None:
    graph, _ = load_checked(ROOT / "graphs" / "refund_policy.toml")
    tone = graph.nodes["tone"]
    assert editable_field(tone) == "evaluation_steps"
    text = field_as_text(tone, "evaluation_steps")
    assert text.count("\n") == len(tone.evaluation_steps) - 1
    assert field_from_text("evaluation_steps", "a\n\n b \n") == ["a", "b"]
    assert field_from_text("criteria", " keep  ") == " keep  "


async def test_path_text_reads_left_to_right() -> None:
    run = meeting_run(2)
    await run.session.run_all(concurrent=False)
    assert path_text(run.result()) == ("extract ▸ present: true ▸ order: Two headings "
                                       "swapped ▸ score 4")


def test_missing_params_are_named_before_any_call() -> None:
    from dagtui.judges.base import CallbackJudge

    graph, _ = load_checked(GRAPH)
    run = DebugRun(graph, CallbackJudge(lambda ask: "x"), Case("bare", {"input": "hi"}))
    assert run.restart() is None
    assert "actual_output" in run.problem and "extract" in run.problem
    assert run.missing() and run.records == []

"""`Session.preview`: the prompt a node would be sent, built by the code that sends it.

The debugger shows this before a step runs, so it must match the request byte for byte
(here: the messages the judge received), and must say "unknown" (None) rather than guess
when the prompt depends on a call that has not happened yet.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dagtui.graph.loader import load_file, load_text
from dagtui.judges import CallbackJudge
from dagtui.judges.base import Ask
from dagtui.run.cases import Case
from dagtui.run.engine import Engine


class RecordingJudge(CallbackJudge):
    """An in-process judge that keeps the messages of every prompt it was asked."""

    def __init__(self, llm: bool = False) -> None:
        self.asked: list[tuple[str, list[dict[str, str]]]] = []
        self.llm = llm
        super().__init__(self._answer)

    def _answer(self, ask: Ask) -> Any:
        self.asked.append((ask.node.id, ask.prompt.messages))
        if ask.kind == "task":
            return "Intro\nBody\nConclusion", "found them"
        if ask.kind == "binary":
            return True, "all there"
        if ask.kind == "non_binary":
            return "Correct order", "in order"
        if ask.kind == "geval_steps":
            return ["Check the tone.", "Check the facts."], "steps"
        return 7, "fine"


CASE = Case("c1", {"actual_output": "Intro\n..\nBody\n..\nConclusion"})


def test_preview_of_each_ready_node_is_the_prompt_then_sent():
    judge = RecordingJudge()
    engine = Engine(load_file("graphs/meeting_summary.toml").graph, judge)

    async def go() -> list[tuple[str, list[dict[str, str]]]]:
        s = engine.session(CASE)
        shown = []
        while not s.done:
            nid = s.peek()
            assert nid is not None
            prompt = s.preview(nid)
            assert prompt is not None
            shown.append((nid, prompt.messages))
            await s.step()
        return shown

    shown = asyncio.run(go())
    assert [n for n, _ in shown] == ["extract", "present", "order"]
    assert shown == judge.asked
    # the evidence of 'extract' reached the preview of the nodes after it
    assert "Intro\nBody\nConclusion" in shown[1][1][-1]["content"]


def test_preview_is_none_for_nodes_not_ready_or_unknown():
    engine = Engine(load_file("graphs/meeting_summary.toml").graph, RecordingJudge())
    s = engine.session(CASE)
    assert s.preview("present") is None  # its evidence is not settled yet
    assert s.preview("no such node") is None
    assert s.preview("extract") is not None


CHECK_GRAPH = """
[nodes.short]
type = "check"
check = "regex"
param = "actual_output"
pattern = '\\S'
verdicts = [{ verdict = true, then = "polite" }, { verdict = false, score = 0 }]
[nodes.polite]
type = "binary"
criteria = "Is the reply polite?"
params = ["actual_output"]
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
"""


def test_preview_is_none_for_a_check_node():
    result = load_text(CHECK_GRAPH)
    assert result.graph is not None and not [d for d in result.diagnostics if d.is_error]
    engine = Engine(result.graph, RecordingJudge())
    s = engine.session(Case("c", {"actual_output": "Thanks, happy to help."}))
    assert s.peek() == "short" and s.preview("short") is None


GEVAL_GRAPH = """
[nodes.tone]
type = "geval"
name = "Tone"
criteria = "Is the reply helpful and polite?"
params = ["actual_output"]
"""


def test_geval_preview_waits_for_generated_steps_then_matches():
    judge = RecordingJudge(llm=True)
    engine = Engine(load_text(GEVAL_GRAPH).graph, judge)
    case = Case("g", {"actual_output": "Sure, here is how."})

    async def go() -> None:
        first = engine.session(case)
        assert first.preview("tone") is None  # the steps need their own call first
        await first.run_all()
        assert [n for n, _ in judge.asked] == ["tone", "tone"]  # steps, then the score
        second = engine.session(case)
        prompt = second.preview("tone")  # steps are cached now: the prompt is known
        assert prompt is not None and prompt.messages == judge.asked[-1][1]
        assert "1. Check the tone." in prompt.messages[-1]["content"]

    asyncio.run(go())


def test_override_record_carries_the_prompt_it_skipped():
    judge = RecordingJudge()
    engine = Engine(load_file("graphs/meeting_summary.toml").graph, judge)

    async def go() -> None:
        s = engine.session(CASE, overrides={"present": False})
        await s.step()
        expected = s.preview("present")
        rec = await s.step()
        assert rec is not None and rec.source == "override"
        assert expected is not None and rec.prompt == expected.messages
        assert [n for n, _ in judge.asked] == ["extract"]  # nothing sent for 'present'

    asyncio.run(go())

"""Judges that need no model: the human-judge base the TUI implements, labels, replay; and
the cache semantics DeepEval gets wrong (a changed leaf score is never served stale)."""

from __future__ import annotations

import asyncio

import pytest
from stub_server import StubServer

from dagtui.graph.loader import load_file
from dagtui.judges import (
    Ask,
    CallbackJudge,
    HumanAnswer,
    HumanJudge,
    LabelsJudge,
    LiteLLMJudge,
    ReplayJudge,
)
from dagtui.judges.cache import Cache, NullCache, request_key
from dagtui.report.trace import Trace
from dagtui.run.cases import Case
from dagtui.run.engine import Engine

CASE = Case("c", {"actual_output": "Intro\nBody\nConclusion"})


def meeting():
    return load_file("graphs/meeting_summary.toml").graph


class ScriptedPerson(HumanJudge):
    """What the TUI does, minus the screen: answer from a queue, record what was shown."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.shown: list[Ask] = []

    async def ask_person(self, ask: Ask) -> HumanAnswer:
        self.shown.append(ask)
        await asyncio.sleep(0)
        return HumanAnswer(*self.answers.pop(0))


def test_human_judge_sees_the_exact_prompt_and_labels():
    person = ScriptedPerson([("Intro\nBody", "I read it"), (True, "all there"),
                             ("Two headings swapped", "body first")])
    result = Engine(meeting(), person).run_sync(CASE)
    assert result.score == 0.4 and result.reason == "body first"
    order_ask = person.shown[2]
    assert order_ask.prompt.labels == ["Correct order", "Two headings swapped",
                                       "All headings out of order"]
    assert order_ask.evidence == {"extract": "Intro\nBody"}
    assert result.step("order").prompt == order_ask.prompt.messages
    assert result.calls == 0 and result.step("order").judge == "human"


def test_human_answer_outside_the_labels_is_a_step_error():
    person = ScriptedPerson([("x", ""), (True, ""), ("Nearly right", "")])
    result = Engine(meeting(), person).run_sync(CASE)
    assert result.status == "error" and result.error_kind == "out_of_set"
    assert "Nearly right" in result.error


def test_labels_judge_accepts_string_booleans_and_task_evidence():
    case = Case("l", {}, expected={"extract": "Intro", "present": "false"})
    result = Engine(meeting(), LabelsJudge()).run_sync(case)
    assert result.score == 0.0 and result.step("extract").answer == "Intro"


def test_replay_strict_refuses_a_changed_prompt(tmp_path):
    graph = meeting()
    fn = CallbackJudge(lambda a: {"task": "Intro", "binary": True}.get(a.kind, "Correct order"))
    result = Engine(graph, fn).run_sync(CASE)
    path = Trace.of(graph, CASE, fn, result).save(tmp_path / "t.json")
    changed = meeting()
    changed.nodes["present"].criteria = "Are all three headings there?"
    loose = Engine(changed, ReplayJudge(path)).run_sync(CASE)
    assert loose.score == 1.0 and "different prompt" in loose.step("present").reason
    strict = Engine(changed, ReplayJudge(path, strict=True)).run_sync(CASE)
    assert strict.status == "error" and strict.error_node == "present"


def test_cache_key_covers_model_request_and_sample(tmp_path):
    req = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    assert request_key("m", req) == request_key("m", dict(req))
    assert request_key("m", req) != request_key("m", req, sample=1)
    assert request_key("m", req) != request_key("n", req)
    cache = Cache(tmp_path)
    cache.put("k", "m", {"raw": "r"})
    assert cache.get("k") == {"raw": "r"} and len(cache) == 1 and cache.get("x") is None
    assert NullCache().get("k") is None


def test_changed_leaf_score_is_never_served_stale(tmp_path):
    with StubServer() as stub:
        def judge():
            return LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="t",
                                cache=Cache(tmp_path))

        first = Engine(meeting(), judge()).run_sync(CASE)
        graph = meeting()
        graph.nodes["order"].verdicts[0].score = 9
        second = Engine(graph, judge()).run_sync(CASE)
        assert stub.calls == 3  # all three answers from the cache ...
    assert first.score == 1.0 and second.score == pytest.approx(0.9)  # ... score not stale

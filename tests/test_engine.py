"""Executor semantics with an in-process judge (no HTTP, no litellm): the rules of `dagtui.run.schedule`."""

from __future__ import annotations

import asyncio

import pytest

from dagtui.graph.loader import GraphError, load_file, load_text
from dagtui.judges import CallbackJudge, LabelsJudge, ReplayJudge
from dagtui.report.trace import Trace, graph_hash
from dagtui.run.cases import Case, CaseError
from dagtui.run.engine import Engine


def meeting():
    return load_file("graphs/meeting_summary.toml").graph


def script(task="Intro\nBody\nConclusion", present=True, order="Correct order", score=7):
    seen: list[str] = []

    def fn(ask):
        seen.append(ask.node.id)
        if ask.kind == "task":
            return task, "found them"
        if ask.kind == "binary":
            return present, "all three are there"
        if ask.kind == "non_binary":
            return order, "in order"
        return score, "fine"

    fn.seen = seen  # type: ignore[attr-defined]
    return fn


CASE = Case("c1", {"actual_output": "Intro\n..\nBody\n..\nConclusion"})


def test_passing_path_scores_and_reasons_from_the_deciding_node():
    fn = script()
    result = Engine(meeting(), CallbackJudge(fn)).run_sync(CASE)
    assert result.score == 1.0 and result.success is True
    assert result.reason == "in order"
    assert [p.node for p in result.path] == ["extract", "present", "order"]
    assert result.path[1].then == "order" and result.path[2].score == 10
    assert fn.seen == ["extract", "present", "order"]  # type: ignore[attr-defined]
    assert result.leaf == "order"


def test_gate_skips_what_it_settles():
    fn = script(present=False)
    result = Engine(meeting(), CallbackJudge(fn)).run_sync(CASE)
    assert result.score == 0.0 and result.success is False
    assert fn.seen == ["extract", "present"]  # type: ignore[attr-defined]


def test_steps_generator_yields_in_file_order_one_at_a_time():
    engine = Engine(meeting(), CallbackJudge(script(order="Two headings swapped")))

    async def collect():
        return [s async for s in engine.steps(CASE)]

    steps = asyncio.run(collect())
    assert [s.node for s in steps] == ["extract", "present", "order"]
    assert steps[0].answer == "Intro\nBody\nConclusion"
    assert steps[2].answer == "Two headings swapped" and steps[2].leaf_score == 4
    # the judgement prompts carry the task output under its output_label
    assert "Summary headings:\nIntro\nBody\nConclusion" in steps[1].prompt[1]["content"]
    assert steps[1].evidence_from == ["extract"]


def test_session_peek_override_and_result():
    engine = Engine(meeting(), CallbackJudge(script()))

    async def go():
        s = engine.session(CASE)
        assert s.peek() == "extract"
        await s.step()
        assert s.peek() == "present"  # a breakpoint on 'present' would stop here
        s.override("present", False)  # what-if
        rec = await s.step()
        assert rec.source == "override" and rec.answer is False and rec.leaf_score == 0
        assert s.done and await s.step() is None
        return s.result()

    result = asyncio.run(go())
    assert result.score == 0.0


def test_rerun_reuses_upstream_steps_with_identical_prompts():
    fn = script()
    engine = Engine(meeting(), CallbackJudge(fn))
    first = engine.run_sync(CASE)
    fn.seen.clear()  # type: ignore[attr-defined]
    second = engine.run_sync(CASE, reuse=first.steps, overrides={"order": "Two headings swapped"})
    assert fn.seen == []  # type: ignore[attr-defined]  # extract, present reused; order overridden
    assert [s.source for s in second.steps] == ["reused", "reused", "override"]
    assert second.score == 0.4
    # edit a node: its prompt changes, so it (and only it) is asked again
    g = meeting()
    g.nodes["present"].criteria = "Are Intro, Body and Conclusion all present?"
    engine2 = Engine(g, CallbackJudge(fn))
    third = engine2.run_sync(CASE, reuse=first.steps)
    assert [s.source for s in third.steps] == ["reused", "judge", "reused"]
    assert fn.seen == ["present"]  # type: ignore[attr-defined]


def test_shared_node_runs_once_after_all_parents_arrive():
    text = """
[metric]
name = "fan-in"
[nodes.a]
type = "task"
instructions = "A"
output_label = "A out"
params = ["input"]
children = ["j"]
[nodes.b]
type = "task"
instructions = "B"
output_label = "B out"
params = ["input"]
children = ["j"]
[nodes.j]
type = "binary"
criteria = "both?"
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
"""
    graph = load_text(text).graph
    calls: list[str] = []

    async def fn(ask):
        calls.append(ask.node.id)
        await asyncio.sleep(0.01)
        if ask.kind == "task":
            return f"out of {ask.node.id}"
        return True

    result = Engine(graph, CallbackJudge(fn)).run_sync(Case("x", {"input": "hi"}))
    assert sorted(calls[:2]) == ["a", "b"] and calls[2:] == ["j"]
    j = result.step("j")
    assert j is not None and "A out:\nout of a" in j.prompt[1]["content"]
    assert "B out:\nout of b" in j.prompt[1]["content"]
    assert result.score == 1.0


def test_labels_judge_zero_calls_and_missing_label_is_an_error():
    engine = Engine(meeting(), LabelsJudge())
    ok = engine.run_sync(Case("l", {}, expected={"present": True, "order": "Correct order"}))
    assert ok.score == 1.0 and ok.calls == 0
    missing = engine.run_sync(Case("m", {}, expected={"present": True}))
    assert missing.status == "error" and missing.error_kind == "label_missing"
    assert "'order'" in missing.error and "'m'" in missing.error


def test_judge_answer_outside_verdicts_is_a_step_error():
    result = Engine(meeting(), CallbackJudge(script(order="Perfect"))).run_sync(CASE)
    assert result.status == "error" and result.error_kind == "out_of_set"
    assert "Perfect" in (result.steps[-1].raw or "")


def test_missing_param_named_before_any_call():
    fn = script()
    engine = Engine(meeting(), CallbackJudge(fn))
    with pytest.raises(CaseError, match=r"node 'extract' needs 'actual_output'"):
        engine.run_sync(Case("empty", {}, file="cases.jsonl", line=4))
    assert fn.seen == []  # type: ignore[attr-defined]


def test_engine_refuses_invalid_graph():
    graph = load_text("""
[nodes.a]
type = "binary"
criteria = "x"
params = ["actual_outptu"]
verdicts = [{ verdict = true, score = 1 }, { verdict = false, then = "nowhere" }]
""").graph
    with pytest.raises(GraphError) as info:
        Engine(graph, LabelsJudge())
    codes = {d.code for d in info.value.diagnostics}
    assert "DAG006" in codes and "DAG008" in codes


def test_trace_roundtrip_and_replay(tmp_path):
    graph = meeting()
    judge = CallbackJudge(script(order="All headings out of order"))
    result = Engine(graph, judge).run_sync(CASE)
    path = Trace.of(graph, CASE, judge, result).save(tmp_path / "t.json")
    trace = Trace.load(path)
    assert trace.graph_hash == graph_hash(graph) and trace.matches(graph)
    assert trace.case["name"] == "c1" and trace.result.score == 0.2
    assert [s.node for s in trace.steps] == ["extract", "present", "order"]
    assert trace.steps[1].prompt == result.steps[1].prompt
    replayed = Engine(graph, ReplayJudge(trace)).run_sync(CASE)
    assert replayed.score == 0.2 and replayed.calls == 0


def test_graph_hash_changes_with_a_leaf_score():
    a, b = meeting(), meeting()
    b.nodes["order"].verdicts[1].score = 5
    assert graph_hash(a) != graph_hash(b)


def test_geval_leaf_with_labels_and_callback():
    graph = load_file("graphs/refund_policy.toml").graph
    case = Case("r", {"input": "i", "actual_output": "o", "context": ["c"]},
                expected={"policy": False, "tone": 8})
    res = Engine(graph, LabelsJudge()).run_sync(case)
    assert res.score == 0.8 and res.leaf == "tone"
    res2 = Engine(graph, CallbackJudge(lambda ask: False if ask.kind == "binary" else 6.5)
                  ).run_sync(case)
    assert res2.score == 0.65 and res2.steps[-1].method == "callback"
    assert "1. Check whether the response directly addresses" in res2.steps[-1].prompt[1]["content"]


MULTI = """
[metric]
multi_turn = true
[nodes.polite]
type = "binary"
criteria = "Did the assistant stay polite in the last exchange?"
params = ["role", "content", "scenario"]
turn_window = [2, 3]
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
"""


def test_multi_turn_case_runs_and_missing_turns_are_named():
    graph = load_text(MULTI).graph
    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
             {"role": "user", "content": "refund?"}, {"role": "assistant", "content": "sure"}]
    shown: list[str] = []

    def fn(ask):
        shown.append(ask.prompt.messages[1]["content"])
        return True

    engine = Engine(graph, CallbackJudge(fn))
    result = engine.run_sync(Case("chat", {"turns": turns, "scenario": "refund"}))
    assert result.score == 1.0
    assert "[2] user: refund?\n[3] assistant: sure" in shown[0] and "[0]" not in shown[0]
    with pytest.raises(CaseError, match="has no 'turns'"):
        engine.run_sync(Case("no turns", {"scenario": "refund"}))

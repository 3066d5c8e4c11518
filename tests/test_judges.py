"""The litellm judge against the loopback stub: real HTTP through litellm, no internet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from stub_server import Fault, Script, StubServer

from dagtui.graph.loader import load_file
from dagtui.judges import LiteLLMJudge
from dagtui.judges.cache import Cache
from dagtui.run.cases import Case
from dagtui.run.engine import Engine

MODEL = "openai/gpt-4.1-mini"
CASE = Case("swapped", {"actual_output": "Body\n..\nIntro\n..\nConclusion"})


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def judge_for(stub, cache=None, **kw):
    kw.setdefault("backoff", 0.01)
    return LiteLLMJudge(MODEL, api_base=stub.base_url, api_key="test", cache=cache, **kw)


def meeting():
    return load_file("graphs/meeting_summary.toml").graph


def test_meeting_summary_passing_path_is_three_calls_and_rerun_is_free(stub, tmp_path):
    cache = Cache(tmp_path)
    engine = Engine(meeting(), judge_for(stub, cache))
    result = engine.run_sync(CASE)
    assert result.score == 1.0 and result.success
    assert stub.calls == 3  # DeepEval: 4 (a separate reason call)
    assert result.reason == "stub picks the first label"
    assert result.calls == 3 and result.prompt_tokens > 0
    # a fresh engine and judge, same cache directory: zero calls at the stub
    engine2 = Engine(meeting(), judge_for(stub, Cache(tmp_path)))
    again = engine2.run_sync(CASE)
    assert stub.calls == 3 and again.calls == 0 and again.cache_hits == 3
    assert again.score == 1.0 and all(s.cache_hit for s in again.steps)


def test_step_record_holds_exact_request_and_raw_response(stub):
    result = Engine(meeting(), judge_for(stub)).run_sync(CASE)
    step = result.step("order")
    assert step is not None
    sent = stub.requests[2]["body"]
    assert step.request["messages"] == sent["messages"]
    assert step.request["temperature"] == 0 and sent["temperature"] == 0
    # structured output: gpt-4.1-mini supports json_schema, so the schema is sent
    fmt = sent["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    assert list(schema["properties"]) == ["reason", "verdict"]  # reason first
    assert schema["properties"]["verdict"]["enum"] == [
        "Correct order", "Two headings swapped", "All headings out of order"]
    assert json.loads(step.raw)["verdict"] == "Correct order"
    assert step.latency > 0 and step.retries == 0 and not step.cache_hit


def test_prompt_json_without_structured_output_is_parsed_tolerantly():
    fenced = "Here you go:\n```json\n{\"reason\": \"ok\", \"verdict\": true}\n```\nThanks!"
    responder = Script([("true or false", fenced)])
    with StubServer(responder) as stub:
        judge = judge_for(stub, structured=False)
        result = Engine(meeting(), judge).run_sync(CASE)
        assert "response_format" not in stub.requests[1]["body"]
        assert result.step("present").answer is True
        assert result.score == 1.0 and stub.calls == 3


def test_out_of_set_answer_gets_one_correction_then_succeeds():
    answers = iter([
        {"reason": "hmm", "verdict": "Mostly fine"},
        {"reason": "fixed", "verdict": "Two headings swapped"},
    ])
    responder = Script([("Choose exactly one", lambda body: next(answers))])
    with StubServer(responder) as stub:
        result = Engine(meeting(), judge_for(stub)).run_sync(CASE)
        assert stub.calls == 4
        step = result.step("order")
        assert [c.purpose for c in step.calls] == ["answer", "correction"]
        last = stub.requests[-1]["body"]["messages"]
        assert last[-2]["role"] == "assistant" and "Mostly fine" in last[-2]["content"]
        assert "must be exactly one of" in last[-1]["content"]
        assert result.score == 0.4


def test_out_of_set_twice_is_a_step_error_showing_the_raw_answer():
    responder = Script([("Choose exactly one", {"reason": "x", "verdict": "Great"})])
    with StubServer(responder) as stub:
        result = Engine(meeting(), judge_for(stub)).run_sync(CASE)
        assert stub.calls == 4
        assert result.status == "error" and result.error_kind == "out_of_set"
        step = result.step("order")
        assert "Great" in step.raw and "after correction" in step.raw
        assert result.score is None


def test_transient_faults_are_retried_with_a_bound():
    with StubServer(fault_plan={0: "429", 1: "500"}) as stub:
        result = Engine(meeting(), judge_for(stub, retries=3)).run_sync(CASE)
        assert result.score == 1.0
        assert result.step("extract").retries == 2
        assert result.step("extract").calls[0].retry_kinds == ["429", "5xx"]
    with StubServer(fault_plan={i: "500" for i in range(10)}) as stub:
        result = Engine(meeting(), judge_for(stub, retries=2)).run_sync(CASE)
        assert stub.calls == 3  # one try + two retries, then the step fails
        assert result.status == "error" and result.error_kind == "5xx"


def test_timeout_is_reported_as_timeout():
    with StubServer(fault_plan={0: "timeout", 1: "timeout"}, hang=5) as stub:
        result = Engine(meeting(), judge_for(stub, retries=1, timeout=0.3)).run_sync(CASE)
        assert result.error_kind == "timeout", result.error
        call = result.step("extract").calls[0]
        assert call.retries == 1 and call.error_kind == "timeout"
        # a pooled connection left over from an earlier test's server may fail before
        # reaching this stub (retried as "connection"), so the stub sees one or two requests
        assert 1 <= stub.calls <= 2 and set(call.retry_kinds) <= {"timeout", "connection"}


def test_geval_weighted_by_logprobs_and_steps_generated_once(tmp_path):
    graph = load_file("graphs/refund_policy.toml").graph
    graph.nodes["tone"].evaluation_steps = None
    graph.nodes["tone"].criteria = "Is the reply helpful and polite?"
    graph.nodes["tone"].model = "openai/gpt-4.1-nano"
    case = Case("r", {"input": "i", "actual_output": "o", "context": ["c"]})
    responder = Script([("true or false", {"reason": "fine", "verdict": False})])
    with StubServer(responder, score_logprobs={6: 0.25, 8: 0.75}) as stub:
        engine = Engine(graph, judge_for(stub, Cache(tmp_path)))
        result = engine.run_sync(case)
        tone = result.step("tone")
        assert tone.method == "logprobs" and tone.sampled == 7
        assert tone.answer == pytest.approx(7.5) and result.score == pytest.approx(0.75)
        assert [c.purpose for c in tone.calls] == ["geval_steps", "answer"]
        # silent failure 7: the geval leaf keeps its own model (not dropped on rebuild)
        assert stub.requests[1]["body"]["model"] == "gpt-4.1-nano"
        assert stub.requests[2]["body"]["logprobs"] is True
        assert "1. Read the input." in tone.prompt[1]["content"]
        engine.run_sync(Case("r2", {"input": "j", "actual_output": "p", "context": ["c"]}))
        purposes = [r["body"]["messages"][1]["content"][:20] for r in stub.requests]
        assert sum(p.startswith("Write the evaluation") for p in purposes) == 1


def test_geval_without_logprobs_uses_sampled_score():
    graph = load_file("graphs/refund_policy.toml").graph
    case = Case("r", {"input": "i", "actual_output": "o", "context": ["c"]})
    responder = Script([("true or false", {"reason": "fine", "verdict": False})])
    with StubServer(responder) as stub:
        result = Engine(graph, judge_for(stub, logprobs=False)).run_sync(case)
        assert result.step("tone").method == "sampled" and result.score == 0.7
        assert "logprobs" not in stub.requests[-1]["body"]


def test_malformed_http_body_is_retried_then_reported():
    with StubServer(fault_plan={0: "malformed", 1: "malformed"}) as stub:
        result = Engine(meeting(), judge_for(stub, retries=1)).run_sync(CASE)
        assert result.error_kind == "malformed" and stub.calls == 2


def test_fault_object_from_responder():
    responder = Script([("true or false", Fault("429"))])
    with StubServer(responder) as stub:
        result = Engine(meeting(), judge_for(stub, retries=1)).run_sync(CASE)
        assert result.error_kind == "429" and result.error_node == "present"
        assert stub.faults_sent == {"429": 2}


def test_include_reason_false_sends_no_reason_and_reports_none(stub):
    """Through litellm to the stub: the schema sent has no reason field, the result has no
    reason even though the stub volunteers one, and the call count is unchanged."""
    path = "graphs/meeting_summary.toml"
    text = Path(path).read_text(encoding="utf-8").replace(
        "threshold = 0.5", "threshold = 0.5\ninclude_reason = false", 1)
    from dagtui.graph.loader import load_text

    graph = load_text(text, path).graph
    result = Engine(graph, judge_for(stub)).run_sync(CASE)
    assert result.score == 1.0 and stub.calls == 3
    assert result.reason == ""
    for request in stub.requests:
        body = request["body"]
        assert list(body["response_format"]["json_schema"]["schema"]["properties"]) in (
            ["output"], ["verdict"])
        assert "reason" not in body["messages"][0]["content"].lower()

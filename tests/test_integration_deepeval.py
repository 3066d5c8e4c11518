"""`dagtui.integrations.deepeval.GraphMetric` inside the real DeepEval.

DeepEval's own `evaluate()` and `assert_test()` run a GraphMetric whose judge is litellm
against the loopback stub (tests/stub_server.py): the stub counts the calls (dagtui's, one per
judgement: 3 for a passing meeting summary, 2 for one stopped at the gate), a second
evaluation is served from dagtui's cache, and DeepEval's results carry the score, the
deciding reason, success and the path. Needs DeepEval (the interop venv: see README); skips
without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

deepeval = pytest.importorskip("deepeval", reason="DeepEval is in the interop extra/venv")

from deepeval import assert_test, evaluate  # noqa: E402
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig  # noqa: E402
from deepeval.test_case import ConversationalTestCase, LLMTestCase, ToolCall, Turn  # noqa: E402
from meeting_judge import BAD, GATE_REASON, GOOD, MEETING, headings_judge  # noqa: E402
from stub_server import StubServer  # noqa: E402

from dagtui.integrations.deepeval import (  # noqa: E402
    ConversationalGraphMetric,
    GraphMetric,
    case_from_test_case,
)
from dagtui.judges.base import CallbackJudge  # noqa: E402

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
QUIET = DisplayConfig(show_indicator=False, print_results=False)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # .dagtui/ (cache, traces) and DeepEval's files land here
    return tmp_path


def metric(stub: StubServer, **options: Any) -> Any:
    return GraphMetric(MEETING, judge="openai/gpt-4.1-mini",
                       judge_options={"api_base": stub.base_url, "api_key": "test",
                                      **options})


def test_evaluate_runs_the_graph_on_dagtuis_engine(workdir: Path) -> None:
    cases = [LLMTestCase(input="summarise", actual_output=GOOD["actual_output"], name="good"),
             LLMTestCase(input="summarise", actual_output=BAD["actual_output"], name="bad one")]
    with StubServer(headings_judge()) as stub:
        result = evaluate(cases, [metric(stub)], display_config=QUIET)
        assert stub.calls == 3 + 2
        by_name = {r.name: r for r in result.test_results}
        good, bad = by_name["good"].metrics_data[0], by_name["bad one"].metrics_data[0]
        assert good.name == "Format Correctness"
        assert (good.score, good.success) == (1.0, True)
        assert (bad.score, bad.success) == (0.0, False)
        assert bad.reason == GATE_REASON
        assert "path: extract ; present=false → score 0" in bad.verbose_logs
        assert f"present (binary): false — {GATE_REASON}" in bad.verbose_logs
        assert "trace: .dagtui/traces/meeting_summary.bad-one.trace.json" in bad.verbose_logs
        assert (workdir / ".dagtui" / "traces" / "meeting_summary.good.trace.json").is_file()
        # dagtui's cache answers the second evaluation: no call reaches the stub
        evaluate(cases, [metric(stub)], display_config=QUIET)
        assert stub.calls == 5


def test_assert_test_and_the_metrics_own_fields(workdir: Path) -> None:
    with StubServer(headings_judge()) as stub:
        good = metric(stub, cache=False)
        assert_test(LLMTestCase(input="x", actual_output=GOOD["actual_output"]), [good])
        with pytest.raises(AssertionError, match="Format Correctness"):
            assert_test(LLMTestCase(input="x", actual_output=BAD["actual_output"]),
                        [metric(stub, cache=False)])
        direct = metric(stub, cache=False)
        score = direct.measure(LLMTestCase(input="x", actual_output=BAD["actual_output"]))
        assert stub.calls == 3 + 2 + 2
    assert score == 0.0 and direct.success is False and direct.calls == 2
    assert direct.path == "extract ; present=false → score 0"
    assert direct.verdicts["present"]["answer"] is False
    assert direct.verdicts["present"]["reason"] == GATE_REASON
    assert direct.threshold == 0.5 and direct.evaluation_model == "openai/gpt-4.1-mini"
    assert direct.trace is not None and direct.trace.name.startswith("meeting_summary.case-")


def test_sync_evaluate_with_a_judge_instance_and_a_threshold(workdir: Path) -> None:
    """DeepEval's synchronous mode calls `measure`; a dagtui Judge instance answers (no
    model), and `threshold=` overrides the graph's 0.5: two swapped headings score 0.4."""
    asked: list[str] = []

    def answer(ask: Any) -> Any:
        asked.append(ask.node.id)
        return {"task": "Body\nIntro\nConclusion", "binary": True,
                "non_binary": "Two headings swapped"}[ask.kind]

    case = LLMTestCase(input="x", actual_output="Body\nIntro\nConclusion", name="swapped")
    strict = GraphMetric(MEETING, judge=CallbackJudge(answer))
    lenient = GraphMetric(MEETING, judge=CallbackJudge(answer), threshold=0.3)
    result = evaluate([case], [strict, lenient], display_config=QUIET,
                      async_config=AsyncConfig(run_async=False))
    data = result.test_results[0].metrics_data
    assert [(d.score, d.success, d.threshold) for d in data] == [(0.4, False, 0.5),
                                                                 (0.4, True, 0.3)]
    assert asked == ["extract", "present", "order"] * 2


def test_test_cases_become_dagtui_cases() -> None:
    case = LLMTestCase(input="q", actual_output="a", retrieval_context=["r1"],
                       tools_called=[ToolCall(name="search", input_parameters={"q": "x"})],
                       metadata={"k": 1})
    plain = case_from_test_case(case)
    assert plain.fields["tools_called"][0]["name"] == "search"
    assert plain.fields["retrieval_context"] == ["r1"] and plain.fields["metadata"] == {"k": 1}
    talk = ConversationalTestCase(turns=[Turn(role="user", content="hi"),
                                         Turn(role="assistant", content="hello")],
                                  scenario="greeting")
    plain = case_from_test_case(talk)
    assert [t["role"] for t in plain.turns] == ["user", "assistant"]
    assert plain.fields["scenario"] == "greeting"
    assert issubclass(ConversationalGraphMetric, deepeval.metrics.BaseConversationalMetric)


DEEPEVAL_TEST_FILE = '''
from deepeval import assert_test
from deepeval.test_case import LLMTestCase

from dagtui.integrations.deepeval import GraphMetric
from dagtui.judges.base import CallbackJudge


def answer(ask):
    passing = ask.case.get("input") == "passing"
    return {{"task": "Intro", "binary": passing, "non_binary": "Correct order"}}[ask.kind]


def metric():
    return GraphMetric({graph!r}, judge=CallbackJudge(answer))


def test_passing():
    assert_test(LLMTestCase(input="passing", actual_output="x passing"), [metric()])


def test_failing():
    assert_test(LLMTestCase(input="failing", actual_output="x failing"), [metric()])
'''


def test_deepeval_test_run(workdir: Path) -> None:
    """`deepeval test run` (DeepEval's pytest wrapper) runs GraphMetric assertions."""
    (workdir / "test_graphs.py").write_text(DEEPEVAL_TEST_FILE.format(graph=str(MEETING)))
    exe = Path(sys.executable).with_name("deepeval")
    proc = subprocess.run([str(exe), "test", "run", "test_graphs.py"], capture_output=True,
                          text=True, timeout=240, stdin=subprocess.DEVNULL,
                          env={**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "1"})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Pass Rate: 50.0% | Passed: 1 | Failed: 1" in out, out[-3000:]
    assert "Format Correctness" in out


MULTI = """
[metric]
name = "Politeness"
multi_turn = true
[nodes.polite]
type = "binary"
criteria = "Did the assistant stay polite in the last exchange?"
params = ["role", "content", "scenario"]
turn_window = [2, 3]
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
"""


def test_conversational_graph_metric_in_evaluate(workdir: Path) -> None:
    """A multi-turn graph judges DeepEval conversations; the judge sees the turns."""
    seen: list[list[str]] = []

    def answer(ask: Any) -> Any:
        turns = [t["content"] for t in ask.case.turns]
        seen.append(turns)
        return ("rude" not in turns[-1], "checked the last reply")

    graph = workdir / "polite.toml"
    graph.write_text(MULTI)
    talks = [ConversationalTestCase(name=name, scenario="refund", turns=[
        Turn(role="user", content="hi"), Turn(role="assistant", content="hello"),
        Turn(role="user", content="refund?"), Turn(role="assistant", content=reply)])
        for name, reply in (("kind", "of course"), ("curt", "rude: no"))]
    result = evaluate(talks, [ConversationalGraphMetric(graph, judge=CallbackJudge(answer))],
                      display_config=QUIET)
    by_name = {r.name: r.metrics_data[0] for r in result.test_results}
    assert (by_name["kind"].score, by_name["kind"].success) == (1.0, True)
    assert (by_name["curt"].score, by_name["curt"].success) == (0.0, False)
    assert by_name["curt"].reason == "checked the last reply"
    assert sorted(t[-1] for t in seen) == ["of course", "rude: no"]

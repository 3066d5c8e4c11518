"""Each of DeepEval's DAGMetric silent failures (numbered 1-7 below) is refused or made visible.

Where the validator refuses a graph, the engine refuses it too (the same check); the runtime
guards are also tested with validation off, so a graph that slips past still fails loudly.
"""

from __future__ import annotations

import pytest

from dagtui.graph.loader import GraphError, load_text
from dagtui.graph.validate import validate
from dagtui.judges import CallbackJudge
from dagtui.run.cases import Case, CaseError
from dagtui.run.engine import Engine


def graph_of(text: str):
    res = load_text(text, "g.toml")
    assert res.graph is not None and not [d for d in res.diagnostics if d.is_error]
    return res.graph


def answer_true(ask):
    if ask.kind == "task":
        return "evidence"
    if ask.kind == "non_binary":
        return ask.prompt.labels[0]
    if ask.kind == "geval":
        return 5
    return True


def codes(graph):
    return {d.code for d in validate(graph)}


# 1. a judgement node reached only through a verdict, with no params and no task parent
BLIND = """
[nodes.gate]
type = "binary"
criteria = "Is the answer on topic?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "blind" }]
[nodes.blind]
type = "binary"
criteria = "Is it good?"
verdicts = [{ verdict = false, score = 3 }, { verdict = true, score = 10 }]
"""


def test_1_judgement_with_nothing_to_judge_is_warned_and_noted():
    graph = graph_of(BLIND)
    assert "DAG101" in codes(graph)
    result = Engine(graph, CallbackJudge(answer_true)).run_sync(Case("c", {"actual_output": "x"}))
    blind = result.step("blind")
    assert blind is not None and any("DAG101" in n for n in blind.notes)
    assert "no evidence" in blind.notes[0]


# 2. required params of nodes below a verdict are checked before any call
BELOW = """
[nodes.gate]
type = "binary"
criteria = "Is there an answer?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "match" }]
[nodes.match]
type = "binary"
criteria = "Does the answer match the expected output?"
params = ["actual_output", "expected_output"]
verdicts = [{ verdict = false, score = 2 }, { verdict = true, score = 10 }]
"""


def test_2_missing_param_below_a_verdict_is_named_before_any_call():
    asked: list[str] = []
    judge = CallbackJudge(lambda ask: asked.append(ask.node.id) or answer_true(ask))
    engine = Engine(graph_of(BELOW), judge)
    with pytest.raises(CaseError) as info:
        engine.run_sync(Case("no expected", {"actual_output": "x"}, file="c.jsonl", line=7))
    msg = str(info.value)
    assert "c.jsonl:7" in msg and "'no expected'" in msg
    assert "node 'match' needs 'expected_output'" in msg
    assert asked == []  # not one call was made


# 3. two scoring leaves in one run
TWO_LEAVES = """
[nodes.t]
type = "task"
instructions = "Extract the claims."
output_label = "Claims"
params = ["actual_output"]
children = ["a", "b"]
[nodes.a]
type = "binary"
criteria = "Are the claims supported?"
verdicts = [{ verdict = false, score = 0 }, { verdict = true, score = 10 }]
[nodes.b]
type = "binary"
criteria = "Are the claims polite?"
verdicts = [{ verdict = false, score = 2 }, { verdict = true, score = 8 }]
"""


def test_3_two_leaves_refused_and_a_runtime_error():
    graph = graph_of(TWO_LEAVES)
    assert "DAG016" in codes(graph)
    with pytest.raises(GraphError):
        Engine(graph, CallbackJudge(answer_true))
    result = Engine(graph, CallbackJudge(answer_true), validate=False).run_sync(
        Case("c", {"actual_output": "x"}))
    assert result.status == "error" and result.error_kind == "graph"
    assert "more than one leaf" in result.error and "a (score 10)" in result.error
    assert "b (score 8)" in result.error and result.score is None


# 4. a node shared across verdicts of different judgements
SHARED = """
[nodes.p]
type = "binary"
criteria = "Is it polite?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "shared" }]
[nodes.q]
type = "binary"
criteria = "Is it correct?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 1 }, { verdict = true, then = "shared" }]
[nodes.shared]
type = "binary"
criteria = "Is it complete?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 5 }, { verdict = true, score = 10 }]
"""


def test_4_shared_node_is_refused_and_runs_once_when_both_parents_arrive():
    graph = graph_of(SHARED)
    assert "DAG016" in codes(graph)  # p=false and q=false score twice
    with pytest.raises(GraphError):
        Engine(graph, CallbackJudge(answer_true))
    asked: list[str] = []

    def both_true(ask):
        asked.append(ask.node.id)
        return True

    engine = Engine(graph, CallbackJudge(both_true), validate=False)
    result = engine.run_sync(Case("c", {"actual_output": "x"}))
    assert asked.count("shared") == 1 and result.leaf == "shared" and result.score == 1.0
    both_false = engine.run_sync(Case("d", {"actual_output": "x"}),
                                 overrides={"p": False, "q": False})
    assert both_false.status == "error" and "more than one leaf" in both_false.error
    assert "shared" not in [s.node for s in both_false.steps]


# 5. a graph of task nodes only (the last node is a task): no score
TASKS_ONLY = """
[nodes.t1]
type = "task"
instructions = "Summarise."
output_label = "Summary"
params = ["actual_output"]
children = ["t2"]
[nodes.t2]
type = "task"
instructions = "Shorten."
output_label = "Short"
"""


def test_5_no_leaf_is_refused_and_a_runtime_error():
    graph = graph_of(TASKS_ONLY)
    assert "DAG015" in codes(graph) or "DAG018" in codes(graph)
    with pytest.raises(GraphError):
        Engine(graph, CallbackJudge(answer_true))
    result = Engine(graph, CallbackJudge(answer_true), validate=False).run_sync(
        Case("c", {"actual_output": "x"}))
    assert result.status == "error" and "no leaf reached" in result.error
    assert "'t2'" in result.error and result.score is None


# 6. unsupported params fail when the graph is loaded, not at run time
def test_6_unknown_param_refused_before_running(tmp_path):
    import dagtui

    path = tmp_path / "bad.toml"
    path.write_text(BELOW.replace('"expected_output"]', '"mcp_tools_called"]'))
    with pytest.raises(GraphError) as info:
        dagtui.load(path)
    assert any(d.code == "DAG006" and d.line > 0 for d in info.value.diagnostics)


# 7. a G-Eval leaf keeps its own settings (model, steps) when it runs
GEVAL = """
[nodes.gate]
type = "binary"
criteria = "On topic?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "tone" }]
[nodes.tone]
type = "geval"
name = "Tone"
params = ["actual_output"]
evaluation_steps = ["Is it polite?", "Is it clear?"]
model = "openai/gpt-4.1-nano"
"""


def test_7_geval_leaf_keeps_its_model_and_steps():
    seen = {}

    def fn(ask):
        seen[ask.node.id] = ask.model
        return 9 if ask.kind == "geval" else True

    result = Engine(graph_of(GEVAL), CallbackJudge(fn)).run_sync(Case("c", {"actual_output": "x"}))
    assert seen == {"gate": None, "tone": "openai/gpt-4.1-nano"}
    prompt = result.step("tone").prompt[1]["content"]
    assert "1. Is it polite?\n2. Is it clear?" in prompt
    assert result.score == 0.9

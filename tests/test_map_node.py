"""The map node (`type = "map"`, dagtui/graph/mapping.py, dagtui/run/map_run.py): a task's
list judged one item per call, against the stub judge scripted per item over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from stub_server import Fault, StubServer, first_user

from dagtui.export.refusals import deepeval_refusals
from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.loader import load_text
from dagtui.graph.mapping import aggregate, split_items
from dagtui.graph.paths import analyze
from dagtui.graph.starters import starter_text
from dagtui.judges import CallbackJudge, LabelsJudge, LiteLLMJudge
from dagtui.judges.cache import Cache
from dagtui.labels.check import label_problems
from dagtui.run.cases import Case
from dagtui.run.engine import Engine

MODEL = "openai/stub-judge"
CLAIMS = ["Paris is in France", "Water boils at 100 C", "The sun is a star",
          "The moon is cheese", "Cats are reptiles"]
SUPPORTED = set(CLAIMS[:3])


def graph_text(aggregate_line: str = 'aggregate = "fraction"', extra: str = "",
               verdicts: bool = False) -> str:
    tail = ("verdicts = [\n  { verdict = true, score = 10 },\n  { verdict = false, score = 0 },\n]\n"
            if verdicts else "")
    return f'''
[metric]
name = "claims"
threshold = 0.8
model = "{MODEL}"

[nodes.extract]
type = "task"
instructions = "List the claims, one per line."
output_label = "Claim"
params = ["actual_output"]
children = ["supported"]

[nodes.supported]
type = "map"
criteria = "Is this claim supported by the context?"
params = ["context"]
{aggregate_line}
{extra}
{tail}'''


def checked(text: str) -> CheckedGraph:
    loaded = load_text(text)
    assert not loaded.diagnostics, loaded.diagnostics
    chk = CheckedGraph.of_graph(loaded.graph)
    assert not chk.errors, chk.errors
    return chk


def per_item(claims: list[str], unsure: set[str] = frozenset(),  # type: ignore[assignment]
             fail: set[str] = frozenset()):  # type: ignore[assignment]
    """A stub responder: the claims for the task, then true for a supported claim."""

    def answer(body):
        text = first_user(body)
        if '"output"' in text:
            return {"reason": "listed", "output": "\n".join(claims)}
        item = text.split("Claim:\n", 1)[1].split("\n\n", 1)[0]
        if item in fail:
            return Fault("500")
        if item in unsure:
            return {"reason": "the context says nothing of it", "verdict": "cannot tell"}
        return {"reason": "checked", "verdict": item in SUPPORTED}

    return answer


CASE = Case("five", {"actual_output": "...", "context": "Paris, water, the sun."})


def judge_for(stub: StubServer, cache_dir: Path | None = None) -> LiteLLMJudge:
    return LiteLLMJudge(MODEL, api_base=stub.base_url, api_key="test", retries=0,
                        backoff=0.01, cache=Cache(cache_dir) if cache_dir else None)


def test_items_are_lines_or_a_json_list():
    assert split_items("- a\n\n2. b\n  c  ") == ["a", "b", "c"]
    assert split_items('["x", "y"]') == ["x", "y"]
    assert split_items(["x", 3]) == ["x", "3"]
    assert split_items("") == []


def test_aggregates_are_exact():
    five = [True, True, True, False, False]
    assert aggregate("fraction", five, False).score == 6.0
    assert aggregate("all", five, False).verdict is False
    assert aggregate("any", five, False).verdict is True
    assert aggregate({"at_least": 0.6}, five, False).verdict is True  # 3/5 == 0.6 exactly
    assert aggregate({"at_least": 0.8}, [True] * 4 + [False], False).verdict is True
    assert aggregate("fraction", [True, True, False], False).score == 20 / 3
    assert aggregate("fraction", [], True).score == 10.0
    assert aggregate("all", [], False).verdict is False


def test_five_claims_three_supported_score_six_and_fail_all(tmp_path):
    with StubServer(responder=per_item(CLAIMS)) as stub:
        judge = judge_for(stub)
        result = Engine(checked(graph_text()), judge).run_sync(CASE)
        assert result.score == 0.6 and result.success is False
        # one call for the task, one per claim
        assert len(stub.requests) == 1 + 5
        step = result.step("supported")
        assert step is not None and step.leaf_score == 6.0
        assert [i["answer"] for i in step.items] == [True, True, True, False, False]
        # each item's request holds that item alone
        item_prompts = [first_user(r["body"]) for r in stub.requests[1:]]
        for claim in CLAIMS:
            holding = [p for p in item_prompts if claim in p]
            assert len(holding) == 1
            assert all(other not in holding[0] for other in CLAIMS if other != claim)
        all_graph = checked(graph_text('aggregate = "all"', verdicts=True))
        result = Engine(all_graph, judge).run_sync(CASE)
        assert result.status == "fail" and result.score == 0.0
        assert result.path[-1].verdict is False


def test_rerun_sends_no_call(tmp_path):
    with StubServer(responder=per_item(CLAIMS)) as stub:
        Engine(checked(graph_text()), judge_for(stub, tmp_path)).run_sync(CASE)
        first = len(stub.requests)
        again = Engine(checked(graph_text()), judge_for(stub, tmp_path)).run_sync(CASE)
        assert first == 6 and len(stub.requests) == first
        assert again.score == 0.6 and again.calls == 0
        assert all(i["cached"] for i in again.step("supported").items)


def test_empty_list_and_cap():
    with StubServer(responder=per_item([])) as stub:
        judge = judge_for(stub)
        empty_true = Engine(checked(graph_text(extra="empty = true")), judge).run_sync(CASE)
        assert empty_true.score == 1.0 and len(stub.requests) == 1
        empty_false = Engine(checked(graph_text()), judge).run_sync(CASE)
        assert empty_false.score == 0.0
    with StubServer(responder=per_item(CLAIMS)) as stub:
        capped = Engine(checked(graph_text(extra="max_items = 4")), judge_for(stub)).run_sync(CASE)
        assert len(stub.requests) == 1 + 4
        assert capped.score == 0.75  # 3 of the 4 judged
        items = capped.step("supported").items
        assert items[-1] == {"item": "Cats are reptiles", "judged": False}
        assert any("1 not judged" in n for n in capped.step("supported").notes)


def test_one_items_error_fails_only_that_case():
    with StubServer(responder=per_item(CLAIMS, fail={"The moon is cheese"})) as stub:
        engine = Engine(checked(graph_text()), judge_for(stub))
        bad = engine.run_sync(CASE)
        assert bad.status == "error" and bad.score is None
        assert "The moon is cheese" in (bad.error or "") and bad.error_node == "supported"
    other = Case("fine", {"actual_output": "...", "context": "..."})
    with StubServer(responder=per_item(CLAIMS[:3])) as stub:
        good = Engine(checked(graph_text()), judge_for(stub)).run_sync(other)
        assert good.status == "pass" and good.score == 1.0


def test_path_analysis_counts_one_call_per_item():
    capped = analyze(checked(graph_text(extra="max_items = 20")).require())
    assert capped.per_item == ["supported"] and capped.item_cap == 20
    assert capped.min_calls == 1 and capped.max_calls == 21
    assert capped.calls_text() == ("1–21 calls/case (expected 1.00 + 1 per item of "
                                   "supported, at most 20 items)")
    uncapped = analyze(checked(graph_text()).require())
    assert uncapped.item_cap is None
    assert uncapped.calls_text() == ("1+ calls/case (expected 1.00 + 1 per item of "
                                     "supported, no cap)")


def test_validate_warns_and_export_refuses_naming_the_node():
    chk = checked(graph_text())
    assert [d.code for d in chk.diagnostics if d.node == "supported"] == ["DAG119"]
    refusals = deepeval_refusals(chk.require())
    assert any("supported" in r.nodes and "map" in r.message for r in refusals)


@pytest.mark.parametrize(("snippet", "code"), [
    ('aggregate = "most"', "DAG026"),
    ('aggregate = { at_least = 2 }', "DAG026"),
])
def test_bad_map_settings(snippet, code):
    loaded = load_text(graph_text(snippet))
    errors = CheckedGraph.of_graph(loaded.graph).errors
    assert code in [d.code for d in errors]


def test_fraction_leaf_takes_no_verdicts_and_all_needs_them():
    with_verdicts = CheckedGraph.of_graph(load_text(graph_text(verdicts=True)).graph)
    assert "DAG026" in [d.code for d in with_verdicts.errors]
    without = CheckedGraph.of_graph(load_text(graph_text('aggregate = "all"')).graph)
    assert "DAG014" in [d.code for d in without.errors]


def test_claims_starter_validates():
    loaded = load_text(starter_text("claims"))
    chk = CheckedGraph.of_graph(loaded.graph)
    assert not chk.errors
    assert chk.require().nodes["supported"].type == "map"


def test_item_labels_are_checked_and_answer_each_item():
    graph = checked(graph_text()).require()
    ok = Case("c", {"actual_output": "x", "context": "y"},
              expected={"extract": "a\nb\nc", "supported": [True, "false", True]})
    assert label_problems(graph, ok) == []
    result = Engine(graph, LabelsJudge()).run_sync(ok)
    assert result.score == round(20 / 3 / 10, 6)
    by_text = Case("d", {"actual_output": "x", "context": "y"},
                   expected={"extract": "a\nb", "supported": {"a": True, "b": True}})
    assert Engine(graph, LabelsJudge()).run_sync(by_text).score == 1.0
    bad = Case("e", {"actual_output": "x", "context": "y"},
               expected={"supported": [True, "maybe"]})
    (problem,) = label_problems(graph, bad)
    assert problem.kind == "not_a_verdict" and "item 2" in problem.message
    shape = Case("f", {"actual_output": "x", "context": "y"}, expected={"supported": 7})
    assert label_problems(graph, shape)[0].kind == "wrong_shape"


def test_picture_and_json_show_the_node():
    from dagtui.export.dot import to_dot
    from dagtui.export.mermaid import to_mermaid

    graph = checked(graph_text()).require()
    assert "box3d" in to_dot(graph)
    assert '[("' in to_mermaid(graph)
    result = Engine(graph, CallbackJudge(
        lambda ask: "a\nb" if ask.kind == "task" else True)).run_sync(CASE)
    data = json.loads(json.dumps(result.to_dict()))
    assert [i["item"] for i in data["steps"][1]["items"]] == ["a", "b"]


def test_item_labels_are_calibrated_per_item_and_per_case():
    from sklearn.metrics import cohen_kappa_score

    from dagtui.calibration.core import calibrate
    from dagtui.calibration.report import render_text

    graph = checked(graph_text()).require()
    # the judge: supported claims true, the rest false (per_item); the labels disagree on
    # one item of the first case and on none of the second
    cases = [
        Case("one", {"actual_output": "x", "context": "y"},
             expected={"extract": "\n".join(CLAIMS),
                       "supported": [True, True, False, False, False]}),
        Case("two", {"actual_output": "x", "context": "y"},
             expected={"extract": "\n".join(CLAIMS),
                       "supported": {c: c in SUPPORTED for c in CLAIMS}}),
    ]
    with StubServer(responder=per_item(CLAIMS)) as stub:
        cal = calibrate(graph, cases, judge=judge_for(stub))
    nc = cal.nodes["supported"]
    judge_says = [c in SUPPORTED for c in CLAIMS] * 2
    labels = [True, True, False, False, False] + judge_says[:5]
    assert nc.cases == 10 and nc.agreement == 0.9
    assert nc.kappa == pytest.approx(cohen_kappa_score(labels, judge_says), abs=1e-12)
    assert nc.item_cases == 2 and nc.case_agreement == 0.5  # 4.0 vs 6.0, then 6.0 = 6.0
    assert [d["case"] for d in nc.disagreements] == ["one"]
    assert "item 3" in nc.disagreements[0]["reason"]
    assert "per case, the aggregate agrees in 50% of 2 cases" in " ".join(
        render_text(cal).split())
    first = next(o for o in cal.outcomes if o.case == "one")
    assert first.blame == "supported" and "the item labels to 4.0" in first.why

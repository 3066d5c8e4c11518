"""`unsure` (dagtui/graph/unsure.py): a judgement or map node may let its judge answer
"cannot tell from the material", and says what that does — against the stub judge over real
HTTP, and through `dagtui run` for the summary, JSON, JUnit and exit codes."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from stub_server import StubServer, first_user, smart_answer
from test_map_node import checked
from test_map_node import graph_text as map_graph

from dagtui.cli import main
from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.loader import load_file, load_text
from dagtui.graph.paths import analyze
from dagtui.judges import LiteLLMJudge
from dagtui.judges.prompts import build_prompt
from dagtui.run.cases import Case, load_cases
from dagtui.run.engine import Engine

ROOT = Path(__file__).resolve().parent.parent
MODEL = "openai/stub-judge"
CASE = Case("c1", {"actual_output": "Bought: March.", "input": "When was it bought?"})


def graph_text(unsure: str | None, extra: str = "") -> str:
    line = f"unsure = {unsure}\n" if unsure is not None else ""
    return f'''
[metric]
name = "dates"
threshold = 0.5
model = "{MODEL}"

[nodes.dated]
type = "binary"
criteria = "Was the purchase within 30 days?"
params = ["input", "actual_output"]
{line}verdicts = [
  {{ verdict = true, score = 10 }},
  {{ verdict = false, score = 0 }},
]
{extra}'''


SECOND = '''
[nodes.second]
type = "binary"
criteria = "Second opinion: was the purchase within 30 days?"
params = ["input", "actual_output"]
verdicts = [
  { verdict = true, score = 8 },
  { verdict = false, score = 2 },
]
'''


def cannot_tell(body):
    """"cannot tell" for the first question, else the stub's usual answer (true)."""
    if "Was the purchase within 30 days?" in first_user(body) \
            and "Second opinion" not in first_user(body):
        return {"reason": "the date is missing", "verdict": "cannot tell"}
    return smart_answer(body)


def run(text: str) -> tuple[object, StubServer]:
    with StubServer(responder=cannot_tell) as stub:
        judge = LiteLLMJudge(MODEL, api_base=stub.base_url, api_key="test", retries=0)
        return Engine(checked(text), judge).run_sync(CASE), stub


#: the stub's requests for every shipped graph and its cases, hashed; recorded with the code
#: before `unsure` existed (commit 68aef7e): a graph without `unsure` must send these bytes
SHIPPED_REQUESTS = (36, "500e359961fce62375838bcee336106316390a13f56b64393ede8603af6590ee")


def test_without_unsure_the_requests_are_byte_identical():
    with StubServer() as stub:
        judge = LiteLLMJudge(MODEL, api_base=stub.base_url, api_key="test", retries=0)
        for name in ("code_review", "meeting_summary", "refund_policy", "tool_selection"):
            engine = Engine(load_file(str(ROOT / "graphs" / f"{name}.toml")).graph, judge)
            for case in load_cases(str(ROOT / "graphs" / f"{name}.cases.jsonl")):
                engine.run_sync(case)
        bodies = sorted(json.dumps(r["body"], sort_keys=True, ensure_ascii=False)
                        for r in stub.requests)
    digest = hashlib.sha256("\n".join(bodies).encode()).hexdigest()
    assert (len(bodies), digest) == SHIPPED_REQUESTS


def test_cannot_tell_is_offered_only_when_declared():
    plain = checked(graph_text(None)).require()
    declared = checked(graph_text('"unscored"')).require()
    p0 = build_prompt(plain, plain.nodes["dated"], CASE.fields, {})
    p1 = build_prompt(declared, declared.nodes["dated"], CASE.fields, {})
    assert "cannot tell" not in json.dumps(p0.messages) + json.dumps(p0.schema)
    assert '"cannot tell" when the material does not settle' in p1.messages[1]["content"]
    assert p1.schema["properties"]["verdict"] == {
        "anyOf": [{"type": "boolean"}, {"type": "string", "enum": ["cannot tell"]}]}


@pytest.mark.parametrize("mode", ['"unscored"', '"human"'])
def test_unscored_and_human_end_the_case_unscored(mode):
    result, stub = run(graph_text(mode))
    assert result.status == "unscored" and result.score is None and result.error is None
    assert result.unscored_node == "dated" and "could not tell" in result.unscored
    assert result.steps[0].unsure and result.steps[0].unscored
    assert result.to_dict()["unscored"] == result.unscored


def test_score_ends_the_path_with_its_score():
    result, _ = run(graph_text("{ score = 5 }"))
    assert result.status == "pass" and result.score == 0.5
    assert result.path[-1].verdict == "cannot tell" and result.steps[0].unsure


def test_then_routes_to_another_node():
    stronger = SECOND.replace('params = ["input", "actual_output"]\n',
                              'params = ["input", "actual_output"]\nmodel = "openai/stronger"\n')
    text = graph_text('{ then = "second" }', stronger)
    result, stub = run(text)
    assert [p.node for p in result.path] == ["dated", "second"]
    assert result.score == 0.8 and len(stub.requests) == 2
    # the second opinion is the stronger model's
    assert [r["body"]["model"] for r in stub.requests] == ["stub-judge", "stronger"]
    report = analyze(checked(text).require())
    assert report.dead_nodes == [] and 0.8 in report.reachable_scores


def test_a_map_items_unsure_applies_the_nodes_rule():
    text = map_graph(extra="unsure = { score = 3 }")

    def answer(body):
        text = first_user(body)
        if '"output"' in text:
            return {"reason": "listed", "output": "a\nb"}
        return {"reason": "?", "verdict": "cannot tell" if "Claim:\nb" in text else True}

    with StubServer(responder=answer) as stub:
        judge = LiteLLMJudge(MODEL, api_base=stub.base_url, api_key="test", retries=0)
        result = Engine(checked(text), judge).run_sync(Case("c", {**CASE.fields,
                                                                   "context": "?"}))
    assert result.score == 0.3 and result.steps[1].unsure


def test_bad_unsure_values_are_dag026():
    for value in ('"maybe"', "{ score = 11 }", '{ then = "x", score = 1 }'):
        errors = CheckedGraph.of_graph(load_text(graph_text(value)).graph).errors
        assert "DAG026" in [d.code for d in errors], value
    unknown = CheckedGraph.of_graph(load_text(graph_text('{ then = "nowhere" }')).graph)
    assert "DAG008" in [d.code for d in unknown.errors]


def test_export_refuses_a_node_that_declares_unsure():
    from dagtui.export.refusals import deepeval_refusals

    refusals = deepeval_refusals(checked(graph_text('"unscored"')).require())
    assert any(r.nodes == ("dated",) and "unsure" in r.message for r in refusals)
    own_model = graph_text(None).replace('params = ["input", "actual_output"]\n',
                                         'params = ["input", "actual_output"]\n'
                                         'model = "openai/stronger"\n')
    (refusal,) = deepeval_refusals(checked(own_model).require())
    assert refusal.nodes == ("dated",) and "pins model 'openai/stronger'" in refusal.message


def write_case(tmp_path: Path) -> str:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"name": "no date", **CASE.fields}) + "\n"
                    + json.dumps({"name": "second", "input": "Which day?",
                                  "actual_output": "Bought: yesterday."}) + "\n")
    return str(path)


def test_run_counts_unscored_apart(tmp_path, capsys):
    graph = tmp_path / "g.toml"
    graph.write_text(graph_text('"unscored"'))
    cases = write_case(tmp_path)
    with StubServer(responder=cannot_tell) as stub:
        base = ["run", str(graph), "--cases", cases, "--model", MODEL, "--api-base",
                stub.base_url, "--retries", "0", "--no-cache", "-q"]
        code = main([*base, "--json", str(tmp_path / "r.json"),
                     "--junit", str(tmp_path / "r.xml")])
        out = " ".join(capsys.readouterr().out.split())
        strict = main([*base, "--fail-on-unscored"])
    assert code == 0 and strict == 1
    assert "2 cases, 0 passed, 0 failed, 0 judge errors, 2 unscored" in out
    assert "unsure 2 of 2 (100%)" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["unscored"] == 2 and report["exit_code"] == 0
    assert report["nodes"]["dated"]["unsure_rate"] == 1.0
    assert {r["status"] for r in report["results"]} == {"unscored"}
    suite = ET.parse(tmp_path / "r.xml").getroot()
    assert suite.get("skipped") == "2"
    skipped = suite.findall(".//skipped")
    assert len(skipped) == 2 and all("unscored: node 'dated'" in s.get("message", "")
                                     for s in skipped)


def test_reports_with_map_and_unscored_fit_their_schemas(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from dagtui.commands.schema import build_schema

    graph = tmp_path / "g.toml"
    graph.write_text(graph_text('"unscored"'))
    claims = tmp_path / "claims.toml"
    claims.write_text(_claims_graph())
    cases = write_case(tmp_path)
    with StubServer(responder=cannot_tell) as stub:
        for g in (graph, claims):
            main(["run", str(g), "--cases", cases, "--model", MODEL, "--api-base",
                  stub.base_url, "--retries", "0", "--no-cache", "-q",
                  "--json", str(tmp_path / f"{g.stem}.json"),
                  "--trace-dir", str(tmp_path / f"{g.stem}-traces")])
    report = jsonschema.Draft202012Validator(build_schema("report"))
    trace = jsonschema.Draft202012Validator(build_schema("trace"))
    for g in ("g", "claims"):
        doc = json.loads((tmp_path / f"{g}.json").read_text())
        assert list(report.iter_errors(doc)) == []
        for path in (tmp_path / f"{g}-traces").glob("*.json"):
            assert list(trace.iter_errors(json.loads(path.read_text()))) == []
    ran = json.loads((tmp_path / "claims.json").read_text())
    assert any(s.get("items") for r in ran["results"] for s in r["steps"])


def _claims_graph() -> str:
    from dagtui.graph.starters import starter_text

    return starter_text("claims").replace('model = "gpt-4.1-mini"', f'model = "{MODEL}"') \
        .replace('params = ["context"]', 'params = ["input"]')


def test_calibrate_counts_unsure_answers_and_labels():
    from dagtui.calibration.core import calibrate
    from dagtui.calibration.report import render_text

    graph = checked(graph_text("{ score = 5 }")).require()
    # the person's "unsure" label (dagtui.labels.check.UNSURE) and the judge's "cannot tell"
    cases = [Case("both", CASE.fields, expected={"dated": "unsure"}),
             Case("judge only", {**CASE.fields, "input": "When, again?"},
                  expected={"dated": True})]
    with StubServer(responder=cannot_tell) as stub:
        judge = LiteLLMJudge(MODEL, api_base=stub.base_url, api_key="test", retries=0)
        cal = calibrate(graph, cases, judge=judge)
    nc = cal.nodes["dated"]
    assert (nc.cases, nc.judge_unsure, nc.unsure, nc.unsure_both) == (1, 1, 1, 1)
    text = " ".join(render_text(cal).split())
    assert "dated labelled unsure in 1 (left out of kappa); the judge could not tell " \
           "either in 1" in text
    assert "dated: the judge could not tell in 1 of 1 case (100%)" in text

"""Deterministic check kinds: exact verdicts, no judge call, readable reasons."""

from __future__ import annotations

import json

import pytest

from dagtui.graph.checks import CheckError, PythonConsent, count, run_check
from dagtui.graph.loader import load_text
from dagtui.graph.model import CheckNode, Graph
from dagtui.judges import CallbackJudge
from dagtui.run.cases import Case
from dagtui.run.engine import Engine


def check(fields: dict, **settings) -> CheckNode:
    node, problems = CheckNode.from_toml({"type": "check", **fields, **settings})
    assert node is not None and problems == [], problems
    node.id = "c"
    return node


def run(node: CheckNode, case: dict, evidence: dict | None = None, graph: Graph | None = None):
    return run_check(node, graph or Graph(), case, evidence or {})


def test_regex_with_flags():
    node = check({"check": "regex", "param": "actual_output"}, pattern=r"^conclusion$",
                 flags="im")
    assert run(node, {"actual_output": "Intro\nConclusion"}).value is True
    assert run(node, {"actual_output": "Intro"}).value is False
    with pytest.raises(CheckError, match="unknown regex flag"):
        run(check({"check": "regex", "param": "input"}, pattern="x", flags="q"), {"input": ""})


def test_json_and_json_schema(tmp_path):
    node = check({"check": "json", "param": "actual_output"})
    assert run(node, {"actual_output": '{"a": 1}'}).value is True
    assert run(node, {"actual_output": "{a: 1}"}).value is False
    schema = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
    inline = check({"check": "json_schema", "param": "actual_output", "schema": schema})
    assert run(inline, {"actual_output": '{"name": "x"}'}).value is True
    bad = run(inline, {"actual_output": '{"name": 3}'})
    assert bad.value is False and "name" in bad.reason
    (tmp_path / "s.json").write_text(json.dumps(schema))
    graph = Graph(path=str(tmp_path / "g.toml"))
    by_path = check({"check": "json_schema", "param": "actual_output", "schema": "s.json"})
    assert run(by_path, {"actual_output": "{}"}, graph=graph).value is False


def test_length_units():
    assert count("one two  three", "words") == 3
    assert count("One. Two! Three?", "sentences") == 3
    node = check({"check": "length", "param": "actual_output"}, unit="sentences", max=2)
    assert run(node, {"actual_output": "A. B."}).value is True
    res = run(node, {"actual_output": "A. B. C."})
    assert res.value is False and "3 sentences" in res.reason


def test_contains_any_all_and_case():
    node = check({"check": "contains", "param": "actual_output"}, values=["Intro", "Body"],
                 mode="all")
    assert run(node, {"actual_output": "Intro / Body"}).value is True
    assert run(node, {"actual_output": "intro / body"}).value is False  # case-sensitive default
    insensitive = check({"check": "contains", "param": "actual_output"},
                        values=["Intro", "Body"], mode="all", case_sensitive=False)
    assert run(insensitive, {"actual_output": "intro / body"}).value is True
    any_node = check({"check": "contains", "param": "actual_output"}, values=["x", "Body"])
    assert run(any_node, {"actual_output": "Body"}).value is True


def test_equals_expected_output():
    node = check({"check": "equals", "param": "actual_output"})
    assert run(node, {"actual_output": " 42 \n", "expected_output": "42"}).value is True
    assert run(node, {"actual_output": "41", "expected_output": "42"}).value is False


def test_tools_modes():
    called = [{"name": "search", "input_parameters": {"q": "x"}}, {"name": "fetch"}]
    case = {"tools_called": called, "expected_tools": ["search"]}
    assert run(check({"check": "tools"}), case).value is True  # subset: expected were called
    assert run(check({"check": "tools"}, mode="exact"), case).value is False
    assert run(check({"check": "tools"}, mode="ordered"),
               {"tools_called": called, "expected_tools": ["search", "fetch"]}).value is True
    assert run(check({"check": "tools"}, mode="ordered"),
               {"tools_called": called, "expected_tools": ["fetch", "search"]}).value is False
    allow = check({"check": "tools"}, allowed=["search"])
    res = run(allow, {"tools_called": called})
    assert res.value is False and "fetch" in res.reason


def test_python_check_beside_the_graph(tmp_path):
    (tmp_path / "mychecks.py").write_text(
        "def grade(value, case):\n"
        "    return 'long' if len(value) > 5 else 'short'\n"
    )
    graph = Graph(path=str(tmp_path / "g.toml"))
    node = check({"check": "python", "param": "actual_output"}, function="mychecks:grade")
    allowed = PythonConsent(allow=True)  # python checks run only with the user's consent
    assert run_check(node, graph, {"actual_output": "abcdefg"}, {}, allowed).value == "long"
    with pytest.raises(CheckError, match="no module file 'nope_mod'"):
        run_check(check({"check": "python", "param": "input"}, function="nope_mod:f"), graph,
                  {"input": ""}, {}, allowed)


def test_check_reads_task_evidence_in_the_engine():
    text = """
[nodes.extract]
type = "task"
instructions = "List the headings."
output_label = "Headings"
params = ["actual_output"]
children = ["three"]
[nodes.three]
type = "check"
check = "regex"
evidence = "extract"
pattern = "Intro[\\\\s\\\\S]*Body[\\\\s\\\\S]*Conclusion"
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
"""
    graph = load_text(text).graph
    asked: list[str] = []

    def fn(ask):
        asked.append(ask.node.id)
        return "Intro\nBody\nConclusion"

    result = Engine(graph, CallbackJudge(fn)).run_sync(Case("c", {"actual_output": "..."}))
    assert asked == ["extract"]  # the check made no judge call
    step = result.step("three")
    assert step.source == "check" and step.answer is True and step.calls == []
    assert result.score == 1.0

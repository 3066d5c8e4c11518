"""Cases files: JSONL, JSON (list, test_cases, DeepEval goldens), TOML; errors with lines."""

from __future__ import annotations

import json

import pytest

from dagtui.run.cases import CaseError, load_cases, select_case


def test_jsonl_with_labels(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text(
        '{"name": "a", "actual_output": "x", "expected": {"present": true}, '
        '"expected_score": 1}\n\n'
        '{"name": "b", "actual_output": "y", "context": ["c1", "c2"]}\n'
    )
    cases = load_cases(p)
    assert [c.name for c in cases] == ["a", "b"]
    assert cases[0].expected == {"present": True} and cases[0].expected_score == 1.0
    assert cases[1].line == 3 and cases[1].get("context") == ["c1", "c2"]
    assert cases[1].where.endswith("c.jsonl:3")


def test_bad_jsonl_line_names_file_and_line(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"name": "a"}\n{"name": "b",}\n')
    with pytest.raises(CaseError) as info:
        load_cases(p)
    assert info.value.line == 2 and "c.jsonl:2:" in str(info.value)


def test_field_shape_errors(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"name": "a", "context": "not a list"}\n')
    with pytest.raises(CaseError, match="'context' must be a list"):
        load_cases(p)
    p.write_text('{"name": "a", "expected_score": 3}\n')
    with pytest.raises(CaseError, match="expected_score"):
        load_cases(p)
    p.write_text('{"name": "a"}\n{"name": "a"}\n')
    with pytest.raises(CaseError, match="duplicate case name"):
        load_cases(p)


def test_json_list_wrapped_and_goldens(tmp_path):
    items = [{"name": "a", "input": "q"}, {"input": "r", "actual_output": "s"}]
    (tmp_path / "l.json").write_text(json.dumps(items, indent=2))
    cases = load_cases(tmp_path / "l.json")
    assert [c.name for c in cases] == ["a", "case 2"] and cases[1].line == 6
    (tmp_path / "g.json").write_text(json.dumps({"goldens": items}))
    assert len(load_cases(tmp_path / "g.json")) == 2
    (tmp_path / "t.json").write_text(json.dumps({"test_cases": items}))
    assert load_cases(tmp_path / "t.json")[0].get("input") == "q"


def test_toml_cases_and_turns(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text(
        '[[cases]]\nname = "chat"\nscenario = "refund"\n'
        '[[cases.turns]]\nrole = "user"\ncontent = "hi"\n'
        '[[cases.turns]]\nrole = "assistant"\ncontent = "hello"\n'
    )
    (case,) = load_cases(p)
    assert case.line == 1 and len(case.turns) == 2 and case.get("scenario") == "refund"
    p.write_text('[[cases]]\nname = "bad"\n[[cases.turns]]\nrole = "user"\n')
    with pytest.raises(CaseError, match="turn 0 needs 'role' and 'content'"):
        load_cases(p)


def test_select_case_and_missing_file(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"name": "a"}\n{"name": "b"}\n')
    cases = load_cases(p)
    assert select_case(cases, "b").name == "b" and select_case(cases, "0").name == "a"
    with pytest.raises(CaseError, match="no case named"):
        select_case(cases, "zzz")
    with pytest.raises(CaseError, match="no such cases file"):
        load_cases(tmp_path / "missing.jsonl")


def test_shipped_cases_files_load():
    for name in ("meeting_summary", "refund_policy", "code_review"):
        cases = load_cases(f"graphs/{name}.cases.jsonl")
        assert cases and all(c.expected for c in cases)

"""The model's own type checks (`dagtui.graph.fieldtypes` through `TomlRecord.from_toml`).

Every field kind the model uses is tried with what TOML can hand over: the right type is
kept (int widened where a number is wanted, a list made a pair), anything else is left out
and reported with the words the loader prints after "must be". Also: saving drops defaults
and keeps field order, and `schema` in TOML is `schema_` in Python.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

import pytest

from dagtui.graph.fieldtypes import FieldProblem, Mismatch, checker_for, describe
from dagtui.graph.loader import load_text
from dagtui.graph.model import (
    BinaryNode,
    CheckNode,
    GEvalNode,
    Metric,
    TaskNode,
    Verdict,
    node_to_raw,
)

# (annotation, accepted value -> value kept, rejected values, words)
CASES: list[tuple[Any, list[tuple[Any, Any]], list[Any], str]] = [
    (str, [("x", "x"), ("", "")], [1, 1.5, True, None, ["x"], {}], "a string"),
    (int, [(3, 3), (-1, -1)], [True, False, 2.0, "3", None, [3]], "an integer"),
    (float, [(0.5, 0.5), (1, 1.0), (0, 0.0)], [True, "0.5", None, [0.5]], "a number"),
    (bool, [(True, True), (False, False)], [0, 1, "true", "yes", 1.0, None], "true or false"),
    (list[str], [(["a", "b"], ["a", "b"]), ([], []), (("a",), ["a"])],
     ["a", [1], ["a", None], {"a": 1}, None], "a list of strings"),
    (tuple[int, int], [([0, 1], (0, 1)), ((-2, 3), (-2, 3))],
     [[0], [0, 1, 2], [1.0, 2], [True, 2], ["1", "2"], "ab", {"a": 1}],
     "a two-item list of integers"),
    (dict[str, Any], [({"type": "object"}, {"type": "object"}), ({}, {})],
     [[], "x", 1, {1: "x"}], "a table"),
    (Literal["chars", "words"], [("chars", "chars")], ["lines", 1, None, True],
     "one of 'chars' or 'words'"),
    (bool | str, [(True, True), ("Yes", "Yes")], [1, 2.5, None, ["x"]],
     "true or false, or a string"),
    (int | float | None, [(3, 3), (2.5, 2.5), (None, None)], [True, "3", [1]], "a number"),
    (dict[str, Any] | str | None, [({"a": 1}, {"a": 1}), ("s.json", "s.json"), (None, None)],
     [3, ["a"], True], "a table or a string"),
    (list[str] | None, [(None, None), (["a"], ["a"])], ["a", [2]], "a list of strings"),
]


@pytest.mark.parametrize(("annotation", "good", "bad", "words"), CASES,
                         ids=[describe(c[0]) for c in CASES])
def test_checker_keeps_right_values_and_rejects_the_rest(
    annotation: Any, good: list[tuple[Any, Any]], bad: list[Any], words: str
) -> None:
    check = checker_for(annotation)
    assert describe(annotation) == words
    for value, kept in good:
        result = check(value)
        assert result == kept and type(result) is type(kept), (value, result)
    for value in bad:
        with pytest.raises(Mismatch) as caught:
            check(value)
        assert caught.value.wanted == words, value


def test_int_stays_int_in_a_number_union_and_becomes_float_in_a_float_field() -> None:
    assert type(checker_for(int | float | None)(3)) is int
    assert type(checker_for(float)(3)) is float


def test_containers_are_copied_not_shared() -> None:
    params = ["input"]
    schema = {"type": "object"}
    node, problems = CheckNode.from_toml({"type": "check", "schema": schema})
    task, _ = TaskNode.from_toml({"params": params})
    assert problems == [] and node is not None and task is not None
    assert node.schema_ == schema and node.schema_ is not schema
    assert task.params == params and task.params is not params


def test_from_toml_drops_and_reports_each_wrong_value() -> None:
    node, problems = CheckNode.from_toml({
        "type": "check", "check": "length", "unit": "lines", "min": 1.0, "max": 5,
        "case_sensitive": 0, "values": ["a", 2], "future_key": "ignored",
    })
    assert node is not None
    assert (node.check, node.unit, node.min, node.max) == ("length", None, None, 5)
    assert node.case_sensitive is None and node.values is None
    assert [p.key for p in problems] == ["unit", "min", "case_sensitive", "values"]
    assert [p.message for p in problems] == [
        "'unit' must be one of 'chars', 'words' or 'sentences' (got 'lines')",
        "'min' must be an integer (got 1.0)",
        "'case_sensitive' must be true or false (got 0)",
        "'values' must be a list of strings (got ['a', 2])",
    ]


def test_metric_threshold_is_a_float_and_bools_are_not_numbers() -> None:
    metric, problems = Metric.from_toml({"threshold": 1, "strict": True})
    assert problems == [] and metric is not None
    assert metric.threshold == 1.0 and type(metric.threshold) is float
    metric, problems = Metric.from_toml({"threshold": True, "strict": 1})
    assert metric is not None and metric.threshold == 0.5 and metric.strict is False
    assert [(p.key, p.wanted) for p in problems] == [
        ("threshold", "a number"), ("strict", "true or false")]


def test_a_record_without_its_required_field_is_not_built() -> None:
    verdict, problems = Verdict.from_toml({"score": 10})
    assert verdict is None
    assert problems == [FieldProblem.missing("verdict")]
    assert problems[0].message == "'verdict' is missing"
    verdict, problems = Verdict.from_toml({"verdict": 1})
    assert verdict is None and problems[0].message == (
        "'verdict' must be true or false, or a string (got 1)")


def test_nested_verdict_tables_become_records() -> None:
    node, problems = BinaryNode.from_toml({"criteria": "?", "verdicts": [
        {"verdict": True, "score": 10}, {"verdict": False, "then": "next"}]})
    assert problems == [] and node is not None
    assert node.verdicts == [Verdict(verdict=True, score=10), Verdict(verdict=False, then="next")]
    node, problems = BinaryNode.from_toml({"verdicts": [{"verdict": True, "score": "ten"}]})
    assert node is not None and node.verdicts == []
    assert problems[0].wanted == "a list of tables"


def test_schema_is_the_toml_key_of_schema_() -> None:
    assert "schema" in CheckNode.toml_keys() and "schema_" not in CheckNode.toml_keys()
    assert CheckNode.attr_for("schema") == "schema_"
    assert CheckNode.attr_for("pattern") == "pattern"
    node = CheckNode(check="json_schema", schema_={"type": "object"})
    assert node.to_toml() == {"check": "json_schema", "schema": {"type": "object"}}
    assert node.replace(schema_="s.json").schema_ == "s.json"


def test_field_lists_match_the_toml_layout() -> None:
    assert Metric.toml_keys() == ("name", "threshold", "model", "include_reason", "strict",
                                  "multi_turn", "roots", "cases")
    # `id` is the key under [nodes], never a field in the table
    assert "id" not in TaskNode.toml_keys()
    for cls in (TaskNode, BinaryNode, GEvalNode):
        assert set(cls.FIELDS) == set(cls.toml_keys())
    # a check reads one `param`: the inherited list fields are not part of its table
    assert set(CheckNode.toml_keys()) - set(CheckNode.FIELDS) == {"params", "turn_window"}


def test_to_toml_leaves_defaults_out_and_node_to_raw_keeps_required_ones() -> None:
    node = TaskNode(id="t", instructions="", output_label="Out", params=[])
    assert node.to_toml() == {"output_label": "Out"}
    assert node.to_toml(skip_defaults=False)["params"] == []
    raw = node_to_raw(GEvalNode(name="g", turn_window=(0, 2)))
    assert raw == {"type": "geval", "name": "g", "params": [], "turn_window": [0, 2]}
    assert list(raw) == ["type", "name", "params", "turn_window"]


def test_replace_and_deepcopy_leave_the_original_alone() -> None:
    node = BinaryNode(id="b", criteria="?", verdicts=[Verdict(verdict=True, score=10)])
    changed = node.replace(criteria="!")
    assert (node.criteria, changed.criteria, changed.id) == ("?", "!", "b")
    deep = copy.deepcopy(node)
    deep.verdicts[0].score = 0
    assert node.verdicts[0].score == 10 and deep != node


def test_loader_reports_wrong_types_as_dag004_at_the_value() -> None:
    text = ('[metric]\nname = "m"\nthreshold = "high"\n\n[nodes.t]\ntype = "task"\n'
            'instructions = "x"\noutput_label = "X"\nturn_window = [1.5, 2]\n')
    result = load_text(text, "g.toml")
    wrong = [d for d in result.diagnostics if d.code == "DAG004"]
    assert [(d.line, d.col, d.message) for d in wrong] == [
        (3, 13, "'threshold' must be a number (got 'high')"),
        (9, 15, "'turn_window' must be a two-item list of integers (got [1.5, 2])"),
    ]
    assert result.graph is not None and result.graph.metric.threshold == 0.5
    assert result.graph.nodes["t"].instructions == "x"

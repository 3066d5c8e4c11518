"""Suite editing operations: cycles refused when made, deletes refused while depended on."""

from __future__ import annotations

import pytest

from dagtui.suite.model import CycleError, Rule, RuleInUseError, Suite, SuiteEditError


def _suite(**deps: list[str]) -> Suite:
    s = Suite()
    for rid, d in deps.items():
        s.rules[rid] = Rule(id=rid, check={"check": "json", "param": "actual_output"},
                            depends_on=list(d))
    return s


def test_levels_follow_dependencies_in_file_order() -> None:
    s = _suite(has_output=[], is_english=[], correctness=["has_output", "is_english"],
               deep=["correctness"], tone=["has_output"])
    assert s.levels() == [["has_output", "is_english"], ["correctness", "tone"], ["deep"]]


def test_remove_rule_with_dependents_is_refused_naming_them() -> None:
    s = _suite(a=[], b=["a"], c=["a"], d=[])
    with pytest.raises(RuleInUseError) as err:
        s.remove_rule("a")
    assert err.value.dependents == ["b", "c"]
    assert "b, c" in str(err.value)
    assert "a" in s.rules  # nothing was deleted
    s.remove_rule("d")
    assert "d" not in s.rules


def test_add_dependency_that_makes_a_cycle_is_refused_at_once() -> None:
    s = _suite(a=[], b=["a"], c=["b"])
    with pytest.raises(CycleError) as err:
        s.add_dependency("a", "c")
    assert err.value.cycle == ["a", "c", "b", "a"]
    assert "a -> c -> b -> a" in str(err.value)
    assert s.rules["a"].depends_on == []  # refused: nothing changed
    with pytest.raises(CycleError):
        s.add_dependency("b", "b")
    s.add_dependency("c", "a")  # a shortcut edge is fine
    assert s.rules["c"].depends_on == ["b", "a"]


def test_unknown_names_are_refused() -> None:
    s = _suite(a=[])
    with pytest.raises(SuiteEditError):
        s.add_dependency("a", "zzz")
    with pytest.raises(SuiteEditError):
        s.remove_rule("zzz")


def test_find_cycle_and_levels_refuse_cycles() -> None:
    s = _suite(a=["c"], b=["a"], c=["b"], d=[])
    cycle = s.find_cycle()
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    with pytest.raises(CycleError):
        s.levels()


def test_upstream_and_downstream() -> None:
    s = _suite(a=[], b=[], c=["a", "b"], d=["c"], e=["a"])
    assert s.upstream("d") == ["a", "b", "c"]
    assert s.downstream("a") == ["c", "d", "e"]
    assert s.dependents("a") == ["c", "e"]


def test_to_raw_round_trips_the_layout() -> None:
    s = _suite(a=[], b=["a"])
    s.rules["b"].max_calls = 5
    raw = s.to_raw()
    assert raw["rules"]["b"] == {
        "check": {"check": "json", "param": "actual_output"}, "depends_on": ["a"], "max_calls": 5,
    }

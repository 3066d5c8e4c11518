"""The model's records take equality and repr from `Record` (dagtui/graph/model.py) rather
than from per-class dataclass methods: they must answer exactly as those would."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from dagtui.graph.loader import load_file
from dagtui.graph.model import NODE_CLASSES, BinaryNode, Graph, Metric, Record, TaskNode, Verdict


def _dataclass_twin(cls: type) -> type:
    """`cls` rebuilt as dataclasses would write it, with its own `__eq__` and `__repr__`."""
    # fresh fields: make_dataclass writes its types into the Field objects it is given
    fields = [(f.name, Any, dataclasses.field(default=f.default, default_factory=f.default_factory,
                                              repr=f.repr, compare=f.compare))
              for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__, fields, kw_only=True)


def test_every_record_class_leaves_eq_and_repr_to_record() -> None:
    for cls in (*NODE_CLASSES.values(), Verdict, Metric, Graph):
        assert cls.__eq__ is Record.__eq__, cls
        assert cls.__repr__ is Record.__repr__, cls
        assert cls.__hash__ is None, cls  # unhashable, as a dataclass with eq is


def test_equal_when_the_same_class_holds_the_same_values() -> None:
    a = BinaryNode(id="gate", criteria="Is it there?",
                   verdicts=[Verdict(verdict=True, score=10), Verdict(verdict=False, score=0)])
    same = BinaryNode(id="gate", criteria="Is it there?",
                      verdicts=[Verdict(verdict=True, score=10), Verdict(verdict=False, score=0)])
    assert a == same
    assert (a != same) is False
    assert a != a.replace(criteria="Is it here?")
    assert a != a.replace(verdicts=[Verdict(verdict=True, score=9), Verdict(verdict=False, score=0)])
    assert Verdict(verdict=True, score=1) != "Verdict(verdict=True, score=1, then=None)"
    # another class with the same values is not equal (dataclasses compare classes too)
    assert TaskNode(id="x") != BinaryNode(id="x")


def test_a_nan_held_by_both_is_equal_as_in_a_dataclass_tuple_compare() -> None:
    nan = math.nan
    assert Verdict(verdict=True, score=nan) == Verdict(verdict=True, score=nan)


@pytest.mark.parametrize("cls", [*NODE_CLASSES.values(), Verdict, Metric])
def test_repr_is_the_one_dataclasses_would_write(cls: type) -> None:
    record = cls() if cls in (Metric,) else (
        cls(verdict=True, score=3) if cls is Verdict else cls(id="n1"))
    twin = _dataclass_twin(cls)
    values = {f.name: getattr(record, f.name) for f in dataclasses.fields(cls)}
    assert repr(record) == repr(twin(**values)).replace(
        f"{twin.__qualname__}(", f"{cls.__qualname__}(", 1)


def test_loaded_graphs_compare_by_content() -> None:
    path = Path(__file__).parents[1] / "graphs" / "code_review.toml"
    first, again = load_file(path).graph, load_file(path).graph
    assert first == again and first is not again
    assert first != again.replace(metric=again.metric.replace(threshold=0.9))

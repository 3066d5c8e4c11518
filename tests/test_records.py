"""Dataclasses on `Shown`, `Record` and `FrozenRecord` (dagtui/record.py) answer repr,
equality and hashing exactly as the methods dataclasses would have written for them."""

from __future__ import annotations

import dataclasses
import importlib
import math
import pkgutil
import typing
from typing import Any

import pytest

import dagtui
from dagtui.graph import model
from dagtui.graph.model import field_types
from dagtui.record import FrozenRecord, Record, Shown


def _all_subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_all_subclasses(sub)]
    return out


def _record_classes() -> list[type]:
    """Every dataclass in dagtui (the TUI included) that takes its methods from a base
    (not the DeepEval integration, which needs DeepEval; no `__main__`, which runs)."""
    for info in pkgutil.walk_packages(dagtui.__path__, "dagtui."):
        if not info.name.startswith("dagtui.integrations") and not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    found = {c for c in _all_subclasses(Shown)
             if dataclasses.is_dataclass(c) and c.__module__.startswith("dagtui.")}
    return sorted(found, key=lambda c: (c.__module__, c.__qualname__))


CLASSES = _record_classes()


def _values(cls: type, salt: str) -> dict[str, Any]:
    """A distinct hashable value per field (the salt makes a second, different set)."""
    return {f.name: f"{f.name}-{salt}" for f in dataclasses.fields(cls)}


def _make(cls: type, values: dict[str, Any]) -> Any:
    """An instance holding `values`, past any `__init__` checks (only the methods matter)."""
    obj = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(obj, name, value)
    return obj


def _twin(cls: type) -> type:
    """`cls` as plain dataclasses would write it, its own methods compiled."""
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    fields = [(f.name, Any, dataclasses.field(repr=f.repr, compare=f.compare, hash=f.hash))
              for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__, fields, frozen=params.frozen,
                                      eq=issubclass(cls, Record))


def test_the_bases_are_used_across_the_code() -> None:
    names = {c.__qualname__ for c in CLASSES}
    assert {"Diagnostic", "Stamp", "EditorState", "NodeKind", "FieldSpec", "BinaryNode",
            "Graph"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_methods_answer_as_dataclasses_would(cls: type) -> None:
    twin = _twin(cls)
    a, same, other = (_make(cls, _values(cls, s)) for s in ("a", "a", "b"))
    ta, tsame, tother = (_make(twin, _values(cls, s)) for s in ("a", "a", "b"))
    assert repr(a) == repr(ta).replace(f"{twin.__qualname__}(", f"{cls.__qualname__}(", 1)
    assert (a == same) == (ta == tsame)
    assert (a == other) == (ta == tother)
    assert (a != same) == (ta != tsame)
    assert (twin.__hash__ is None) == (cls.__hash__ is None), "hashable exactly when a twin is"
    if twin.__hash__ is not None and issubclass(cls, Record):
        assert hash(a) == hash(same) == hash(ta)
    if not issubclass(cls, Record):  # one of a kind: identity, as with eq=False
        assert a != same and hash(a) != hash(same)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_no_class_compiles_methods_its_base_gives(cls: type) -> None:
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert not params.eq and not params.repr, "declare @dataclass(eq=False, repr=False)"
    if params.frozen and issubclass(cls, Record):
        assert issubclass(cls, FrozenRecord), "a frozen record is hashable: FrozenRecord"
    if issubclass(cls, FrozenRecord):
        assert params.frozen, "a FrozenRecord's hash needs fields that never change"


def test_compare_never_crosses_classes_and_nan_is_equal_to_itself() -> None:
    from dagtui.diagnostics import Diagnostic, Severity

    d = Diagnostic(code="E001", severity=Severity.ERROR, message="m")
    assert d == Diagnostic(code="E001", severity=Severity.ERROR, message="m")
    assert d != "Diagnostic(...)" and d in {d}
    nan = math.nan
    assert model.Verdict(verdict=True, score=nan) == model.Verdict(verdict=True, score=nan)


def test_field_types_agree_with_get_type_hints() -> None:
    for cls in vars(model).values():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls):
            hints = typing.get_type_hints(cls)
            assert field_types(cls) == {f.name: hints[f.name] for f in dataclasses.fields(cls)}

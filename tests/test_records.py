"""Dataclasses on `Shown`, `Record` and `FrozenRecord` (dagtui/record.py) answer repr,
equality and hashing exactly as the methods dataclasses would have written for them, and
`@frozen` ones refuse changes as a frozen dataclass does."""

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
from dagtui.record import FrozenRecord, Record, Shown, frozen, is_frozen


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
    fields = [(f.name, Any, dataclasses.field(repr=f.repr, compare=f.compare, hash=f.hash))
              for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__, fields, frozen=is_frozen(cls),
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
    assert not params.frozen, "declare @frozen (dagtui.record), not @dataclass(frozen=True)"
    if is_frozen(cls) and issubclass(cls, Record):
        assert issubclass(cls, FrozenRecord), "a frozen record is hashable: FrozenRecord"
    if issubclass(cls, FrozenRecord):
        assert is_frozen(cls), "a FrozenRecord's hash needs fields that never change: @frozen"


@pytest.mark.parametrize("cls", [c for c in CLASSES if is_frozen(c)],
                         ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_frozen_classes_refuse_changes_as_a_frozen_dataclass_does(cls: type) -> None:
    twin = _twin(cls)
    obj, tobj = _make(cls, _values(cls, "a")), _make(twin, _values(cls, "a"))
    for name in [f.name for f in dataclasses.fields(cls)] + ["not_a_field"]:
        for target in (obj, tobj):
            with pytest.raises(dataclasses.FrozenInstanceError) as refused:
                setattr(target, name, "changed")
            assert str(refused.value) == f"cannot assign to field {name!r}"
            with pytest.raises(dataclasses.FrozenInstanceError):
                delattr(target, name)
    assert _values(cls, "a") == {f.name: getattr(obj, f.name) for f in dataclasses.fields(cls)}


@frozen
class _Point(FrozenRecord):
    """A frozen record with a default, a factory, a field outside `__init__` and pickling
    (a module-level class)."""

    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list, compare=False)
    total: int = dataclasses.field(init=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", self.x + self.y)  # as with frozen=True


def test_frozen_sets_each_field_once_through_init_post_init_replace_and_copies() -> None:
    import copy
    import pickle

    p = _Point(1, 2)
    assert (p.x, p.y, p.tags, p.total) == (1, 2, [], 3)
    assert dataclasses.replace(p, y=5).total == 6 and p.total == 3
    assert _Point(1, 2) == p and hash(_Point(1, 2)) == hash(p) and p in {p}
    for other in (copy.copy(p), copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert other == p and other is not p
        with pytest.raises(dataclasses.FrozenInstanceError):
            other.x = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="Shown subclass"):
        frozen(type("Plain", (), {"__annotations__": {"x": "int"}}))


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

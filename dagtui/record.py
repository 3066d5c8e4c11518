"""Equality, hashing, repr and immutability for dagtui's dataclasses, written once instead
of per class.

`dataclasses` writes each class its own `__eq__`, `__repr__` and `__hash__`, and a frozen
one its own `__setattr__` and `__delattr__`, by compiling their source when the class is
created. The editor imports about thirty dataclasses before its first frame, so every
`dagtui edit` compiled 66 methods that say the same thing in every class. Counted with
callgrind up to the first frame (meeting_summary.toml): the 42 equality, hash and repr
methods cost 20M instructions of 1,177M (a bare Textual app: 961M), and the 24 frozen
setters and deleters 19M of the 1,149M left, together over 3 % of the start. A class
declared `@dataclass(eq=False, repr=False)` on one of these bases answers as the methods
dataclasses would have written (tests/test_records.py compares each against a twin):

- `Shown`: the repr only, `Name(field=value, ...)` of the fields shown in it; for objects
  that are one of a kind and compare by identity (the editor's state);
- `Record`: the repr and equality, the compared fields as one tuple, only against the same
  class; unhashable, as a dataclass with `eq` is; `replace` gives a copy with changes;
- `FrozenRecord`: a `Record` that hashes its hashed fields as one tuple; it is declared
  `@frozen` (dataclasses hashes a frozen one so).

`@frozen` stands for `@dataclass(frozen=True, eq=False, repr=False)` on a `Shown`: type
checkers treat the class as a frozen dataclass (`typing.dataclass_transform`), and at run
time the one shared `__setattr__` lets `__init__` set each field once and then refuses
every assignment and deletion with dataclasses' own `FrozenInstanceError`.

These methods are slower per call than compiled ones (the fields are looked up per class,
not inlined): a `Diagnostic`'s `==` takes 0.8 us instead of 0.3, its hash 0.6 instead of
0.3, its repr 4 instead of 2, and building one 3.8 us instead of 3.2; no caller compares,
hashes or builds more than a few thousand before it waits on something slower.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from typing import Any, ClassVar, Self, TypeVar, dataclass_transform

__all__ = ["FrozenRecord", "Record", "Shown", "frozen", "is_frozen"]

_C = TypeVar("_C", bound=type)

#: (class, which: "compare" | "hash") -> a getter of those fields' values as a tuple
_GETTERS: dict[tuple[type, str], Callable[[Any], tuple[Any, ...]]] = {}


def _chosen(f: dataclasses.Field[Any], which: str) -> bool:
    """Whether dataclasses puts field `f` in the method named by `which`."""
    if which == "hash":
        return f.compare if f.hash is None else f.hash
    return bool(getattr(f, which))


def _getter(cls: type, which: str) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of `cls`'s fields that `which` uses, from an instance (worked out once)."""
    get = _GETTERS.get((cls, which))
    if get is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if _chosen(f, which))
        # a tuple even of one field or none (attrgetter of one name gives the value itself)
        get = operator.attrgetter(*names) if len(names) > 1 else (
            lambda obj: tuple(getattr(obj, n) for n in names))
        _GETTERS[cls, which] = get
    return get


class Shown:
    """A dataclass's repr, `Name(field=value, ...)`, from the fields that are shown."""

    def __repr__(self) -> str:
        cls: type = type(self)  # every subclass is a dataclass
        shown = (f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(cls)
                 if f.repr)
        return f"{cls.__qualname__}({', '.join(shown)})"


class Record(Shown):
    """A dataclass's repr and equality: the compared fields, only against the same class."""

    __hash__: ClassVar[None]  # type: ignore[assignment]  # unhashable, as with `eq`

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        compared = _getter(self.__class__, "compare")
        return compared(self) == compared(other)

    def replace(self, **changes: Any) -> Self:
        """A shallow copy with `changes` (Python attribute names) applied, unchecked."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


class FrozenRecord(Record):
    """A frozen `Record` (declared `@frozen`), hashable by its hashed fields as one tuple."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(_getter(self.__class__, "hash")(self))


def _set_once(self: Any, name: str, value: Any) -> None:
    """A frozen instance's `__setattr__`: a field may be set once, by `__init__`."""
    held = self.__dict__  # every field is a plain instance attribute (no slots, no descriptor)
    if name in held or name not in self.__dataclass_fields__:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    held[name] = value


def _never_delete(self: Any, name: str) -> None:
    """A frozen instance's `__delattr__`."""
    raise FrozenInstanceError(f"cannot delete field {name!r}")


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: _C) -> _C:
    """`@dataclass(frozen=True, eq=False, repr=False)` for a subclass of `Shown`, with the
    frozen checks shared instead of compiled for the class (this module's docstring)."""
    if not issubclass(cls, Shown):
        raise TypeError(f"@frozen is for a Shown subclass (its repr), not {cls.__qualname__}")
    made: Any = dataclasses.dataclass(cls, eq=False, repr=False)
    made.__setattr__ = _set_once
    made.__delattr__ = _never_delete
    return made


def is_frozen(cls: type) -> bool:
    """Whether instances of `cls` refuse changes: declared `@frozen`, or a frozen dataclass."""
    params = getattr(cls, "__dataclass_params__", None)
    setter: Any = cls.__setattr__
    return setter is _set_once or bool(params and params.frozen)

"""Equality, hashing and repr for dagtui's dataclasses, written once instead of per class.

`dataclasses` writes each class its own `__eq__`, `__repr__` and `__hash__` by compiling
their source when the class is created. The editor imports about thirty dataclasses before
its first frame, so every `dagtui edit` compiled 42 methods that say the same thing in every
class: 20M instructions of the 1,177M its start ran up to the first frame (callgrind,
meeting_summary.toml; a bare Textual app: 961M), 2 % of the start. A class
declared `@dataclass(eq=False, repr=False)` on one of these bases answers as the methods
dataclasses would have written (tests/test_records.py compares each against a twin):

- `Shown`: the repr only, `Name(field=value, ...)` of the fields shown in it; for objects
  that are one of a kind and compare by identity (the editor's state);
- `Record`: the repr and equality, the compared fields as one tuple, only against the same
  class; unhashable, as a dataclass with `eq` is; `replace` gives a copy with changes;
- `FrozenRecord`: a `Record` that hashes its hashed fields as one tuple, for
  `@dataclass(frozen=True, eq=False, repr=False)` (dataclasses hashes a frozen one so).

Their methods are slower per call than the compiled ones (the fields are looked up per
class, not inlined): a `Diagnostic`'s `==` takes 0.8 us instead of 0.3, its hash 0.6 instead
of 0.3, its repr 4 instead of 2; no caller compares or hashes more than a few thousand.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import Any, ClassVar, Self

__all__ = ["FrozenRecord", "Record", "Shown"]

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
    """A frozen `Record`, hashable by its hashed fields as one tuple."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(_getter(self.__class__, "hash")(self))

"""A small type checker for model fields, fed with values that come from TOML.

Why this exists: the model (`dagtui.graph.model`) used to be pydantic classes, and importing
pydantic and building those classes cost about an eighth of a second on every start of the
editor, for very little: `tomllib` already hands over exact Python types (str, int, float,
bool, list, dict), and the loader turns every wrong type into a positioned DAG004 diagnostic
anyway. What is left to do fits here: for each field, look at its annotation once, and
check a TOML value against it, converting only where TOML's types and the model's differ
(an integer where a number is wanted becomes a float; a list where a pair is wanted becomes
a tuple; tables in a list of records become records).

The rules are those of TOML rather than of Python's lax conversions: a string is never
parsed as a number, true/false is never a number and 0/1 are never true/false, and 2.0 is
not an integer. The words in a `Mismatch` ("a string", "a number", ...) are the ones the
loader prints after "must be".
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from dagtui.record import FrozenRecord, frozen
from dagtui.text import shorten

#: checks one value: returns it (converted if need be) or raises `Mismatch`
Checker = Callable[[Any], Any]

_SCALAR_WORDS: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
}


@frozen
class FieldProblem(FrozenRecord):
    """One TOML value that could not be used: the key, what it held, and what was wanted."""

    key: str
    value: Any
    wanted: str
    is_missing: bool = False

    @classmethod
    def missing(cls, key: str) -> FieldProblem:
        return cls(key, None, "", is_missing=True)

    @property
    def message(self) -> str:
        """E.g. `'min' must be an integer (got 'ten')`."""
        if self.is_missing:
            return f"'{self.key}' is missing"
        return f"'{self.key}' must be {self.wanted} (got {short_repr(self.value)})"


def short_repr(value: Any, limit: int = 40) -> str:
    """`repr(value)` cut to `limit` characters, for messages."""
    return shorten(repr(value), limit)


class Mismatch(Exception):
    """A value does not fit a field; `wanted` says what would, e.g. "a list of strings"."""

    def __init__(self, wanted: str) -> None:
        super().__init__(wanted)
        self.wanted = wanted


def checker_for(annotation: Any, build_record: Callable[[type, Any], Any] | None = None
                ) -> Checker:
    """A checker for one field annotation (built once per field, then called per value).

    Understands str, int, float, bool, Any, None, `X | Y` unions, `Literal[...]`,
    `list[X]`, `tuple[X, Y]`, `dict[str, X]` and record classes; `build_record(cls, value)`
    builds a record from a table (or raises `Mismatch`). Anything else is a programming
    error in the model and raises TypeError at once.
    """
    return _compile(annotation, build_record)[0]


def describe(annotation: Any) -> str:
    """The words for what `annotation` accepts, e.g. "a list of strings"."""
    return _compile(annotation, None)[1]


def _compile(ann: Any, build_record: Callable[[type, Any], Any] | None) -> tuple[Checker, str]:
    if ann is Any:
        return (lambda value: value), "anything"
    if ann is None or ann is type(None):
        return _exact(type(None), "nothing"), "nothing"
    if ann is float:
        return _number, "a number"
    if ann in _SCALAR_WORDS:
        words = _SCALAR_WORDS[ann]
        return _exact(ann, words), words
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is Literal:
        return _literal(args)
    if origin in (types.UnionType, typing.Union):
        return _union(args, build_record)
    if origin is list:
        item, item_words = _compile(args[0], build_record)
        return _list_of(item, f"a list of {_plural(item_words)}"), f"a list of {_plural(item_words)}"
    if origin is tuple:
        return _pair(args, build_record)
    if origin is dict:
        value_check, value_words = _compile(args[1], build_record)
        return _table_of(value_check), "a table"
    if isinstance(ann, type) and build_record is not None:
        return (lambda value: build_record(ann, value)), "a table"
    raise TypeError(f"fieldtypes cannot check values of type {ann!r}")


def _exact(kind: type, words: str) -> Checker:
    # `type(value) is kind`, not isinstance: True is an int to Python, not to TOML
    def check(value: Any) -> Any:
        if type(value) is not kind:
            raise Mismatch(words)
        return value
    return check


def _number(value: Any) -> float:
    kind = type(value)
    if kind is float:
        return value
    if kind is int:
        return float(value)
    raise Mismatch("a number")


def _literal(options: tuple[Any, ...]) -> tuple[Checker, str]:
    shown = [repr(o) for o in options]
    words = "one of " + (f"{', '.join(shown[:-1])} or {shown[-1]}" if len(shown) > 1
                         else shown[0])

    def check(value: Any) -> Any:
        for option in options:
            if type(value) is type(option) and value == option:
                return value
        raise Mismatch(words)
    return check, words


def _union(members: tuple[Any, ...], build_record: Callable[[type, Any], Any] | None
           ) -> tuple[Checker, str]:
    optional = type(None) in members
    rest = [m for m in members if m is not type(None)]
    if float in rest and int in rest:
        rest.remove(int)  # a number already takes integers, and keeps them integers
        allow_int = True
    else:
        allow_int = False
    compiled = [_compile(m, build_record) for m in rest]
    parts = [w for _, w in compiled]
    # "true or false, or a string" rather than "true or false or a string"
    words = (", or " if any(" or " in p for p in parts) else " or ").join(parts)

    def check(value: Any) -> Any:
        if value is None and optional:
            return None
        if allow_int and type(value) is int:
            return value
        for member, _ in compiled:
            try:
                return member(value)
            except Mismatch:
                continue
        raise Mismatch(words)
    return check, words


def _list_of(item: Checker, words: str) -> Checker:
    def check(value: Any) -> list[Any]:
        if type(value) not in (list, tuple):
            raise Mismatch(words)
        try:
            return [item(v) for v in value]
        except Mismatch:
            raise Mismatch(words) from None
    return check


def _pair(args: tuple[Any, ...], build_record: Callable[[type, Any], Any] | None
          ) -> tuple[Checker, str]:
    if len(args) != 2 or args[1] is Ellipsis:
        raise TypeError("fieldtypes checks fixed two-item tuples only")
    first, w1 = _compile(args[0], build_record)
    second, w2 = _compile(args[1], build_record)
    words = f"a two-item list of {_plural(w1)}" if w1 == w2 else f"a two-item list ({w1}, {w2})"

    def check(value: Any) -> tuple[Any, Any]:
        if type(value) not in (list, tuple) or len(value) != 2:
            raise Mismatch(words)
        try:
            return first(value[0]), second(value[1])
        except Mismatch:
            raise Mismatch(words) from None
    return check, words


def _table_of(value_check: Checker) -> Checker:
    def check(value: Any) -> dict[str, Any]:
        if type(value) is not dict or not all(type(k) is str for k in value):
            raise Mismatch("a table")
        return {k: value_check(v) for k, v in value.items()}
    return check


def _plural(words: str) -> str:
    """"a string" -> "strings", "an integer" -> "integers", "a table" -> "tables"."""
    for article in ("a ", "an "):
        if words.startswith(article):
            noun = words[len(article):]
            return noun if " " in noun else noun + "s"
    return words

"""How each node field is edited in the form: its widget kind and text <-> value conversion.

Pure functions (no textual) so the parsing rules that decide what a keystroke means are
tested directly. A conversion that fails raises `FieldError` with the message shown beside
the field; the model is not touched until the text parses. What a field means and the values
it may take are the model's (`dagtui.graph.model.field_specs`, `CHECK_SETTINGS`); this module
adds only how the form edits it.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Sequence
from typing import Any

from dagtui.graph.model import CHECK_SETTINGS, NodeBase, check_settings, field_specs
from dagtui.kinds import kind_of

LONG_TEXT = ("instructions", "criteria", "evaluation_steps")
REQUIRED_TEXT = ("instructions", "criteria", "output_label", "name", "check", "metric")
LISTS = ("children", "values", "allowed", "roots")
INTS = ("min", "max", "max_items")
BOOLS = ("case_sensitive", "include_reason", "strict", "multi_turn", "empty")
#: a word or an inline table, typed as TOML's inside (`fraction`, `{ at_least = 0.8 }`,
#: `{ then = "ask_again" }`): a map node's aggregate, a judgement's unsure
WORD_OR_TABLE = ("aggregate", "unsure")


def hint(cls: type, name: str) -> str:
    """The few words shown in (and over) field `name` of a `cls` record: its `short`
    meaning, without the Markdown code marks the docs use."""
    spec = field_specs(cls).get(name)
    return spec.short.replace("`", "") if spec is not None else ""


def choices(node: Any, name: str) -> Sequence[str] | None:
    """The values a one-value field offers in a select: its kind's for a check setting
    whose values depend on the kind (`mode`; none for a kind without it), the model's for
    a field with fixed values (`unit`); None for a field typed freely or holding a list."""
    if any(name in settings.choices for settings in CHECK_SETTINGS.values()):
        return check_settings(getattr(node, "check", None)).choices.get(name, ())
    spec = field_specs(type(node)).get(name)
    if spec is None or spec.choices is None or typing.get_origin(spec.annotation) is list:
        return None
    return tuple(spec.choices)


class FieldError(ValueError):
    """Text in a form field that cannot become a value."""


def node_fields(node: NodeBase) -> list[str]:
    """Fields the form shows for `node`, in canonical order, as its kind lists them (check
    nodes: the check kind's own settings, plus any other setting that has a value so nothing
    is hidden)."""
    return kind_of(node).form_fields(node)


def _attr(name: str) -> str:
    return "schema_" if name == "schema" else name


def value_of(node: Any, name: str) -> Any:
    return getattr(node, _attr(name), None)


def to_text(name: str, value: Any) -> str:
    """The text a form widget shows for a value."""
    if value is None:
        return ""
    if name == "evaluation_steps":
        return "\n".join(value)
    if name in LISTS:
        return ", ".join(str(v) for v in value)
    if name == "turn_window":
        return f"{value[0]}, {value[1]}"
    if name == "schema" and isinstance(value, dict):
        return json.dumps(value)
    if name == "args" and isinstance(value, dict):
        from dagtui.graph.tomlio import toml_value

        return toml_value(value)[1:-1].strip()  # `threshold = 0.7, ...` without the braces
    if name in WORD_OR_TABLE and isinstance(value, dict):
        from dagtui.graph.tomlio import toml_value

        return toml_value(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and name != "threshold":
        return str(int(value))
    return str(value)


def from_text(name: str, text: str) -> Any:
    """Parse what the user typed into field `name`; raises FieldError with a message."""
    stripped = text.strip()
    if name == "evaluation_steps":
        steps = [line.strip() for line in text.splitlines() if line.strip()]
        return steps or None
    if name in LONG_TEXT or name in REQUIRED_TEXT:
        return text
    if name in LISTS:
        items = [part.strip() for part in text.split(",") if part.strip()]
        if name == "children":
            return items
        return items or None
    if name in INTS:
        if not stripped:
            return None
        try:
            return int(stripped)
        except ValueError:
            raise FieldError("must be a whole number") from None
    if name == "threshold":
        try:
            return float(stripped)
        except ValueError:
            raise FieldError("must be a number from 0 to 1") from None
    if name == "turn_window":
        if not stripped:
            return None
        parts = [p.strip() for p in stripped.split(",")]
        try:
            if len(parts) != 2:
                raise ValueError
            return (int(parts[0]), int(parts[1]))
        except ValueError:
            raise FieldError("write two whole numbers: start, end") from None
    if name == "args":
        return args_from_text(stripped)
    if name in WORD_OR_TABLE:
        return word_or_table(name, stripped)
    if name == "schema":
        if not stripped:
            return None
        if stripped.startswith("{"):
            try:
                return json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise FieldError(f"not valid JSON: {exc.msg} (column {exc.colno})") from None
        return stripped
    return stripped or None



def word_or_table(name: str, text: str) -> Any:
    """`fraction` (quotes optional) or `{ at_least = 0.8 }` as TOML reads it; empty: the
    field's default (`all` for an aggregate, none for unsure)."""
    if not text:
        return "all" if name == "aggregate" else None
    if text.startswith("{"):
        import tomllib

        try:
            return dict(tomllib.loads(f"v = {text}")["v"])
        except (tomllib.TOMLDecodeError, TypeError, ValueError):
            raise FieldError('write an inline table, e.g. { at_least = 0.8 } or '
                             '{ then = "node" }') from None
    return text.strip('"')


def args_from_text(text: str) -> dict[str, Any]:
    """A metric leaf's arguments, typed as the inside of a TOML inline table
    (`threshold = 0.7, include_reason = false`; braces optional)."""
    import tomllib

    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    if not body:
        return {}
    try:
        return dict(tomllib.loads(f"args = {{ {body} }}")["args"])
    except tomllib.TOMLDecodeError as exc:
        raise FieldError(f"args: write key = value pairs, comma separated ({exc})") from None

def verdict_from_text(text: str, *, boolean: bool) -> bool | str:
    """A verdict value: true/false for binary and code checks, else a label."""
    stripped = text.strip()
    if boolean and stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    if not stripped:
        raise FieldError("a verdict needs a value")
    return stripped


def score_from_text(text: str) -> int | float | None:
    stripped = text.strip()
    if not stripped:
        return None
    try:
        return int(stripped)
    except ValueError:
        try:
            return float(stripped)
        except ValueError:
            raise FieldError("score: a number from 0 to 10 (7, 7.5)") from None

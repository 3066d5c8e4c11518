"""JSON Schema validation for `json_schema` checks: no network, no disk, bounded regexes.

Why: jsonschema's default resolver fetches every `$ref` it does not find in the schema, so
a check's `{"$ref": "http://..."}` made a call during `dagtui test` (which promises none)
and `run`, a URL that never answers hung the command, `file:///dev/zero` grew memory by
400 MB/s, and a file outside the graph's folder was read and quoted in the violation
message. Here the registry's `retrieve` refuses everything: only references inside the
schema resolve (`#/$defs/x`, `#/properties/a`, an `$id` the schema itself declares, and
the bundled JSON Schema meta-schemas); any other fails the step with `SchemaError`'s
clear message. Files beside the graph are not fetched either: a schema that needs two
files is one file with `$defs` (the schema file itself is read through
`dagtui.inputs.read_text`, with its size limit). `outside_refs` finds such references for
`validate` (DAG025).

Regexes in a schema (`pattern`, `patternProperties`, and the `additionalProperties` that
depends on them) are matched by `dagtui.saferegex`, in bounded time; `unevaluatedProperties`
next to `patternProperties` would match with plain `re` inside jsonschema, so that pair is
refused (`unbounded_keywords`).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from dagtui.saferegex import RegexError, search

#: the $ref-like keywords of every draft
REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


class SchemaError(ValueError):
    """The schema cannot be used: invalid, a reference outside it, an unbounded regex."""


def walk(schema: Any, pointer: str = "#") -> Iterator[tuple[str, str, Any]]:
    """Every (JSON pointer of the holding object, key, value) in `schema`, depth first."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            yield pointer, str(key), value
            yield from walk(value, f"{pointer}/{_escape(str(key))}")
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from walk(item, f"{pointer}/{i}")


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def outside_refs(schema: Any) -> list[tuple[str, str]]:
    """(pointer, reference) for each `$ref` that points outside the schema: anything but a
    `#` fragment or a bundled meta-schema. Over-approximate: a `$ref` string anywhere
    counts, also under `properties` where it would be a property name's schema."""
    found = []
    for pointer, key, value in walk(schema):
        if key in REF_KEYWORDS and isinstance(value, str) and not _inside(value):
            found.append((pointer, value))
    return found


def _inside(ref: str) -> bool:
    if ref.startswith("#"):
        return True
    from jsonschema_specifications import REGISTRY

    return ref.split("#", 1)[0].rstrip("#") in REGISTRY


def patterns(schema: Any) -> list[tuple[str, str]]:
    """(pointer, pattern) for every `pattern` value and `patternProperties` key."""
    found = []
    for pointer, key, value in walk(schema):
        if key == "pattern" and isinstance(value, str):
            found.append((pointer, value))
        elif key == "patternProperties" and isinstance(value, dict):
            found += [(f"{pointer}/patternProperties", str(k)) for k in value]
    return found


def unbounded_keywords(schema: Any) -> str | None:
    """Why the schema's regexes cannot all be bounded, or None."""
    keys = {key for _, key, _ in walk(schema)}
    if "unevaluatedProperties" in keys and "patternProperties" in keys:
        return ("'unevaluatedProperties' together with 'patternProperties' is not supported: "
                "jsonschema would match those patterns without dagtui's time bound; use "
                "'additionalProperties' instead")
    return None


def validate(schema: dict[str, Any], data: Any) -> tuple[str, str] | None:
    """The first violation of `data` against `schema` as (where, message), or None when it
    is valid; SchemaError when the schema is invalid, refers outside itself, or a regex in
    it cannot be matched in time."""
    import jsonschema
    from referencing.exceptions import Unresolvable

    why = unbounded_keywords(schema)
    if why is not None:
        raise SchemaError(why)
    base = jsonschema.validators.validator_for(schema)
    try:
        base.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise SchemaError(f"the schema itself is invalid: {exc.message}") from None
    validator = _bounded(base)(schema, registry=_registry())
    try:
        errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.path])
    except Unresolvable as exc:
        raise SchemaError(_unresolved(exc)) from None
    except _PatternFailed as exc:
        raise SchemaError(str(exc)) from None
    if not errors:
        return None
    first = errors[0]
    return "/".join(str(p) for p in first.path) or "(root)", first.message


def _unresolved(exc: Exception) -> str:
    """What a reference that did not resolve names, and why it was not fetched."""
    from referencing.exceptions import PointerToNowhere

    cause = getattr(exc, "_wrapped", exc)  # jsonschema wraps referencing's errors
    ref = getattr(cause, "ref", None) or "?"
    if isinstance(cause, PointerToNowhere):
        return f"the schema's reference '#{ref}' names nothing in the schema"
    return (f"the schema's reference {ref!r} points outside the schema: dagtui resolves only "
            "references inside it (\"#/$defs/name\") and never fetches a URL or a file")


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


@lru_cache(maxsize=1)
def _registry() -> Any:
    """A registry that resolves nothing it is not given: jsonschema adds the bundled
    meta-schemas and the schema itself; every other URI is refused, never fetched."""
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


class _PatternFailed(Exception):
    """A schema regex could not be matched in time (carried out of jsonschema's loop)."""


def _matches(pattern: str, text: str) -> bool:
    try:
        return search(pattern, text) is not None
    except RegexError as exc:
        raise _PatternFailed(f"schema pattern: {exc}") from None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, pattern_properties: dict[str, Any], instance: Any,
                        schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any,
                           schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    pattern_keys = list(schema.get("patternProperties", {}))
    extras = [key for key in instance if key not in known
              and not any(_matches(p, key) for p in pattern_keys)]
    if validator.is_type(additional, "object"):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif additional is False and extras:
        listed = ", ".join(repr(k) for k in sorted(extras))
        if pattern_keys:
            shown = ", ".join(repr(p) for p in sorted(pattern_keys))
            verb = "matches" if len(extras) == 1 else "match"
            yield ValidationError(f"{listed} {verb} none of the patterns {shown}")
        else:
            yield ValidationError(f"additional properties are not allowed ({listed} "
                                  "unexpected)")


@lru_cache(maxsize=16)
def _bounded(base: Any) -> Any:
    """`base` (a draft's validator class) with its regex keywords matched by saferegex."""
    import jsonschema

    keywords = {"pattern": _pattern, "patternProperties": _pattern_properties,
                "additionalProperties": _additional_properties}
    return jsonschema.validators.extend(
        base, {k: fn for k, fn in keywords.items() if k in base.VALIDATORS})

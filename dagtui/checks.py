"""Deterministic check nodes: verdicts computed in code, no judge call.

"If it is checkable in code, it does not belong in a prompt": a regex, a JSON parse or a word
count is exact, free and instant, so a check node answers it before any judge runs. Every
kind returns a verdict value (a bool, or a label for `python`) plus a one-line reason that
says what was measured, so a check step reads like a judge step in the debugger.

Semantics (documented in the README):
- `regex`: `re.search(pattern, text)`; `flags` letters i, m, s, x.
- `json`: the text parses as JSON.
- `json_schema`: the text parses and validates against `schema` (inline table, or a path
  relative to the graph file).
- `length`: `min <= count <= max` in `unit` chars (default), words or sentences.
- `contains`: `values` found in the text; `mode` any (default) or all; `case_sensitive`
  defaults to true.
- `equals`: the text equals `expected_output` (surrounding whitespace ignored;
  `case_sensitive` defaults to true).
- `tools`: names in `tools_called` against `allowed` (every call allowed) or else
  `expected_tools` with `mode` subset (default: every expected tool was called), exact (the
  same set of names) or ordered (expected tools called in that order, others may interleave).
- `python`: `"module:function"` (module looked up beside the graph file too), called as
  `function(value)` or `function(value, case_fields)`; returns a bool or a label.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .model import CheckNode, Graph


class CheckError(ValueError):
    """A check could not be evaluated (bad settings, missing input, failing function)."""


@dataclass
class CheckResult:
    value: bool | str
    reason: str


def check_input(node: CheckNode, case_fields: dict[str, Any], evidence: dict[str, Any]) -> Any:
    """What the check reads: a task parent's output (`evidence`) or a case field (`param`)."""
    if node.evidence:
        if node.evidence not in evidence:
            raise CheckError(f"check {node.id!r} reads evidence from {node.evidence!r}, which "
                             "has not produced any output on this path")
        return evidence[node.evidence]
    param = node.param or _default_param(node)
    if param is None:
        raise CheckError(f"check {node.id!r} names neither 'param' nor 'evidence'")
    return case_fields.get(param)


def _default_param(node: CheckNode) -> str | None:
    if node.check == "tools":
        return "tools_called"
    if node.params:
        return node.params[0]
    return None


def input_param(node: CheckNode) -> str | None:
    """The case field a check needs (None when it reads a task's evidence)."""
    if node.evidence:
        return None
    return node.param or _default_param(node)


def run_check(
    node: CheckNode, graph: Graph, case_fields: dict[str, Any], evidence: dict[str, Any]
) -> CheckResult:
    kind = node.check
    fn = _KINDS.get(kind)
    if fn is None:
        raise CheckError(f"unknown check kind {kind!r}")
    value = check_input(node, case_fields, evidence)
    return fn(node, value, graph, case_fields)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _short(text: str, limit: int = 60) -> str:
    text = text.replace("\n", " ")
    return json.dumps(text if len(text) <= limit else text[: limit - 3] + "...")


_FLAG_LETTERS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


def _regex(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    if not node.pattern:
        raise CheckError(f"check {node.id!r}: regex needs 'pattern'")
    flags = 0
    for letter in (node.flags or "").lower():
        if letter not in _FLAG_LETTERS:
            raise CheckError(f"check {node.id!r}: unknown regex flag {letter!r} (use i, m, s, x)")
        flags |= _FLAG_LETTERS[letter]
    try:
        match = re.search(node.pattern, _text(value), flags)
    except re.error as exc:
        raise CheckError(f"check {node.id!r}: bad pattern: {exc}") from None
    if match:
        return CheckResult(True, f"pattern /{node.pattern}/ matched {_short(match.group(0))}")
    return CheckResult(False, f"pattern /{node.pattern}/ did not match")


def _parse_json(value: Any) -> tuple[bool, Any, str]:
    if isinstance(value, dict | list):
        return True, value, "value is structured data"
    try:
        return True, json.loads(_text(value)), "parses as JSON"
    except (json.JSONDecodeError, ValueError) as exc:
        return False, None, f"not JSON: {exc.msg if hasattr(exc, 'msg') else exc}"


def _json(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    ok, _, why = _parse_json(value)
    return CheckResult(ok, why)


def load_schema(node: CheckNode, graph: Graph) -> dict[str, Any]:
    schema = node.schema_
    if isinstance(schema, str):
        base = Path(graph.path).parent if graph.path else Path.cwd()
        path = (base / schema).resolve()
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise CheckError(f"check {node.id!r}: cannot read schema {str(path)!r}: {exc}") from None
    if not isinstance(schema, dict):
        raise CheckError(f"check {node.id!r}: json_schema needs 'schema' (a table or a path)")
    return schema


def _json_schema(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    schema = load_schema(node, graph)
    ok, data, why = _parse_json(value)
    if not ok:
        return CheckResult(False, why)
    try:
        import jsonschema  # a dependency of litellm; imported only when a check needs it
    except ImportError as exc:  # pragma: no cover
        raise CheckError("json_schema checks need the 'jsonschema' package") from exc
    try:
        validator_cls = jsonschema.validators.validator_for(schema)
        validator_cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise CheckError(f"check {node.id!r}: the schema itself is invalid: {exc.message}") from None
    errors = sorted(validator_cls(schema).iter_errors(data), key=lambda e: list(e.path))
    if not errors:
        return CheckResult(True, "valid against the schema")
    first = errors[0]
    where = "/".join(str(p) for p in first.path) or "(root)"
    return CheckResult(False, f"schema violation at {where}: {first.message}")


_SENTENCE = re.compile(r"[^.!?]+(?:[.!?]+|$)")


def count(text: str, unit: str) -> int:
    if unit == "words":
        return len(text.split())
    if unit == "sentences":
        return len([s for s in _SENTENCE.findall(text) if s.strip()])
    return len(text)


def _length(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    unit = node.unit or "chars"
    if node.min is None and node.max is None:
        raise CheckError(f"check {node.id!r}: length needs 'min' or 'max'")
    n = count(_text(value), unit)
    low = node.min if node.min is not None else 0
    high = node.max
    ok = n >= low and (high is None or n <= high)
    bound = f"{low}..{high if high is not None else '∞'}"
    return CheckResult(ok, f"{n} {unit} ({'within' if ok else 'outside'} {bound})")


def _contains(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    values = node.values or []
    if not values:
        raise CheckError(f"check {node.id!r}: contains needs 'values'")
    mode = node.mode or "any"
    if mode not in ("any", "all"):
        raise CheckError(f"check {node.id!r}: contains mode must be 'any' or 'all'")
    text = _text(value)
    sensitive = node.case_sensitive if node.case_sensitive is not None else True
    hay = text if sensitive else text.lower()
    found = [v for v in values if (v if sensitive else v.lower()) in hay]
    missing = [v for v in values if v not in found]
    ok = bool(found) if mode == "any" else not missing
    if mode == "any":
        why = f"found {found}" if found else f"none of {values} found"
    else:
        why = "all found" if not missing else f"missing {missing}"
    return CheckResult(ok, why)


def _equals(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    expected = case.get("expected_output")
    if expected is None:
        raise CheckError(f"check {node.id!r}: equals compares with expected_output, which the "
                         "case does not provide")
    a, b = _text(value).strip(), _text(expected).strip()
    sensitive = node.case_sensitive if node.case_sensitive is not None else True
    if not sensitive:
        a, b = a.lower(), b.lower()
    return CheckResult(a == b, "equals expected_output" if a == b
                       else f"{_short(a)} differs from expected {_short(b)}")


def _tool_names(calls: Any) -> list[str]:
    if calls is None:
        return []
    if not isinstance(calls, list):
        calls = [calls]
    names = []
    for call in calls:
        if isinstance(call, str):
            names.append(call)
        elif isinstance(call, dict) and "name" in call:
            names.append(str(call["name"]))
    return names


def _tools(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    called = _tool_names(value)
    if node.allowed is not None:
        extra = [n for n in called if n not in node.allowed]
        return CheckResult(not extra, f"called {called}; " + (
            f"not allowed: {extra}" if extra else "all allowed"))
    if case.get("expected_tools") is None:
        raise CheckError(f"check {node.id!r}: tools needs 'allowed' or the case's expected_tools")
    expected = _tool_names(case.get("expected_tools"))
    mode = node.mode or "subset"
    if mode == "subset":
        missing = [n for n in expected if n not in called]
        ok = not missing
        why = "every expected tool called" if ok else f"expected but not called: {missing}"
    elif mode == "exact":
        ok = set(called) == set(expected)
        why = f"called {sorted(set(called))} vs expected {sorted(set(expected))}"
    elif mode == "ordered":
        it = iter(called)
        ok = all(any(c == e for c in it) for e in expected)
        why = f"called {called}, expected in order {expected}"
    else:
        raise CheckError(f"check {node.id!r}: tools mode must be subset, exact or ordered")
    return CheckResult(ok, why)


def load_function(spec: str, graph: Graph) -> Callable[..., Any]:
    """Import `"module:function"`, looking beside the graph file as well as on sys.path."""
    if ":" not in spec:
        raise CheckError(f"python check function {spec!r} must look like 'module:function'")
    mod_name, _, fn_name = spec.partition(":")
    added = None
    if graph.path:
        base = str(Path(graph.path).resolve().parent)
        if base not in sys.path:
            sys.path.insert(0, base)
            added = base
    try:
        module = importlib.import_module(mod_name)
    except Exception as exc:
        raise CheckError(f"cannot import {mod_name!r} for python check: {exc}") from None
    finally:
        if added:
            sys.path.remove(added)
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise CheckError(f"{mod_name!r} has no function {fn_name!r}")
    return fn


def _python(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    fn = load_function(node.function or "", graph)
    try:
        positional = [
            p for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
        two = len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in positional)
    except (TypeError, ValueError):
        two = False
    try:
        out = fn(value, dict(case)) if two else fn(value)
    except Exception as exc:
        raise CheckError(f"python check {node.function!r} raised {type(exc).__name__}: {exc}") from None
    if isinstance(out, tuple) and len(out) == 2:
        out, why = out
    else:
        why = f"{node.function} returned {out!r}"
    if not isinstance(out, bool | str):
        raise CheckError(f"python check {node.function!r} returned {out!r}; expected a bool "
                         "or a label")
    return CheckResult(out, str(why))


_KINDS: dict[str, Callable[[CheckNode, Any, Graph, dict[str, Any]], CheckResult]] = {
    "regex": _regex,
    "json": _json,
    "json_schema": _json_schema,
    "length": _length,
    "contains": _contains,
    "equals": _equals,
    "tools": _tools,
    "python": _python,
}

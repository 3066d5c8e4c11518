"""Deterministic check nodes: verdicts computed in code, no judge call.

"If it is checkable in code, it does not belong in a prompt": a regex, a JSON parse or a word
count is exact, free and instant, so a check node answers it before any judge runs. Every
kind returns a verdict value (a bool, or a label for `python`) plus a one-line reason that
says what was measured, so a check step reads like a judge step in the debugger.

Semantics (documented in the README):
- `regex`: `re.search(pattern, text)`; `flags` letters i, m, s, x. Matched by
  `dagtui.saferegex` (RE2, else `re` in a worker with a deadline), so a backtracking
  pattern fails the step instead of hanging it.
- `json`: the text parses as JSON.
- `json_schema`: the text parses and validates against `schema` (inline table, or a path
  relative to the graph file); only references inside the schema resolve, nothing is
  fetched (`dagtui.graph.schema_check`).
- `length`: `min <= count <= max` in `unit` chars (default), words or sentences.
- `contains`: `values` found in the text; `mode` any (default) or all; `case_sensitive`
  defaults to true.
- `equals`: the text equals `expected_output` (surrounding whitespace ignored;
  `case_sensitive` defaults to true).
- `tools`: names in `tools_called` against `allowed` (every call allowed) or else
  `expected_tools` with `mode` subset (default: every expected tool was called), exact (the
  same set of names) or ordered (expected tools called in that order, others may interleave).
- `python`: `"module:function"`, called as `function(value)` or `function(value,
  case_fields)`; returns a bool or a label. See `PythonConsent` for where the module may come
  from and who may let it run.

Each kind is a `CheckKind` in a registry, as node types are `dagtui.kinds.NodeKind`s: what
it takes from its node is `dagtui.graph.model.CHECK_SETTINGS`, what it does (evaluate, what else
it reads, its validation, whether it runs user code) the `CheckKind`, and the code that ran
a kind by its name looks it up (`check_kind`, `find_check`). A new kind is one
`register(CheckKind(...))` (and a `CheckNode` field for a setting no kind has yet).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import inspect
import json
import os
import re
import sys
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from dagtui import saferegex
from dagtui.graph import schema_check
from dagtui.graph.model import CHECK_SETTINGS, CheckNode, CheckSettings, Graph, field_spec
from dagtui.graph.python_env import ALLOW_ENV, PATH_ENV
from dagtui.text import shorten


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
    kind = _CHECKS.get(node.check)
    if kind is not None and kind.reads is not None:
        return kind.reads
    if node.params:
        return node.params[0]
    return None


def input_param(node: CheckNode) -> str | None:
    """The case field a check needs (None when it reads a task's evidence)."""
    if node.evidence:
        return None
    return node.param or _default_param(node)


def run_check(
    node: CheckNode, graph: Graph, case_fields: dict[str, Any], evidence: dict[str, Any],
    python: PythonConsent | None = None,
) -> CheckResult:
    """Evaluate a check node. `python` is the user's consent for checks that run user code
    (None: whatever DAGTUI_ALLOW_PYTHON / DAGTUI_PYTHON_PATH say); it is never asked for
    here."""
    kind = _CHECKS.get(node.check)
    if kind is None:
        raise CheckError(f"unknown check kind {node.check!r}")
    value = check_input(node, case_fields, evidence)
    if kind.runs_code and python is None:
        python = PythonConsent.from_env()
    return kind.evaluate(node, value, graph, case_fields, python)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _short(text: str, limit: int = 60) -> str:
    """`text` quoted for a check's reason: one line, cut to fit."""
    return json.dumps(shorten(text, limit, flat="squash"), ensure_ascii=False)


def _regex(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    if not node.pattern:
        raise CheckError(f"check {node.id!r}: regex needs 'pattern'")
    try:  # RE2, or `re` in a worker with a deadline: a backtracking pattern cannot hang
        match = saferegex.search(node.pattern, _text(value), saferegex.flags_of(node.flags or ""))
    except saferegex.RegexError as exc:
        raise CheckError(f"check {node.id!r}: {exc}") from None
    if match:
        return CheckResult(True, f"pattern /{node.pattern}/ matched {_short(match.text)}")
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
        from dagtui.inputs import JSON_LIMIT, InputError, read_text

        try:  # a FIFO or /dev/zero named as the schema is refused, not read forever
            schema = json.loads(read_text(path, limit=JSON_LIMIT, what="JSON Schema file"))
        except (InputError, ValueError, RecursionError) as exc:
            raise CheckError(f"check {node.id!r}: cannot read schema {str(path)!r}: {exc}") from None
    if not isinstance(schema, dict):
        raise CheckError(f"check {node.id!r}: json_schema needs 'schema' (a table or a path)")
    return schema


def _json_schema(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    schema = load_schema(node, graph)
    ok, data, why = _parse_json(value)
    if not ok:
        return CheckResult(False, why)
    try:  # only references inside the schema resolve; its regexes are bounded
        violation = schema_check.validate(schema, data)
    except schema_check.SchemaError as exc:
        raise CheckError(f"check {node.id!r}: {exc}") from None
    if violation is None:
        return CheckResult(True, "valid against the schema")
    where, message = violation
    return CheckResult(False, f"schema violation at {where}: {message}")


_SENTENCE = re.compile(r"[^.!?]+(?:[.!?]+|$)")


def count(text: str, unit: str) -> int:
    if unit == "words":
        return len(text.split())
    if unit == "sentences":
        return len([s for s in _SENTENCE.findall(text) if s.strip()])
    return len(text)


def _length(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any]) -> CheckResult:
    unit = node.unit or field_spec(CheckNode, "unit").unset
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
    mode = node.mode or CHECK_SETTINGS["contains"].choices["mode"][0]
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
    mode = node.mode or CHECK_SETTINGS["tools"].choices["mode"][0]
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


# --------------------------------------------------------------------------- python checks
#
# A python check runs code, so two things guard it. Where: the module is a file beside the
# graph (or in a directory the user names), loaded by its path; an installed or standard
# library module is never reachable, so `function = "os:system"` is refused however the
# run was started. Who: running it needs consent the graph file cannot give itself, i.e.
# `--allow-python`, DAGTUI_ALLOW_PYTHON=1, `allow_python=True` in the API, or the person at
# the TUI answering a question; without it the module is not even imported (importing a
# module runs it).

#: what every refusal says to do about it
HOW_TO_ALLOW = f"pass --allow-python or set {ALLOW_ENV}=1"
_NAME = re.compile(r"^[A-Za-z_]\w*$")


@dataclass(frozen=True)
class PythonTarget:
    """A python check's function, located: what a consent question names."""

    node: str
    module: str
    function: str
    path: Path

    @property
    def ref(self) -> str:
        return f"{self.module}:{self.function}"

    def describe(self) -> str:
        return f"{self.ref} from {self.path}"


#: asks a person whether a target may run (the TUI's dialog); True allows
PythonAsker = Callable[[PythonTarget], Awaitable[bool]]


def env_allows_python() -> bool:
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def env_python_dirs() -> list[str]:
    return [d for d in os.environ.get(PATH_ENV, "").split(os.pathsep) if d.strip()]


class PythonConsent:
    """Whether python checks may run, and where their modules may be found.

    Made only from what the user says (flags, the environment, an API argument, a dialog);
    the engine, the suite runner and worker processes carry the one object. `allow` lets
    every python check run; otherwise `ask` (the TUI) is asked once per function, and the
    answer holds for as long as this object lives (a debugger session). `dirs` are searched
    after the graph's own folder.
    """

    def __init__(self, allow: bool = False, dirs: Iterable[str | os.PathLike[str]] = (), *,
                 ask: PythonAsker | None = None) -> None:
        self.allow = allow
        self.dirs = tuple(Path(d) for d in dirs)
        self.ask = ask
        self.answers: dict[tuple[str, Path], bool] = {}
        self._asking: asyncio.Lock | None = None

    @classmethod
    def from_env(cls, allow: bool = False, dirs: Iterable[str | os.PathLike[str]] = (), *,
                 ask: PythonAsker | None = None) -> PythonConsent:
        """The explicit choice plus DAGTUI_ALLOW_PYTHON / DAGTUI_PYTHON_PATH."""
        return cls(allow or env_allows_python(), [*dirs, *env_python_dirs()], ask=ask)

    def __getstate__(self) -> dict[str, Any]:
        """Sent to worker processes without the dialog (it cannot cross a process)."""
        state = dict(self.__dict__)
        state["ask"], state["_asking"] = None, None
        return state

    def allows(self, target: PythonTarget) -> bool:
        return self.allow or self.answers.get((target.function, target.path), False)

    def refusal(self, target: PythonTarget) -> str:
        key = (target.function, target.path)
        if self.answers.get(key) is False:
            why = ("was denied for this session (reopen dagtui to be asked again, or pass "
                   "--allow-python)")
        else:
            why = f"runs only with consent: {HOW_TO_ALLOW}"
        return (f"python check '{target.node}' would run {target.describe()}; python code "
                f"{why}")

    async def admit(self, node: CheckNode, graph: Graph) -> PythonTarget:
        """Locate `node`'s function and make sure it may run, asking when there is someone
        to ask; CheckError (saying how to allow it) otherwise. Nothing is imported."""
        target = locate_python(node, graph, self)
        if not self.allows(target) and self.ask is not None:
            if self._asking is None:
                self._asking = asyncio.Lock()
            async with self._asking:  # two ready nodes naming one function: one question
                key = (target.function, target.path)
                if key not in self.answers:
                    self.answers[key] = bool(await self.ask(target))
        if not self.allows(target):
            raise CheckError(self.refusal(target))
        return target


def python_dirs(graph: Graph, consent: PythonConsent | None = None) -> list[Path]:
    """Where a python check's module may live: the graph's folder, then the user's dirs
    (`consent`'s, else DAGTUI_PYTHON_PATH's)."""
    base = Path(graph.path).parent if graph.path else None
    return search_dirs(base, consent.dirs if consent is not None else env_python_dirs())


def search_dirs(base: str | os.PathLike[str] | None,
                extra: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """`base` (a graph's folder; None for a graph with no file) then `extra`, resolved."""
    dirs = [Path(base).resolve()] if base is not None else []
    dirs += [Path(d).resolve() for d in extra]
    return list(dict.fromkeys(dirs))


def split_function(spec: str) -> tuple[str, str] | None:
    """`"pkg.module:function"` as (module, function); None unless every part is a name."""
    module, sep, function = spec.partition(":")
    parts = module.split(".")
    if not sep or not _NAME.fullmatch(function) or not all(_NAME.fullmatch(p) for p in parts):
        return None
    return module, function


def module_file(module: str, dirs: Iterable[Path]) -> Path | None:
    """The file of `module` inside one of `dirs` (`a.b` is `a/b.py` or `a/b/__init__.py`),
    never outside it (a symlink leading elsewhere does not count); None when there is none."""
    parts = module.split(".")
    for base in dirs:
        for candidate in (base.joinpath(*parts[:-1], parts[-1] + ".py"),
                          base.joinpath(*parts, "__init__.py")):
            if not candidate.is_file():
                continue
            real = candidate.resolve()
            if real.is_relative_to(base):
                return real
    return None


def locate_python(node: CheckNode, graph: Graph, consent: PythonConsent) -> PythonTarget:
    """Where `node`'s function lives; CheckError if not a module file in an allowed folder."""
    spec = node.function or ""
    names = split_function(spec)
    if names is None:
        raise CheckError(f"python check '{node.id}': function = {spec!r} must look like "
                         "'module:function', naming a module file beside the graph")
    dirs = python_dirs(graph, consent)
    path = module_file(names[0], dirs)
    if path is None:
        where = ", ".join(str(d) for d in dirs) or "nowhere (the graph has no file)"
        raise CheckError(
            f"python check '{node.id}': no module file {names[0]!r} in {where}; python checks "
            f"load modules only from the graph's folder or a --python-path / {PATH_ENV} "
            "directory, never installed or standard-library modules")
    return PythonTarget(node.id, names[0], names[1], path)


_loaded: dict[tuple[str, int, int], ModuleType] = {}
_loading = threading.Lock()


def _load_module(target: PythonTarget) -> ModuleType:
    """Execute the module file under a private name (so it can never shadow or be an
    installed module), once per version of the file."""
    try:
        stat = target.path.stat()
    except OSError as exc:
        raise CheckError(f"cannot read {target.path} for python check '{target.node}': "
                         f"{exc}") from None
    key = (str(target.path), stat.st_mtime_ns, stat.st_size)
    with _loading:
        module = _loaded.get(key)
        if module is not None:
            return module
        digest = hashlib.sha1(str(target.path).encode()).hexdigest()[:12]
        name = f"_dagtui_check_{digest}_{target.module.replace('.', '_')}"
        package = [str(target.path.parent)] if target.path.name == "__init__.py" else None
        spec = importlib.util.spec_from_file_location(name, target.path,
                                                      submodule_search_locations=package)
        if spec is None or spec.loader is None:
            raise CheckError(f"cannot load {target.path} for python check '{target.node}'")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look their module up here
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(name, None)
            raise CheckError(f"cannot import {target.module!r} ({target.path}) for python "
                             f"check '{target.node}': {type(exc).__name__}: {exc}") from None
        _loaded[key] = module
        return module


def load_function(node: CheckNode, graph: Graph,
                  consent: PythonConsent | None = None) -> Callable[..., Any]:
    """`node`'s function, if it is a module file in an allowed folder and consent is given;
    the function must be defined in that file (not one it imported, such as `os.system`)."""
    consent = consent if consent is not None else PythonConsent.from_env()
    target = locate_python(node, graph, consent)
    if not consent.allows(target):
        raise CheckError(consent.refusal(target))
    module = _load_module(target)
    fn = getattr(module, target.function, None)
    if not callable(fn):
        raise CheckError(f"{target.module!r} ({target.path}) has no function "
                         f"{target.function!r}")
    if getattr(fn, "__module__", None) != module.__name__:
        raise CheckError(f"python check '{node.id}': {target.ref} is not defined in "
                         f"{target.path} (it comes from {getattr(fn, '__module__', '?')!r}); "
                         "name a function written in the module itself")
    return fn


def _python(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any],
            consent: PythonConsent | None) -> CheckResult:
    fn = load_function(node, graph, consent)
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


# --------------------------------------------------------------------------- the registry

#: evaluates a check on the value it reads: (node, value, graph, case fields, consent for user
#: code) -> the verdict and why; raises CheckError
Evaluate = Callable[[CheckNode, Any, Graph, dict[str, Any], "PythonConsent | None"], CheckResult]
#: what a check kind reads besides its input: (node) -> case fields
Reads = Callable[[CheckNode], list[str]]


def _nothing_more(node: CheckNode) -> list[str]:
    return []


@dataclass(frozen=True)
class CheckKind:
    """One check kind's behaviour; what it takes from its node is `settings`.

    `validate` is called with the validator's `dagtui.graph.validate.nodes.NodeChecks` (its `add`
    and `check_*` helpers), the node id and the node, after the checks every check gets
    (its input, its settings' kinds and the required ones, their choices)."""

    name: str
    settings: CheckSettings
    evaluate: Evaluate
    #: the case field it reads when the node names neither `param` nor `evidence` (None:
    #: it must name one)
    reads: str | None = None
    #: the case fields it compares its input with (equals: `expected_output`)
    compares: Reads = _nothing_more
    #: its own validation of its settings (None: nothing beyond the shared checks)
    validate: Callable[[Any, str, CheckNode], None] | None = None
    #: its verdicts may be labels as well as true and false (a python function's)
    labels: bool = False
    #: it runs the user's code: only with consent, asked before anything is imported
    runs_code: bool = False


_CHECKS: dict[str, CheckKind] = {}


def register(kind: CheckKind) -> CheckKind:
    """Make a check kind known everywhere: the loader, the validator, the engine, the form,
    `dagtui schema` and docs/format.md."""
    _CHECKS[kind.name] = kind
    CHECK_SETTINGS[kind.name] = kind.settings
    return kind


def unregister(name: str) -> None:
    """Forget a registered kind (a test's toy kind)."""
    _CHECKS.pop(name, None)
    CHECK_SETTINGS.pop(name, None)


def find_check(name: str | None) -> CheckKind | None:
    """The check kind named `name`, or None for a kind nobody registered."""
    return _CHECKS.get(name or "")


def check_kinds() -> list[CheckKind]:
    """Every registered check kind, in registration order."""
    return list(_CHECKS.values())


def _no_consent(fn: Callable[[CheckNode, Any, Graph, dict[str, Any]], CheckResult]) -> Evaluate:
    """A kind that runs no user code: consent does not concern it."""
    def evaluate(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any],
                 consent: PythonConsent | None) -> CheckResult:
        return fn(node, value, graph, case)
    return evaluate


def _tools_compares(node: CheckNode) -> list[str]:
    return ["expected_tools"] if node.allowed is None else []


# the validators are `dagtui.graph.validate.nodes.NodeChecks` methods, reached through the object
# the validator passes in (this core module cannot import the validator: it imports checks)
REGEX = register(CheckKind(
    "regex", CHECK_SETTINGS["regex"], _no_consent(_regex),
    validate=lambda checks, nid, node: checks.check_regex(nid, node)))
JSON = register(CheckKind("json", CHECK_SETTINGS["json"], _no_consent(_json)))
JSON_SCHEMA = register(CheckKind(
    "json_schema", CHECK_SETTINGS["json_schema"], _no_consent(_json_schema),
    validate=lambda checks, nid, node: checks.check_schema(nid, node)))
LENGTH = register(CheckKind(
    "length", CHECK_SETTINGS["length"], _no_consent(_length),
    validate=lambda checks, nid, node: checks.check_length(nid, node)))
CONTAINS = register(CheckKind("contains", CHECK_SETTINGS["contains"], _no_consent(_contains)))
EQUALS = register(CheckKind("equals", CHECK_SETTINGS["equals"], _no_consent(_equals),
                            compares=lambda node: ["expected_output"]))
TOOLS = register(CheckKind("tools", CHECK_SETTINGS["tools"], _no_consent(_tools),
                           reads="tools_called", compares=_tools_compares))
#: runs a function of the user's: with consent only (`PythonConsent`), which the engine
#: asks for before the module is even imported
PYTHON = register(CheckKind(
    "python", CHECK_SETTINGS["python"], _python, labels=True, runs_code=True,
    validate=lambda checks, nid, node: checks.check_python(nid, node)))

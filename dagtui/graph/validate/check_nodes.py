"""Checks of code-check nodes (`type = "check"`): the kind, what it reads, the settings each
kind takes (regex flags and pattern, JSON Schema file, length bounds, modes, python function)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dagtui.graph.checks import CheckKind, find_check
from dagtui.graph.model import CHECK_KINDS, CHECK_SETTINGS, CheckNode, TaskNode
from dagtui.graph.positions import KeyPath
from dagtui.graph.schema_check import outside_refs, patterns, unbounded_keywords
from dagtui.graph.validate.verdicts import VerdictChecks
from dagtui.inputs import JSON_LIMIT, InputError, read_text
from dagtui.saferegex import FLAG_LETTERS, RegexError, nested_quantifier, python_compile
from dagtui.text import suggest

#: the regex flag letters the check engine (`dagtui.graph.checks`) understands, in either case
REGEX_FLAGS = FLAG_LETTERS
_FUNCTION_REF = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*$")


def _one_of(allowed: tuple[str, ...]) -> str:
    """`"any" or "all"`, or `one of subset, exact, ordered`."""
    if len(allowed) == 2:
        return f'"{allowed[0]}" or "{allowed[1]}"'
    return f"one of {', '.join(allowed)}"


class CheckNodeChecks(VerdictChecks):
    """Code-check nodes: kind, input and per-kind settings. What a kind takes, needs and
    allows is its `dagtui.graph.model.CheckSettings`; what more it checks, its `CheckKind.validate`
    (one of the `check_*` methods below for the built-in kinds)."""

    def check_check(self, nid: str, node: CheckNode) -> None:
        kind = node.check
        if self.missing(nid, "check", kind):
            self.add("DAG003", f"'check' is missing: name the kind of check, one of "
                     f"{', '.join(CHECK_KINDS)}", ("nodes", nid, "check"), node=nid, fld="check",
                     at_value=self.raw_has(nid, "check"))
        elif kind not in CHECK_KINDS:
            self.add("DAG007", f"unknown check kind '{kind}'{suggest(kind, CHECK_KINDS)}; use "
                     f"one of: {', '.join(CHECK_KINDS)}", ("nodes", nid, "check"), node=nid,
                     fld="check", at_value=True)
        found = find_check(kind)
        self.check_check_input(nid, node, found)
        if found is not None:
            self.check_kind_settings(nid, node, found)
        self.check_verdicts(nid, node, binary=None if found and found.labels else True)

    def check_check_input(self, nid: str, node: CheckNode, kind: CheckKind | None) -> None:
        if node.param is None and node.evidence is None and kind and kind.reads:
            return  # a tools check reads tools_called unless told otherwise
        if node.param is None and node.evidence is None:
            self.add("DAG020", "a check reads one thing: set param = \"actual_output\" (a "
                     "test-case field) or evidence = \"<task id>\" (a task parent's output)",
                     ("nodes", nid), node=nid, fld="param")
            return
        if node.param is not None and node.evidence is not None:
            self.add("DAG020", "a check reads one thing: keep either param or evidence, not "
                     "both", ("nodes", nid, "evidence"), node=nid, fld="evidence")
            return
        if node.param is not None:
            if node.param not in self.mode_params:
                self.add("DAG006", self.param_problem(node.param), ("nodes", nid, "param"),
                         node=nid, fld="param", at_value=True)
            return
        ev = node.evidence or ""
        target = self.graph.nodes.get(ev)
        path = ("nodes", nid, "evidence")
        if target is None:
            if ev not in self.raw_nodes:
                self.add("DAG008", f"evidence names '{ev}', which is not a node"
                         f"{suggest(ev, self.graph.nodes)}", path, node=nid, fld="evidence",
                         at_value=True)
        elif not isinstance(target, TaskNode):
            self.add("DAG020", f"evidence must name a task node, and '{ev}' is a "
                     f"{target.type} node", path, node=nid, fld="evidence", at_value=True)
        elif nid not in target.children:
            self.add("DAG020", f"evidence names task '{ev}', but '{nid}' is not among its "
                     f"children, so it never receives that output; add \"{nid}\" to "
                     f"{ev}.children", path, node=nid, fld="evidence", at_value=True)

    def check_kind_settings(self, nid: str, node: CheckNode, kind: CheckKind) -> None:
        """The settings every kind's are checked for: none of another kind's, the required
        ones present, each of its choices; then the kind's own validation."""
        name, own = kind.name, kind.settings.fields
        every = {f for settings in CHECK_SETTINGS.values() for f in settings.fields}
        for f in sorted(every - set(own)):
            value = getattr(node, CheckNode.attr_for(f), None)
            if value is not None:
                users = [k for k, s in CHECK_SETTINGS.items() if f in s.fields]
                hint = suggest(f, own)
                self.add("DAG002", f"'{f}' has no meaning for a {name} check{hint}; it "
                         f"belongs to {' / '.join(users)} checks", ("nodes", nid, f),
                         node=nid, fld=f)
        for f in kind.settings.required:
            self.require(nid, node, f, f"a {name} check needs it")
        for f, allowed in kind.settings.choices.items():
            value = getattr(node, CheckNode.attr_for(f), None)
            if value is not None and value not in allowed:
                self.add("DAG020", f"{f} = '{value}' for a {name} check must be "
                         f"{_one_of(allowed)}", ("nodes", nid, f), node=nid, fld=f,
                         at_value=True)
        if kind.validate is not None:
            kind.validate(self, nid, node)

    def check_regex(self, nid: str, node: CheckNode) -> None:
        path = ("nodes", nid)
        flags = 0
        for ch in (node.flags or "").lower():
            if ch not in REGEX_FLAGS:
                self.add("DAG020", f"unknown regex flag '{ch}'; flags are letters from "
                         f"'{''.join(REGEX_FLAGS)}' (i ignore case, m multiline, s dot "
                         "matches newline, x verbose)", path + ("flags",),
                         node=nid, fld="flags", at_value=True)
                break
            flags |= REGEX_FLAGS[ch]
        if node.pattern:
            try:
                python_compile(node.pattern, flags)
            except RegexError as exc:
                self.add("DAG020", f"the regex pattern does not compile: "
                         f"{str(exc).removeprefix('bad pattern: ')}", path + ("pattern",),
                         node=nid, fld="pattern", at_value=True)
            else:
                self.check_backtracking(nid, node.pattern, path + ("pattern",), "pattern")

    def check_length(self, nid: str, node: CheckNode) -> None:
        path = ("nodes", nid)
        # no unit means chars (dagtui.graph.checks): it runs, so it is not an error
        if node.min is None and node.max is None:
            self.add("DAG020", "a length check needs min, max or both", path, node=nid,
                     fld="max")
        for f in ("min", "max"):
            value = getattr(node, f)
            if value is not None and value < 0:
                self.add("DAG020", f"{f} = {value} is negative", path + (f,), node=nid,
                         fld=f, at_value=True)
        if node.min is not None and node.max is not None and node.min > node.max:
            self.add("DAG020", f"min = {node.min} is larger than max = {node.max}, so no "
                     "text can pass", path + ("max",), node=nid, fld="max", at_value=True)

    def check_python(self, nid: str, node: CheckNode) -> None:
        if node.function and not _FUNCTION_REF.fullmatch(node.function):
            self.add("DAG020", f"function = '{node.function}' must look like "
                     "\"package.module:function\"", ("nodes", nid, "function"), node=nid,
                     fld="function", at_value=True)
        elif node.function:
            self.check_python_module(nid, node.function)

    def check_python_module(self, nid: str, function: str) -> None:
        """A python check runs code (DAG114), and only a module file beside the graph (or
        in DAGTUI_PYTHON_PATH) can be loaded (DAG115): say so before anyone runs it."""
        from dagtui.graph.checks import (
            HOW_TO_ALLOW,
            PATH_ENV,
            env_python_dirs,
            module_file,
            search_dirs,
        )

        module, _, name = function.partition(":")
        dirs = search_dirs(self.base_dir or ".", env_python_dirs())
        found = module_file(module, dirs)
        where = ("nodes", nid, "function")
        if found is None:
            self.add("DAG115", f"no module file '{module}' beside the graph ({dirs[0]}): "
                     f"python checks load only files from the graph's folder (or --python-path "
                     f"/ {PATH_ENV}), never installed or standard-library modules, so "
                     f"{function} is refused when it runs", where, node=nid, fld="function",
                     at_value=True)
            return
        self.add("DAG114", f"python check '{nid}' runs code: {module}:{name} from {found}; "
                 f"it runs only if the user allows it ({HOW_TO_ALLOW}), never because the "
                 "graph asks", where, node=nid, fld="function", at_value=True)

    def check_backtracking(self, nid: str, pattern: str, where: KeyPath, fld: str,
                           inside: str = "") -> None:
        """DAG117: a repeated group that holds a repeated part backtracks exponentially in
        Python's `re`; dagtui matches it with RE2 where it can, and stops it otherwise."""
        group = nested_quantifier(pattern)
        if group is None:
            return
        self.add("DAG117", f"{inside}pattern {pattern!r} nests quantifiers ({group}): a "
                 "backtracking engine (Python's re) takes "
                 "exponential time on a text that almost matches; dagtui matches it with RE2 "
                 "in linear time, but where RE2 cannot (backreferences, lookaround, the x "
                 "flag) the step fails after a few seconds. Write it without the nested "
                 "repetition, e.g. (a+)+ as a+", where, node=nid, fld=fld, at_value=True)

    def check_schema(self, nid: str, node: CheckNode) -> None:
        schema = node.schema_
        path = ("nodes", nid, "schema")
        if schema is None:
            return
        if isinstance(schema, dict):
            self.check_schema_contents(nid, schema, path, inline=True)
            return
        if not schema.strip():
            return  # reported as missing
        target = Path(self.base_dir) / schema
        try:
            text = read_text(target, limit=JSON_LIMIT, what="JSON Schema file")
        except InputError as exc:
            if exc.kind == "missing":
                self.add("DAG020", f"schema file '{schema}' does not exist (looked in "
                         f"{target.parent}); paths are relative to the graph file", path,
                         node=nid, fld="schema", at_value=True)
            else:
                self.add("DAG020", f"schema file '{schema}' cannot be read: {exc.message}",
                         path, node=nid, fld="schema", at_value=True)
            return
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            self.add("DAG020", f"schema file '{schema}' is not valid JSON: {exc}", path,
                     node=nid, fld="schema", at_value=True)
            return
        if not isinstance(data, dict | bool):
            self.add("DAG020", f"schema file '{schema}' must hold a JSON object (a JSON "
                     "Schema)", path, node=nid, fld="schema", at_value=True)
            return
        self.check_schema_contents(nid, data, path, inline=False)

    def check_schema_contents(self, nid: str, schema: object, path: KeyPath, *,
                              inline: bool) -> None:
        """DAG025 for a reference outside the schema (it is never fetched), DAG020 for
        regexes that cannot be bounded, DAG117 for backtracking patterns. In an inline
        table each points at the value; in a file, at `schema` with the JSON pointer."""
        def place(pointer: str) -> tuple[KeyPath, str]:
            if not inline:
                return path, f"in the schema file at {pointer}: "
            parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
            return path + tuple(int(p) if p.isdigit() else p for p in parts), ""

        for pointer, ref in outside_refs(schema):
            where, prefix = place(pointer)
            self.add("DAG025", f"{prefix}$ref {ref!r} points outside the schema: dagtui "
                     "resolves only references inside it (\"#/$defs/name\") and never fetches "
                     "a URL or a file, so the step fails; copy what it names into $defs",
                     where + (("$ref",) if inline else ()), node=nid, fld="schema",
                     at_value=True)
        why = unbounded_keywords(schema)
        if why is not None:
            self.add("DAG020", why, path, node=nid, fld="schema", at_value=True)
        for pointer, pattern in patterns(schema):
            where, prefix = place(pointer)
            self.check_backtracking(nid, pattern, where, "schema", inside=prefix + "schema ")

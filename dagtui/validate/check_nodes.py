"""Checks of code-check nodes (`type = "check"`): the kind, what it reads, the settings each
kind takes (regex flags and pattern, JSON Schema file, length bounds, modes, python function)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..inputs import JSON_LIMIT, InputError, read_text
from ..model import CHECK_KINDS, CheckNode, TaskNode
from ..positions import KeyPath
from ..saferegex import FLAG_LETTERS, RegexError, nested_quantifier, python_compile
from ..schema_check import outside_refs, patterns, unbounded_keywords
from ..text import suggest
from .verdicts import VerdictChecks

#: the regex flag letters the check engine (`dagtui.checks`) understands, in either case
REGEX_FLAGS = FLAG_LETTERS
CONTAINS_MODES = ("any", "all")
TOOLS_MODES = ("subset", "exact", "ordered")
LENGTH_UNITS = ("chars", "words", "sentences")
_FUNCTION_REF = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*$")


class CheckNodeChecks(VerdictChecks):
    """Code-check nodes: kind, input and per-kind settings."""

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
        self.check_check_input(nid, node)
        if kind in CHECK_KINDS:
            self.check_kind_settings(nid, node, kind)
        self.check_verdicts(nid, node, binary=None if kind == "python" else True)

    def check_check_input(self, nid: str, node: CheckNode) -> None:
        if node.param is None and node.evidence is None and node.check == "tools":
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

    def check_kind_settings(self, nid: str, node: CheckNode, kind: str) -> None:
        own = CheckNode.KIND_FIELDS.get(kind, ())
        every = {f for fields in CheckNode.KIND_FIELDS.values() for f in fields}
        for f in sorted(every - set(own)):
            value = getattr(node, "schema_" if f == "schema" else f, None)
            if value is not None:
                users = [k for k, fs in CheckNode.KIND_FIELDS.items() if f in fs]
                hint = suggest(f, own)
                self.add("DAG002", f"'{f}' has no meaning for a {kind} check{hint}; it "
                         f"belongs to {' / '.join(users)} checks", ("nodes", nid, f),
                         node=nid, fld=f)
        for f in CheckNode.KIND_REQUIRED.get(kind, ()):
            self.require(nid, node, f, f"a {kind} check needs it")
        path = ("nodes", nid)
        if kind == "regex":
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
        elif kind == "json_schema":
            self.check_schema(nid, node)
        elif kind == "length":
            # no unit means chars (dagtui.checks): it runs, so it is not an error
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
        elif kind == "contains":
            if node.mode is not None and node.mode not in CONTAINS_MODES:
                self.add("DAG020", f"mode = '{node.mode}' for a contains check must be "
                         "\"any\" or \"all\"", path + ("mode",), node=nid, fld="mode",
                         at_value=True)
        elif kind == "tools":
            if node.mode is not None and node.mode not in TOOLS_MODES:
                self.add("DAG020", f"mode = '{node.mode}' for a tools check must be one of "
                         f"{', '.join(TOOLS_MODES)}", path + ("mode",), node=nid, fld="mode",
                         at_value=True)
        elif kind == "python" and node.function and not _FUNCTION_REF.match(node.function):
            self.add("DAG020", f"function = '{node.function}' must look like "
                     "\"package.module:function\"", path + ("function",), node=nid,
                     fld="function", at_value=True)
        elif kind == "python" and node.function:
            self.check_python_module(nid, node.function)

    def check_python_module(self, nid: str, function: str) -> None:
        """A python check runs code (DAG114), and only a module file beside the graph (or
        in DAGTUI_PYTHON_PATH) can be loaded (DAG115): say so before anyone runs it."""
        from ..checks import HOW_TO_ALLOW, PATH_ENV, env_python_dirs, module_file, search_dirs

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

"""Diagnostics: what is wrong with a graph, where, and how sure we are.

Every problem dagtui reports has a stable code (tests, CI filters and the README rely on them),
a severity, a message written for someone new to DAG rubrics, and as much location as we
know: file, line, column, node id and field. Codes below 100 are errors (the graph cannot
run); 100 and up are warnings (it runs, but probably not as meant); 200 and up are notes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from enum import StrEnum

from dagtui.record import FrozenRecord, frozen
from dagtui.text import escape_controls


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


#: code -> short title. The title is the stable meaning; messages add the specifics.
CODES: dict[str, str] = {
    # errors: the graph cannot run
    "DAG001": "TOML syntax error",
    "DAG002": "unknown key",
    "DAG003": "missing required field",
    "DAG004": "value has the wrong type",
    "DAG005": "unknown node type",
    "DAG006": "unknown or unsupported param",
    "DAG007": "unknown check kind",
    "DAG008": "reference to an unknown node",
    "DAG009": "cycle",
    "DAG010": "binary node needs exactly one true and one false verdict",
    "DAG011": "duplicate verdict label",
    "DAG012": "verdict needs exactly one of score / then",
    "DAG013": "score must be a number from 0 to 10",
    "DAG014": "judgement or check node without verdicts",
    "DAG015": "a verdict combination reaches no leaf",
    "DAG016": "a verdict combination reaches more than one leaf",
    "DAG017": "verdict value of the wrong kind",
    "DAG018": "graph has no nodes or no root",
    "DAG019": "edge not allowed here",
    "DAG020": "invalid check settings",
    "DAG021": "threshold must be between 0 and 1",
    "DAG022": "file cannot be read as a graph",
    "DAG023": "internal error in the validator",
    "DAG024": "node id with control, zero-width or bidi characters",
    "DAG025": "JSON Schema reference outside the schema",
    "DAG026": "invalid map or unsure settings",
    # warnings: it runs, but probably not as meant
    "DAG101": "judgement node judges nothing",
    "DAG102": "node can never run",
    "DAG103": "task output nobody reads",
    "DAG104": "threshold decides nothing",
    "DAG105": "non-binary node with one label",
    "DAG106": "labels differ only in case or spacing",
    "DAG107": "G-Eval leaf without evaluation_steps",
    "DAG108": "no pinned judge model",
    "DAG109": "criteria look checkable in code",
    "DAG110": "gates deeper than four levels",
    "DAG111": "turn_window outside a multi-turn graph",
    "DAG114": "python check runs code",
    "DAG115": "python check module not beside the graph",
    "DAG112": "node ids that look the same",
    "DAG113": "cases file not found",
    "DAG116": "metric leaf needs DeepEval, which is not installed",
    "DAG117": "regex with nested quantifiers",
    "DAG118": "judge model not in litellm's model list, but close to one",
    "DAG119": "map node: the graph has no DeepEval export",
    # notes
    "DAG201": "path analysis skipped: too many verdict combinations",
}
#: every code table `Diagnostic.title` reads: the graph codes here, and the tables other
#: file kinds add with `add_codes` (suite files: `dagtui.suite.codes`) beside the code that
#: raises them, so this module imports none of them
_TABLES: list[dict[str, str]] = [CODES]


def add_codes(table: dict[str, str]) -> None:
    """Make `table`'s titles known to `Diagnostic.title` (once per table)."""
    if not any(t is table for t in _TABLES):
        _TABLES.append(table)


@frozen
class Diagnostic(FrozenRecord):
    """One problem. `line`/`col` are 1-based; 0 means unknown."""

    code: str
    severity: Severity
    message: str
    file: str | None = None
    line: int = 0
    col: int = 0
    node: str | None = None
    field: str | None = None

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def title(self) -> str:
        return next((t[self.code] for t in _TABLES if self.code in t), "")

    def location(self) -> str:
        """`file:line:col` (as much as is known), the form editors and CI jump to."""
        parts = [self.file or "<graph>"]
        if self.line:
            parts.append(str(self.line))
            parts.append(str(self.col or 1))
        return ":".join(parts)

    def format(self) -> str:
        """Compiler-style one line: `graphs/x.toml:12:3: error DAG012 [node.field] message`."""
        where = ""
        if self.node:
            where = f" [{self.node}{'.' + self.field if self.field else ''}]"
        line = f"{self.location()}: {self.severity.value} {self.code}{where} {self.message}"
        return escape_controls(line)

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["severity"] = self.severity.value
        return d

    def github(self) -> str:
        """A GitHub Actions workflow command, so problems show on the PR diff."""
        kind = {"error": "error", "warning": "warning"}.get(self.severity.value, "notice")
        props = [f"file={self.file}"] if self.file else []
        if self.line:
            props += [f"line={self.line}", f"col={self.col or 1}"]
        props.append(f"title={self.code} {self.title}")
        msg = self.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return escape_controls(f"::{kind} {','.join(props)}::{msg}")


#: codes that mean the input could not be read or parsed at all: every command exits 2 on
#: them (usage or input error), while other errors are findings (exit 1)
UNREADABLE_CODES = frozenset({"DAG001", "DAG022", "SUI001", "SUI017"})


def unreadable(diags: Iterable[Diagnostic]) -> bool:
    """True when any diagnostic says the file did not read or parse (exit 2, not 1)."""
    return any(d.code in UNREADABLE_CODES for d in diags)


def severity_of(code: str) -> Severity:
    n = int(code[3:])
    if n < 100:
        return Severity.ERROR
    if n < 200:
        return Severity.WARNING
    return Severity.INFO


def sort_key(d: Diagnostic) -> tuple[object, ...]:
    order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    return (d.file or "", d.line or 10**9, d.col, order[d.severity], d.code)


def to_json(diags: list[Diagnostic]) -> str:
    return json.dumps([d.to_dict() for d in diags], indent=2, ensure_ascii=False)

"""Test cases: what a graph is run against, loaded from JSONL, JSON or TOML (docs/format.md).

A case is kept as plain data (its fields as given) plus the human labels (`expected`,
`expected_score`, the adjudicated ones; `annotations`, the labels each annotator gave, see
`Annotation`) and where it came from (file and line), because every error about a case
should point at the line a person has to fix. Loading is strict about shape (a bad JSONL
line is an error naming its line) and lenient about content (unknown fields are kept in
`fields` so nothing a user wrote is silently dropped).
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagtui.graph.model import MULTI_TURN_PARAMS, SINGLE_TURN_PARAMS
from dagtui.inputs import CASES_LIMIT, InputError, open_brackets, parser_gave_up, read_text
from dagtui.text import suggest

if TYPE_CHECKING:
    from dagtui.graph.model import Graph

#: fields a case may carry besides labels; anything else is kept but flagged as unknown.
#: Single-turn cases carry exactly the graph's single-turn params; a multi-turn case carries
#: its `turns` (each with role/content) plus the conversation-level params.
SINGLE_TURN_FIELDS = SINGLE_TURN_PARAMS
MULTI_TURN_FIELDS = ("turns",) + tuple(p for p in MULTI_TURN_PARAMS if p not in ("role", "content"))
LABEL_FIELDS = ("expected", "expected_score", "annotations")
#: the keys of one entry of a case's `annotations` list
ANNOTATION_FIELDS = ("by", "expected", "expected_score")
LIST_FIELDS = ("context", "retrieval_context", "tags")
#: every field name a case may carry (any other is kept as written, and warned about when it
#: is close to one of these: `actual_ouput` leaves `actual_output` empty)
KNOWN_FIELDS = frozenset(("name", "id", "additional_metadata", *SINGLE_TURN_FIELDS,
                          *MULTI_TURN_FIELDS, *LABEL_FIELDS))


class CaseError(ValueError):
    """A cases file or a single case cannot be used; the message names file and line."""

    def __init__(self, message: str, file: str | None = None, line: int = 0) -> None:
        self.file = file
        self.line = line
        where = f"{file}:{line}: " if file and line else (f"{file}: " if file else "")
        super().__init__(f"{where}{message}")


@dataclass(frozen=True)
class Annotation:
    """One annotator's labels for a case: `by` names the person, `expected` and
    `expected_score` mean what a case's own do. A case's top-level `expected` is the
    adjudicated label set (what `test`, `run` and a default `calibrate` use); its
    `annotations` keep each person's, so `calibrate` can measure how far two people agree
    (`dagtui.calibration.annotators`) and compare the judge with one of them
    (`--annotator`)."""

    by: str
    expected: dict[str, Any] = field(default_factory=dict)
    expected_score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"by": self.by}
        if self.expected:
            out["expected"] = dict(self.expected)
        if self.expected_score is not None:
            out["expected_score"] = self.expected_score
        return out


@dataclass
class Case:
    """One test case.

    `fields` holds the case's data (input, actual_output, turns, ...), exactly as written;
    `expected` maps node ids to the human's label for that node; `annotations` holds
    each annotator's own labels (`Annotation`), beside the adjudicated `expected`.
    """

    name: str
    fields: dict[str, Any] = field(default_factory=dict)
    expected: dict[str, Any] = field(default_factory=dict)
    expected_score: float | None = None
    file: str | None = None
    line: int = 0
    annotations: tuple[Annotation, ...] = ()

    def get(self, key: str) -> Any:
        return self.fields.get(key)

    def has(self, key: str) -> bool:
        """True when the case provides `key` (None counts as missing; empty lists do not)."""
        return self.fields.get(key) is not None

    @property
    def turns(self) -> list[dict[str, Any]]:
        turns = self.fields.get("turns")
        return list(turns) if isinstance(turns, list) else []

    @property
    def where(self) -> str:
        """`file:line` (or the name) for messages about this case."""
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or f"case {self.name!r}"

    def to_dict(self) -> dict[str, Any]:
        """The case as it would be written in a cases file (used by traces)."""
        out: dict[str, Any] = {"name": self.name, **self.fields}
        if self.expected:
            out["expected"] = dict(self.expected)
        if self.expected_score is not None:
            out["expected_score"] = self.expected_score
        if self.annotations:
            out["annotations"] = [a.to_dict() for a in self.annotations]
        return out

    def annotation(self, by: str) -> Annotation | None:
        """The labels annotator `by` gave this case (None: they gave none)."""
        return next((a for a in self.annotations if a.by == by), None)


def annotators(cases: Iterable[Case]) -> list[str]:
    """Every annotator named in `cases`' annotations, in order of first appearance."""
    seen: dict[str, None] = {}
    for case in cases:
        for a in case.annotations:
            seen.setdefault(a.by, None)
    return list(seen)


def as_annotator(case: Case, by: str) -> Case:
    """`case` labelled as annotator `by` labelled it: their `expected` and `expected_score`
    in place of the adjudicated ones (none when they did not label it), so a calibration
    compares the judge with that one person (`dagtui calibrate --annotator`)."""
    mine = case.annotation(by)
    return dataclasses.replace(case, expected=dict(mine.expected) if mine else {},
                               expected_score=mine.expected_score if mine else None)


def _score(value: Any, where: str, file: str | None, line: int) -> float | None:
    """An `expected_score` (0..1) read, or a CaseError naming `where` (the case, or the
    case and its annotator)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise CaseError(f"{where}: 'expected_score' must be a number from 0 to 1, "
                        f"got {value!r}", file, line)
    return float(value)


def _annotations(value: Any, name: str, file: str | None, line: int
                 ) -> tuple[Annotation, ...]:
    """A case's `annotations` list read, strictly: each entry an object with a non-empty
    text `by` (unique in the case), an optional `expected` object and `expected_score`, and
    nothing else (a misspelt key would drop that person's labels without a word)."""
    if value is None:
        return ()
    where = f"case {name!r}"
    if not isinstance(value, list):
        raise CaseError(f"{where}: 'annotations' must be a list of objects with 'by' and "
                        "'expected'", file, line)
    out: list[Annotation] = []
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise CaseError(f"{where}: annotation {i + 1} must be an object with 'by' and "
                            "'expected'", file, line)
        by = entry.get("by")
        if not isinstance(by, str) or not by.strip():
            raise CaseError(f"{where}: annotation {i + 1} needs 'by', the annotator's name "
                            "(text)", file, line)
        who = f"{where}, annotator {by!r}"
        if any(a.by == by for a in out):
            raise CaseError(f"{who}: a second annotation by the same person (one per "
                            "annotator and case)", file, line)
        for key in entry:
            if key not in ANNOTATION_FIELDS:
                raise CaseError(f"{who}: {key!r} is no annotation field"
                                + (suggest(str(key), list(ANNOTATION_FIELDS))
                                   or f" (they are {', '.join(ANNOTATION_FIELDS)})"),
                                file, line)
        expected = entry.get("expected") or {}
        if not isinstance(expected, dict):
            raise CaseError(f"{who}: 'expected' must be an object mapping node id to a "
                            "label", file, line)
        out.append(Annotation(by, dict(expected),
                              _score(entry.get("expected_score"), who, file, line)))
    return tuple(out)


def case_from_dict(
    data: Any, *, index: int = 0, file: str | None = None, line: int = 0
) -> Case:
    """Build a case from a mapping, checking the shape of the fields that matter."""
    if not isinstance(data, dict):
        raise CaseError(f"a case must be an object, got {type(data).__name__}", file, line)
    data = dict(data)
    key = "name" if data.get("name") is not None else "id"
    name = data.pop("name", None)
    if name is None:
        name = data.pop("id", None)
    if name is not None and (isinstance(name, bool) or not isinstance(name, str | int | float)):
        shown = {"list": "a list", "dict": "an object"}.get(type(name).__name__,
                                                           repr(name))
        raise CaseError(f"case {index + 1}: '{key}' must be text (or a number), got {shown}",
                        file, line)
    name = str(name) if name is not None else f"case {index + 1}"
    expected = data.pop("expected", None) or {}
    if not isinstance(expected, dict):
        raise CaseError(f"case {name!r}: 'expected' must be an object mapping node id to a "
                        "label", file, line)
    score = _score(data.pop("expected_score", None), f"case {name!r}", file, line)
    annotations = _annotations(data.pop("annotations", None), name, file, line)
    for key in LIST_FIELDS:
        value = data.get(key)
        if value is not None and not isinstance(value, list):
            raise CaseError(f"case {name!r}: '{key}' must be a list of strings", file, line)
    turns = data.get("turns")
    if turns is not None:
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            raise CaseError(f"case {name!r}: 'turns' must be a list of objects with role and "
                            "content", file, line)
        for i, turn in enumerate(turns):
            if "role" not in turn or "content" not in turn:
                raise CaseError(f"case {name!r}: turn {i} needs 'role' and 'content'", file, line)
    # DeepEval goldens use these spellings for the same things
    if "additional_metadata" in data and "metadata" not in data:
        data["metadata"] = data.pop("additional_metadata")
    return Case(name, data, dict(expected), score, file, line, annotations)


def misspelt_fields(case: Case, read: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(field, warning) for each field of `case` that is no case field and no name in
    `read` (what the graph reads) but close to one: kept as written, like any field, yet
    most likely a typo that leaves the real field empty. The warning names file:line."""
    known = KNOWN_FIELDS | set(read)
    out: list[tuple[str, str]] = []
    for key in case.fields:
        hint = "" if key in known else suggest(key, known)
        if hint:
            out.append((key, f"{case.where}: case {case.name!r}: {key!r} is not a case "
                             f"field{hint}; it is kept, but nothing reads it"))
    return out


def load_cases(path: str | os.PathLike[str]) -> list[Case]:
    """Load every case of a file; raises CaseError naming the file (and line) on bad input."""
    p = Path(path)
    file = str(path)
    try:
        text = read_text(p, limit=CASES_LIMIT, what="cases file")
    except InputError as exc:
        message = "no such cases file" if exc.kind == "missing" else exc.message
        raise CaseError(message, file, exc.line) from None
    suffix = p.suffix.lower()
    if suffix == ".jsonl":
        return parse_jsonl(text, file)
    if suffix == ".toml":
        return parse_toml(text, file)
    if suffix == ".json":
        return parse_json(text, file)
    stripped = text.lstrip()
    if stripped.startswith("[") or stripped.startswith("{") and "\n{" not in stripped:
        try:
            return parse_json(text, file)
        except CaseError:
            pass
    return parse_jsonl(text, file)


def parse_jsonl(text: str, file: str | None = None) -> list[Case]:
    cases: list[Case] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        case = jsonl_case(line, lineno, len(cases), file)
        if case is not None:
            cases.append(case)
    _check_names(cases)
    return cases


def jsonl_case(line: str, lineno: int, index: int, file: str | None) -> Case | None:
    """The case on one JSONL line (None for a blank or `//` comment line), or a
    `CaseError` naming `file` and `lineno`; `index` is its 0-based position among the
    file's cases. The one line parser of `parse_jsonl` (a whole text) and
    `dagtui.run.case_stream` (a file read line by line), so both accept and word errors alike."""
    if not line.strip() or line.lstrip().startswith("//"):
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CaseError(f"not valid JSON ({exc.msg} at column {exc.colno})", file,
                        lineno) from None
    except (RecursionError, ValueError) as exc:  # deep nesting, a 5,000-digit integer
        raise CaseError(f"not usable JSON: {parser_gave_up(exc, line)[0]}", file,
                        lineno) from None
    return case_from_dict(data, index=index, file=file, line=lineno)


def parse_json(text: str, file: str | None = None) -> list[Case]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CaseError(f"not valid JSON ({exc.msg})", file, exc.lineno) from None
    except (RecursionError, ValueError) as exc:  # deep nesting, a 5,000-digit integer
        message, line = parser_gave_up(exc, text)
        raise CaseError(f"not usable JSON: {message}", file, line) from None
    items: Any
    if isinstance(data, list):
        items = data
    elif isinstance(data, dict):
        for key in ("test_cases", "goldens", "cases", "conversational_goldens"):
            if isinstance(data.get(key), list):
                items = data[key]
                break
        else:
            raise CaseError("a JSON cases file is a list of cases, or an object with "
                            "'test_cases' or 'goldens'", file)
    else:
        raise CaseError("a JSON cases file is a list of cases", file)
    lines = _object_lines(text)
    cases = [
        case_from_dict(item, index=i, file=file, line=lines[i] if i < len(lines) else 0)
        for i, item in enumerate(items)
    ]
    _check_names(cases)
    return cases


def parse_toml(text: str, file: str | None = None) -> list[Case]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CaseError(f"TOML syntax: {exc}", file) from None
    except (RecursionError, ValueError) as exc:  # deep nesting, a 5,000-digit integer
        message, line = parser_gave_up(exc, text)
        raise CaseError(f"TOML syntax: {message}", file, line) from None
    items = data.get("cases")
    if not isinstance(items, list):
        raise CaseError("a TOML cases file holds [[cases]] tables"
                        + _other_tables(data, text), file, _first_table_line(text))
    starts = [i + 1 for i, ln in enumerate(text.splitlines()) if ln.strip() == "[[cases]]"]
    cases = [
        case_from_dict(item, index=i, file=file, line=starts[i] if i < len(starts) else 0)
        for i, item in enumerate(items)
    ]
    _check_names(cases)
    return cases


def _other_tables(data: dict[str, Any], text: str) -> str:
    """What the file holds instead of `[[cases]]`, with a suggestion (`[[case]]`)."""
    names = [k for k, v in data.items() if isinstance(v, list | dict)]
    if not names:
        return ""
    shown = ", ".join(f"[[{k}]]" if isinstance(data[k], list) else f"[{k}]" for k in names)
    return f"; this one has {shown}" + suggest(names[0], ["cases"]).replace(
        "'cases'", "[[cases]]")


def _first_table_line(text: str) -> int:
    """The line of the file's first table header (where `[[cases]]` was expected), else 0."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith("["):
            return number
    return 0


def _object_lines(text: str) -> list[int]:
    """Best-effort line numbers of the case objects: a bare list holds them at depth 2,
    a wrapping object (`{"goldens": [...]}`) at depth 3."""
    target = 2 if text.lstrip().startswith("[") else 3
    return [line for ch, depth, line in open_brackets(text) if ch == "{" and depth == target]


def _check_names(cases: list[Case]) -> None:
    seen: dict[str, Case] = {}
    for case in cases:
        if case.name in seen:
            first = seen[case.name]
            raise CaseError(f"duplicate case name {case.name!r} (first at line {first.line})",
                            case.file, case.line)
        seen[case.name] = case


def select_case(cases: list[Case], key: str | int) -> Case:
    """Find a case by name or 0-based index (what `dagtui step --case` accepts)."""
    for case in cases:
        if case.name == key:
            return case
    try:
        idx = int(key)
    except (TypeError, ValueError):
        idx = -1
    if 0 <= idx < len(cases):
        return cases[idx]
    count = f"{len(cases)} case{'s' if len(cases) != 1 else ''}"
    if isinstance(key, int) or str(key).strip().lstrip("-").isdigit():
        raise CaseError(f"case index {key} is out of range: there are {count}, numbered "
                        f"0 to {len(cases) - 1} (or give a case name)")
    names = ", ".join(repr(c.name) for c in cases[:10]) + (", ..." if len(cases) > 10 else "")
    raise CaseError(f"no case named {key!r} ({count}: {names})")


def cases_source(graph: Graph, graph_path: str | os.PathLike[str] | None = None,
                 given: str | os.PathLike[str] | None = None) -> str | None:
    """The cases file a graph runs on, for every command, the API and the debugger:
    `given` (`--cases`), else its `[metric].cases`, relative to the graph file's folder
    (the working directory for a graph with no file); None when neither names one."""
    if given is not None:
        return str(given)
    if not graph.metric.cases:
        return None
    where = graph_path or graph.path
    base = Path(where).parent if where else Path.cwd()
    return str(base / graph.metric.cases)


def cases_for(cases: Any, graph: Graph) -> list[Case]:
    """The cases the Python API (`dagtui.evaluate`, `dagtui.calibrate`, `dagtui.align`)
    takes: None for the graph's `[metric].cases` file, a cases file, or a list of `Case`s
    and dicts. ValueError when None is given and the graph names no file."""
    if cases is None:
        source = cases_source(graph)
        if source is None:
            raise ValueError("no cases given and the graph names no [metric].cases file")
        return load_cases(source)
    if isinstance(cases, str | os.PathLike):
        return load_cases(cases)
    items: Iterable[Any] = cases
    return [c if isinstance(c, Case) else case_from_dict(dict(c), index=i)
            for i, c in enumerate(items)]

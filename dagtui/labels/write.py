"""Writing one case's labels into its cases file, touching nothing else.

`dagtui label` writes each label as it is given, and the debugger writes the verdicts a person
gave as the human judge; both come here. The file is the user's: only the labelled case's
`expected` and `expected_score` change (a node the person was unsure of is labelled
`"unsure"`, `dagtui.labels.check.UNSURE`, docs/format.md), or, with an annotator, that person's
entry of the case's `annotations` list (`{by, expected, expected_score}`).

- JSONL: only the case's own line changes, and in it only those keys' values (the rest of
  the line, spacing and key order included, stays as written); every other line stays
  byte-identical.
- JSON: the same minimal edit inside the case's object: a key's value is replaced in place,
  a new key is added after the object's last member on a line of its own indented like that
  member (on the same line for an object written on one line).
- TOML: through tomlkit, so comments, blank lines and layout are kept.

Every write is atomic (`dagtui.safewrite`) and refused (`ChangedOnDisk`) when the file on disk
is no longer what `LabelFile` read or last wrote. Textual-free.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagtui.inputs import CASES_LIMIT
from dagtui.labels.check import UNSURE
from dagtui.run.cases import Case, CaseError, load_cases
from dagtui.safewrite import Stamp, atomic_write, read_bytes

__all__ = ["LabelFile", "Labels", "case_labels", "human_labels"]

#: the keys of a case (or of one annotator's entry) that hold labels, in written order
LABEL_KEYS = ("expected", "expected_score")
#: the JSON spellings of a wrapping object's case list (`dagtui.run.cases.parse_json`)
_LIST_KEYS = ("test_cases", "goldens", "cases", "conversational_goldens")
_DECODER = json.JSONDecoder()
_WS = " \t\r\n"


@dataclass
class Labels:
    """One person's labels of one case: node id -> label, the graph's score (0..1) and the
    nodes they were unsure of (kept in the file, never compared with a judge)."""

    expected: dict[str, Any]
    expected_score: float | None = None
    unsure: list[str] | None = None

    def values(self) -> dict[str, Any]:
        """key -> value to write; None removes the key (an empty label set is no key). An
        unsure node is written as the label `"unsure"`, the one spelling every reader knows."""
        expected = {**self.expected, **dict.fromkeys(self.unsure or (), UNSURE)}
        return {"expected": expected or None, "expected_score": self.expected_score}


def case_labels(case: Case, annotator: str | None = None) -> Labels:
    """The labels `case` carries (its `annotator`'s entry, when one is named), with the nodes
    labelled `"unsure"` apart in `unsure`."""
    if annotator is None:
        expected, score = case.expected, case.expected_score
    else:
        mine = case.annotation(annotator)
        expected, score = (mine.expected, mine.expected_score) if mine else ({}, None)
    unsure = [nid for nid, value in expected.items() if value == UNSURE]
    return Labels({nid: v for nid, v in expected.items() if v != UNSURE}, score, unsure)


def _annotation(entries: Any, annotator: str) -> dict[str, Any] | None:
    if not isinstance(entries, list):
        return None
    return next((e for e in entries if isinstance(e, dict) and e.get("by") == annotator), None)


class LabelFile:
    """A cases file opened for labelling: `set(case, labels)` writes one case's labels.

    The file is read once (`text`, `stamp`); each write checks the file is still what was
    read or last written, so an edit made meanwhile in another program is never lost."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        data, self.stamp = read_bytes(self.path, limit=CASES_LIMIT)
        self.text = data.decode("utf-8")
        self.kind = _kind(self.path, self.text)

    def cases(self) -> list[Case]:
        """The cases as `dagtui.run.cases` reads them (CaseError on a bad file)."""
        return load_cases(self.path)

    def set(self, case: str, labels: Labels, *, annotator: str | None = None) -> Stamp:
        """Write `labels` as case `case`'s (by name), or as its `annotator`'s entry.

        Raises CaseError when the file has no such case, `ChangedOnDisk` when the file was
        changed since it was read; nothing is written then."""
        values = labels.values()
        if self.kind == "toml":
            text = _toml_set(self.text, case, values, annotator, str(self.path))
        elif self.kind == "jsonl":
            text = _jsonl_set(self.text, case, values, annotator, str(self.path))
        else:
            text = _json_set(self.text, case, values, annotator, str(self.path))
        if text != self.text:
            self.stamp = atomic_write(self.path, text.encode("utf-8"), expected=self.stamp)
            self.text = text
        return self.stamp


def _kind(path: Path, text: str) -> str:
    """"jsonl", "json" or "toml", as `load_cases` decides it."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".toml"):
        return suffix[1:]
    stripped = text.lstrip()
    if stripped.startswith("[") or stripped.startswith("{") and "\n{" not in stripped:
        return "json"
    return "jsonl"


def _name_of(data: Any, index: int) -> str | None:
    """A case object's name as `case_from_dict` gives it."""
    if not isinstance(data, dict):
        return None
    name = data.get("name") if data.get("name") is not None else data.get("id")
    return str(name) if name is not None else f"case {index + 1}"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------- JSON text


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


@dataclass
class _Member:
    key: str
    start: int  # where the key's opening quote is
    value_start: int
    value_end: int


def _members(text: str, start: int) -> tuple[list[_Member], int]:
    """The members of the JSON object whose `{` is at `start`, and the index of its `}`."""
    out: list[_Member] = []
    i = _skip(text, start + 1)
    if text[i] == "}":
        return out, i
    while True:
        key_start = _skip(text, i)
        key, after = json.decoder.scanstring(text, key_start + 1)  # type: ignore[attr-defined]
        i = _skip(text, _skip(text, after) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, i)
        out.append(_Member(key, key_start, i, end))
        i = _skip(text, end)
        if text[i] == "}":
            return out, i
        i += 1  # the comma


def _set_members(text: str, start: int, values: Mapping[str, Any]) -> str:
    """The object at `start` with each key of `values` set (None: removed), the rest of the
    text unchanged."""
    for key, value in values.items():
        members, close = _members(text, start)
        found = next((m for m in members if m.key == key), None)
        if found is not None and value is not None:
            text = text[:found.value_start] + _dumps(value) + text[found.value_end:]
        elif found is not None:
            k = members.index(found)
            if k > 0:  # from the end of the member before it
                cut_from = members[k - 1].value_end
                cut_to = found.value_end
            elif len(members) > 1:  # the first of several: up to the next key
                cut_from, cut_to = found.start, members[1].start
            else:
                cut_from, cut_to = found.start, found.value_end
            text = text[:cut_from] + text[cut_to:]
        elif value is not None:
            text = _insert(text, start, members, close, key, value)
    return text


def _insert(text: str, start: int, members: list[_Member], close: int, key: str,
            value: Any) -> str:
    item = f"{_dumps(key)}: {_dumps(value)}"
    if not members:
        return text[:start + 1] + item + text[close:]
    last = members[-1]
    line_start = text.rfind("\n", 0, last.start) + 1
    if line_start > start:  # one member a line: a new line indented like the last one
        indent = text[line_start:last.start]
        return text[:last.value_end] + ",\n" + indent + item + text[last.value_end:]
    return text[:last.value_end] + ", " + item + text[last.value_end:]


def _target(text: str, start: int, annotator: str | None,
            values: Mapping[str, Any]) -> tuple[int, Mapping[str, Any]] | str:
    """(the object to set `values` in, the values) for the case object at `start`: the case
    itself, or its annotator's entry; a whole new text when the entry had to be added."""
    if annotator is None:
        return start, values
    members, _ = _members(text, start)
    entry = {"by": annotator, **{k: v for k, v in values.items() if v is not None}}
    found = next((m for m in members if m.key == "annotations"), None)
    if found is None or text[found.value_start] != "[":
        return _set_members(text, start, {"annotations": [entry]})
    i = _skip(text, found.value_start + 1)
    while text[i] != "]":
        data, end = _DECODER.raw_decode(text, i)
        if isinstance(data, dict) and data.get("by") == annotator:
            return i, values
        i = _skip(text, end)
        if text[i] == ",":
            i = _skip(text, i + 1)
    tail = found.value_end - 1  # the `]`
    body = text[found.value_start + 1:tail].rstrip()
    sep = ", " if body else ""
    cut = found.value_start + 1 + len(body)
    return text[:cut] + sep + _dumps(entry) + text[cut:]


def _set_in_object(text: str, start: int, values: Mapping[str, Any],
                   annotator: str | None) -> str:
    target = _target(text, start, annotator, values)
    if isinstance(target, str):
        return target
    at, vals = target
    return _set_members(text, at, vals)


def _jsonl_set(text: str, case: str, values: Mapping[str, Any], annotator: str | None,
               file: str) -> str:
    lines = text.splitlines(keepends=True)
    index = 0
    for n, line in enumerate(lines):
        body = line.rstrip("\r\n")
        if not body.strip() or body.lstrip().startswith("//"):
            continue
        try:
            data = json.loads(body)
        except ValueError:
            raise CaseError("not valid JSON; fix the line before labelling", file,
                            n + 1) from None
        if _name_of(data, index) == case:
            start = body.index("{")
            lines[n] = _set_in_object(body, start, values, annotator) + line[len(body):]
            return "".join(lines)
        index += 1
    raise CaseError(f"no case named {case!r} in the file", file)


def _json_set(text: str, case: str, values: Mapping[str, Any], annotator: str | None,
              file: str) -> str:
    i = _skip(text, 0)
    try:
        data, _ = _DECODER.raw_decode(text, i)
    except ValueError:
        raise CaseError("not valid JSON; fix the file before labelling", file) from None
    if isinstance(data, dict):
        members, _ = _members(text, i)
        holder = next((m for m in members if m.key in _LIST_KEYS
                       and isinstance(data.get(m.key), list)), None)
        if holder is None:
            raise CaseError("a JSON cases file is a list of cases", file)
        i = holder.value_start
    i = _skip(text, i + 1)
    index = 0
    while i < len(text) and text[i] != "]":
        item, end = _DECODER.raw_decode(text, i)
        if _name_of(item, index) == case:
            return _set_in_object(text, i, values, annotator)
        index += 1
        i = _skip(text, end)
        if text[i] == ",":
            i = _skip(text, i + 1)
    raise CaseError(f"no case named {case!r} in the file", file)


# --------------------------------------------------------------------------- TOML


def _toml_set(text: str, case: str, values: Mapping[str, Any], annotator: str | None,
              file: str) -> str:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise CaseError(f"TOML syntax: {exc}; fix the file before labelling", file) from None
    tables = doc.get("cases")
    if not isinstance(tables, list):
        raise CaseError("a TOML cases file holds [[cases]] tables", file)
    table = next((t for i, t in enumerate(tables) if _name_of(t, i) == case), None)
    if table is None:
        raise CaseError(f"no case named {case!r} in the file", file)
    if annotator is not None:
        entries = table.get("annotations")
        if not isinstance(entries, list):
            _put(table, "annotations", tomlkit.array())
            entries = table["annotations"]
        entry = _annotation(entries, annotator)
        if entry is None:
            entry = tomlkit.inline_table()
            entry["by"] = annotator
            entries.append(entry)
            entry = entries[-1]
        table = entry
    for key, value in values.items():
        if value is None:
            if key in table:
                del table[key]
            continue
        existing = table.get(key)
        if isinstance(value, dict) and isinstance(existing, dict) and not isinstance(
                existing, tomlkit.items.InlineTable):
            for k in [k for k in existing if k not in value]:
                del existing[k]
            for k, v in value.items():
                existing[k] = v
            continue
        item: Any = value
        if isinstance(value, dict):
            item = tomlkit.inline_table()
            item.update(value)
        _put(table, key, item)
    return tomlkit.dumps(doc)


def _put(table: Any, key: str, item: Any) -> None:
    """`table[key] = item`; a new key goes after the table's last key, before the blank
    lines and comments that introduce the next case (tomlkit counts those into this
    table's body)."""
    after = _last_key(table)
    if key in table or after is None:
        table[key] = item
    else:
        from dagtui.graph.tomlio.document import insert_after

        insert_after(table.value, after, key, item)


def _last_key(table: Any) -> str | None:
    """The last plain key of a `[[cases]]` table (not a sub-table), or None (an inline
    table, or none)."""
    import tomlkit.items

    body = getattr(getattr(table, "value", None), "body", None)
    if body is None:
        return None
    keys = [k.key for k, v in body
            if k is not None and not isinstance(v, tomlkit.items.Table | tomlkit.items.AoT)]
    return keys[-1] if keys else None


def human_labels(records: Any) -> dict[str, Any]:
    """node id -> the answer a person gave as the human judge (the debugger's run), each
    usable as that node's label: a verdict, a task's evidence text, a leaf's score."""
    return {r.node: r.answer for r in records
            if getattr(r, "judge", None) == "human" and r.error is None
            and r.answer is not None}

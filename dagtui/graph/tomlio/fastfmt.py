"""`dagtui fmt`'s layout read without tomlkit, for the files graphs are usually written as.

tomlkit keeps every byte of a file's layout, and pays for it: parsing a 1,000-node graph
costs it ten times what `tomllib` needs, and `fmt` parses at least twice (the file, then
its own output, to prove the layout settles). Graph files are simple TOML: `[a.b]` headers,
`key = value` lines, comments and blank lines, arrays (over several lines, with comments)
of strings, numbers and one-line inline tables. `flatten` reads exactly that, one line at a
time, into the same blocks `dagtui.graph.tomlio.fmt._Flattener` makes from a tomlkit document,
and gives up (None) on anything else, which `fmt` then reads with tomlkit as before:
multi-line strings, dotted or quoted keys, `[[...]]` tables, a parent table with its own
header, a table split around another, CR line ends, a nested inline table in a verdict.

tests/test_fmt_fast.py checks both readings agree on the shipped graphs, on generated ones
and on a set of awkward layouts; `format_text` still proves every result keeps the data
(tomllib) and every comment.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from dagtui.graph.tomlio.writer import VERDICT_ORDER

_BARE_KEY = r"[A-Za-z0-9_-]+"
_HEADER = re.compile(rf"[ \t]*\[[ \t]*({_BARE_KEY}(?:[ \t]*\.[ \t]*{_BARE_KEY})*)[ \t]*\]")
_KEY = re.compile(rf"[ \t]*({_BARE_KEY})[ \t]*=[ \t]*")
_SCALAR_END = set(",]}#\n")
_PLAIN_STRING = re.compile(r'"([A-Za-z0-9_ -]*)"')


class _GiveUp(Exception):
    """The text is outside what this reader handles: tomlkit reads it instead."""


class _Value:
    """A value's raw text, and for arrays and inline tables the parts `fmt` needs."""

    __slots__ = ("comments", "items", "pairs", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        #: array: (element, its trailing comment, standalone comments above it)
        self.items: list[tuple[_Value | None, str, list[str]]] | None = None
        #: inline table: (key, value text) in file order
        self.pairs: list[tuple[str, str]] | None = None
        #: every comment inside (nested arrays included), for the comment audit
        self.comments: list[str] = []


class _Reader:
    """Values from `text` starting at `i` (the caller keeps `i`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)

    def value(self, i: int) -> tuple[_Value, int]:
        text = self.text
        c = text[i] if i < self.n else ""
        if c == '"':
            if text.startswith('"""', i):
                raise _GiveUp
            end = self._basic_end(i)
            return _Value(text[i:end]), end
        if c == "'":
            if text.startswith("'''", i):
                raise _GiveUp
            end = text.find("'", i + 1)
            if end < 0 or "\n" in text[i:end]:
                raise _GiveUp
            return _Value(text[i:end + 1]), end + 1
        if c == "[":
            return self._array(i)
        if c == "{":
            return self._inline_table(i)
        j = i
        while j < self.n and text[j] not in _SCALAR_END:
            j += 1
        raw = text[i:j].rstrip(" \t")
        if not raw or (" " in raw or "\t" in raw) and not _is_datetime(raw):
            raise _GiveUp
        return _Value(raw), i + len(raw)

    def _basic_end(self, i: int) -> int:
        text = self.text
        j = i + 1
        while j < self.n:
            c = text[j]
            if c == "\\":
                j += 2
                continue
            if c == '"':
                return j + 1
            if c == "\n":
                break
            j += 1
        raise _GiveUp

    def _comment_at(self, j: int) -> int:
        """The end of the comment starting at `j` (its newline, or the end of the text)."""
        end = self.text.find("\n", j)
        return self.n if end < 0 else end

    def _array(self, start: int) -> tuple[_Value, int]:
        text = self.text
        items: list[tuple[_Value | None, str, list[str]]] = []
        comments: list[str] = []
        pending: list[str] = []
        j = start + 1
        last: _Value | None = None  # the element whose trailing comment may follow
        while True:
            ws = j
            while j < self.n and text[j] in " \t":
                j += 1
            if j >= self.n:
                raise _GiveUp
            c = text[j]
            if c == "\n":
                j += 1
                last = None
                continue
            if c == "#":
                end = self._comment_at(j)
                comment = text[j:end].strip()
                comments.append(comment)
                if last is not None:  # on the line of an element: that element's
                    prefix = text[ws:j]
                    value, _, above = items[-1]
                    items[-1] = (value, (prefix if prefix else "  ") + comment, above)
                    last = None
                else:
                    pending.append(comment)
                j = end
                continue
            if c == "]":
                break
            if c == ",":
                j += 1
                continue
            element, j = self.value(j)
            comments.extend(element.comments)
            items.append((element, "", pending))
            pending = []
            last = element
        if pending:
            items.append((None, "", pending))
        out = _Value(text[start:j + 1])
        out.items, out.comments = items, comments
        return out, j + 1

    def _inline_table(self, start: int) -> tuple[_Value, int]:
        text = self.text
        pairs: list[tuple[str, str]] = []
        j = start + 1
        while True:
            while j < self.n and text[j] in " \t":
                j += 1
            if j >= self.n or text[j] == "\n":
                raise _GiveUp  # an inline table is one line in TOML 1.0
            if text[j] == "}":
                break
            if text[j] == ",":
                j += 1
                continue
            match = _KEY.match(text, j)
            if match is None:
                raise _GiveUp
            value, j = self.value(match.end())
            if value.items is not None or value.pairs is not None:
                raise _GiveUp  # nested tables and arrays: tomlkit's reading is the reference
            pairs.append((match.group(1), value.text))
        out = _Value(text[start:j + 1])
        out.pairs = pairs
        return out, j + 1


def _is_datetime(raw: str) -> bool:
    return bool(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?\S*", raw))


def _inline_text(pairs: list[tuple[str, str]]) -> str:
    """`dagtui.graph.tomlio.document.inline_table_text` on the pairs as read."""
    rank = {k: i for i, k in enumerate(VERDICT_ORDER)}
    ordered = sorted(pairs, key=lambda kv: rank.get(kv[0], len(rank)))
    return "{ " + ", ".join(f"{k} = {v}" for k, v in ordered) + " }" if ordered else "{}"


def _verdict_lines(value: _Value) -> str | None:
    """`_value_text`'s one-verdict-per-line array, or None when not all are inline tables."""
    items = value.items or []
    if not all(v is None or v.pairs is not None for v, _, _ in items):
        return None
    if not items:
        return "[]"
    lines: list[str] = []
    for element, comment, above in items:
        lines += [f"  {c}" for c in above]
        if element is not None and element.pairs is not None:
            lines.append(f"  {_inline_text(element.pairs)},{comment}")
    return "[\n" + "\n".join(lines) + "\n]"


def _line_end(text: str, j: int) -> tuple[str, int]:
    """(inline comment as `_comment_of` gives it, index after the line) from `j`, the end
    of a header or value; gives up on anything else left on the line."""
    k = j
    while k < len(text) and text[k] in " \t":
        k += 1
    if k >= len(text) or text[k] == "\n":
        return "", k + 1
    if text[k] != "#":
        raise _GiveUp
    end = text.find("\n", k)
    end = len(text) if end < 0 else end
    comment = text[k:end].strip()
    ws = text[j:k]
    return (ws if ws else "  ") + comment, end + 1


def flatten(text: str, flat: Any, block_type: Any, entry_type: Any,
            order_for: Any) -> Any | None:
    """Fill `flat` (a fresh `_Flattener`) from `text` as tomlkit's reading would, or None
    when the text is outside this reader's subset."""
    try:
        _flatten(text, flat, block_type, entry_type, order_for)
    except (_GiveUp, IndexError, tomllib.TOMLDecodeError):
        return None
    return flat


def _flatten(text: str, flat: Any, block_type: Any, entry_type: Any, order_for: Any) -> None:
    if "\r" in text or '"""' in text or "'''" in text:
        raise _GiveUp
    reader = _Reader(text)
    headers = _Headers()
    block: Any = None
    node_type: str | None = None
    i, n = 0, len(text)
    while i < n:
        j = i
        while j < n and text[j] in " \t":
            j += 1
        if j >= n:
            break
        c = text[j]
        if c == "\n":  # a blank line
            if flat.pending or flat.has_content():
                flat.pending.append("")
            i = j + 1
            continue
        if c == "#":
            end = text.find("\n", j)
            end = n if end < 0 else end
            flat.pending.append(text[j:end].strip())
            i = end + 1
            continue
        if c == "[":
            if block is not None:
                block.order = order_for(block.path, node_type)
            match = _HEADER.match(text, i)
            if match is None or text.startswith("[[", j):
                raise _GiveUp
            names = tuple(part.strip(" \t") for part in match.group(1).split("."))
            headers.add(names)
            comment, i = _line_end(text, match.end())
            flat.finish_pending(flat.blocks[-1] if flat.blocks else None)
            block = block_type("[" + ".".join(names) + "]", names, flat.take_above(),
                               comment, ())
            flat.blocks.append(block)
            node_type = None
            continue
        match = _KEY.match(text, i)
        if match is None:
            raise _GiveUp
        key = match.group(1)
        value, j = reader.value(match.end())
        comment, i = _line_end(text, j)
        shown = value.text
        if (value.items is not None and key == "verdicts" and block is not None
                and len(block.path) == 2 and block.path[0] == "nodes"):
            shown = _verdict_lines(value) or shown
        if key == "type" and block is not None:
            plain = _PLAIN_STRING.fullmatch(value.text)
            found = plain.group(1) if plain else tomllib.loads(f"v = {value.text}")["v"]
            node_type = found if isinstance(found, str) else None
        entry = entry_type(key, key, shown, comment, flat.take_above(), value.comments)
        (block.entries if block is not None else flat.root_entries).append(entry)
    if block is not None:
        block.order = order_for(block.path, node_type)
    flat.finish_pending(flat.blocks[-1] if flat.blocks else None, to_next=False)


class _Headers:
    """Gives up on layouts where tomlkit's tables would not follow the file's headers one
    to one: a header that repeats another or is its parent (either way round), or a group
    of tables (`[nodes.*]`) interrupted by another (`[metric]` between two nodes)."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, ...]] = set()
        self.parents: set[tuple[str, ...]] = set()
        self.closed: set[str] = set()
        self.group: str | None = None

    def add(self, names: tuple[str, ...]) -> None:
        prefixes = [names[:k] for k in range(1, len(names))]
        if names in self.seen or names in self.parents \
                or any(p in self.seen for p in prefixes):
            raise _GiveUp
        if names[0] != self.group:
            if names[0] in self.closed:
                raise _GiveUp
            if self.group is not None:
                self.closed.add(self.group)
            self.group = names[0]
        self.seen.add(names)
        self.parents.update(prefixes)

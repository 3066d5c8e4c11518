"""Where each key and value sits in a TOML text, so diagnostics can say `file:line:col`.

`tomllib` gives values but no positions, and tomlkit keeps the text but not line numbers.
This module is a small scanner over text that `tomllib` has already accepted: it does not
validate, it only walks tables, keys, arrays and inline tables and records, for every key
path (`("nodes", "present", "verdicts", 1, "then")`), the 1-based line and column of the key
and of its value. Array elements are addressed by index; `[[x]]` tables by their count.
"""

from __future__ import annotations

import bisect
import contextlib
import re
import tomllib
from typing import Any

KeyPath = tuple[str | int, ...]
Pos = tuple[int, int]

_BARE_RUN = re.compile(r"[A-Za-z0-9_-]+")
#: a one-line basic string's body: up to the closing quote or the line's end, escapes skipped
_BASIC_BODY = re.compile(r'(?:[^"\\\n]|\\.)*', re.DOTALL)
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)
_LITERAL_BODY = re.compile(r"[^'\n]*")
_NEWLINE = re.compile(r"\n")


class Positions:
    """Key and value positions by path. Lookups fall back to the nearest enclosing path.

    Built from text, the scan runs on the first lookup: a clean graph produces no diagnostic
    and so never pays for it (the scan is the costly half of loading a big file).
    """

    def __init__(
        self,
        keys: dict[KeyPath, Pos] | None = None,
        values: dict[KeyPath, Pos] | None = None,
        *,
        text: str | None = None,
    ) -> None:
        self._keys: dict[KeyPath, Pos] = keys if keys is not None else {}
        self._values: dict[KeyPath, Pos] = values if values is not None else {}
        self._text = text

    def _ensure(self) -> None:
        if self._text is not None:
            text, self._text = self._text, None
            # best effort: positions are a nicety, never a reason to fail
            with contextlib.suppress(RecursionError, IndexError):
                _Scanner(text, self).run()

    @property
    def keys(self) -> dict[KeyPath, Pos]:
        self._ensure()
        return self._keys

    @property
    def values(self) -> dict[KeyPath, Pos]:
        self._ensure()
        return self._values

    def key(self, path: KeyPath) -> Pos | None:
        """Position of the key at `path` (or of the closest ancestor that has one)."""
        return self._lookup(self.keys, path) or self._lookup(self.values, path)

    def value(self, path: KeyPath) -> Pos | None:
        """Position of the value at `path` (falls back to its key, then ancestors)."""
        values, keys = self.values, self.keys
        p = tuple(path)
        while p:
            if p in values:
                return values[p]
            if p in keys:
                return keys[p]
            p = p[:-1]
        return None

    @staticmethod
    def _lookup(table: dict[KeyPath, Pos], path: KeyPath) -> Pos | None:
        p = tuple(path)
        while p:
            if p in table:
                return table[p]
            p = p[:-1]
        return None


class _Scanner:
    """Walks the text by index; positions are recorded as offsets and turned into (line,
    column) once at the end (`_to_line_col`), so stepping over a character costs nothing
    more than moving the index."""

    def __init__(self, text: str, into: Positions) -> None:
        self.text = text
        self.n = len(text)
        self.i = 0
        self.keys: dict[KeyPath, Any] = into._keys
        self.values: dict[KeyPath, Any] = into._values
        self.pos = into
        self.aot_counts: dict[KeyPath, int] = {}

    # -- low level -------------------------------------------------------------------------
    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.text[j] if j < self.n else ""

    def advance(self, n: int = 1) -> None:
        self.i = min(self.i + n, self.n)

    def here(self) -> int:
        return self.i

    def skip_ws(self, newlines: bool = False) -> None:
        text, n = self.text, self.n
        i = self.i
        while i < n:
            c = text[i]
            if c in " \t\r" or (newlines and c == "\n"):
                i += 1
            elif c == "#" and newlines:
                end = text.find("\n", i)
                i = n if end < 0 else end
            else:
                break
        self.i = i

    def skip_line(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = self.n if end < 0 else end + 1

    # -- tokens ----------------------------------------------------------------------------
    def read_key_part(self) -> str:
        c = self.peek()
        if c == '"':
            return self.read_basic_string()
        if c == "'":
            return self.read_literal_string()
        start = self.i
        match = _BARE_RUN.match(self.text, start)
        self.i = match.end() if match else start
        return self.text[start : self.i]

    def read_dotted_key(self) -> list[str]:
        parts = [self.read_key_part()]
        self.skip_ws()
        while self.peek() == ".":
            self.advance()
            self.skip_ws()
            parts.append(self.read_key_part())
            self.skip_ws()
        return parts

    def read_basic_string(self) -> str:
        if self.text.startswith('"""', self.i):
            self.advance(3)
            start = self.i
            while self.i < len(self.text):
                if self.peek() == "\\":
                    self.advance(2)
                    continue
                if self.text.startswith('"""', self.i):
                    # up to two extra quotes may belong to the content
                    while self.text.startswith('""""', self.i):
                        self.advance()
                    end = self.i
                    self.advance(3)
                    return self.text[start:end]
                self.advance()
            return self.text[start:]
        opening = self.i
        match = _BASIC_BODY.match(self.text, opening + 1)
        body = match.group(0) if match else ""
        self.i = min(opening + 1 + len(body), self.n)
        self.advance()  # the closing quote (or the newline of an unclosed string)
        if "\\" in body:  # `[nodes."a\u200bb"]` names the node "a<U+200B>b": decode as TOML does
            with contextlib.suppress(tomllib.TOMLDecodeError, ValueError):
                return str(tomllib.loads(f"k = {self.text[opening:self.i]}")["k"])
            return _ESCAPED.sub(r"\1", body)
        return body

    def read_literal_string(self) -> str:
        if self.text.startswith("'''", self.i):
            self.advance(3)
            start = self.i
            end = self.text.find("'''", self.i)
            end = len(self.text) if end < 0 else end
            while self.text.startswith("''''", end):
                end += 1
            self.advance(end - self.i)
            self.advance(3)
            return self.text[start:end]
        self.advance()
        start = self.i
        match = _LITERAL_BODY.match(self.text, start)
        self.i = match.end() if match else start
        value = self.text[start : self.i]
        self.advance()
        return value

    # -- structure -------------------------------------------------------------------------
    def read_value(self, path: KeyPath) -> None:
        self.values[path] = self.here()
        c = self.peek()
        if c == '"':
            self.read_basic_string()
        elif c == "'":
            self.read_literal_string()
        elif c == "[":
            self.read_array(path)
        elif c == "{":
            self.read_inline_table(path)
        else:
            while self.peek() not in (",", "]", "}", "\n", "#", "") and not (
                self.peek() in (" ", "\t") and self._scalar_ends_here()
            ):
                self.advance()

    def _scalar_ends_here(self) -> bool:
        # dates may contain one space ("1979-05-27 07:32:00"); anything else ends the scalar
        j = self.i
        while j < len(self.text) and self.text[j] in " \t":
            j += 1
        return j >= len(self.text) or self.text[j] in ",]}\n#\r"

    def read_array(self, path: KeyPath) -> None:
        self.advance()  # [
        index = 0
        while True:
            self.skip_ws(newlines=True)
            c = self.peek()
            if c in ("]", ""):
                self.advance()
                return
            if c == ",":
                self.advance()
                continue
            self.keys[path + (index,)] = self.here()
            self.read_value(path + (index,))
            index += 1

    def read_inline_table(self, path: KeyPath) -> None:
        self.advance()  # {
        while True:
            self.skip_ws(newlines=True)
            c = self.peek()
            if c in ("}", ""):
                self.advance()
                return
            if c == ",":
                self.advance()
                continue
            self.read_key_value(path)

    def read_key_value(self, table: KeyPath) -> None:
        start = self.here()
        parts = self.read_dotted_key()
        path = table + tuple(parts)
        for k in range(1, len(parts)):
            self.keys.setdefault(table + tuple(parts[:k]), start)
        self.keys[path] = start
        self.skip_ws()
        if self.peek() == "=":
            self.advance()
        self.skip_ws()
        self.read_value(path)

    def run(self) -> Positions:
        try:
            self._walk()
        finally:  # also after a scan cut short: what was found is kept, as positions
            _to_line_col(self.text, self.keys)
            _to_line_col(self.text, self.values)
        return self.pos

    def _walk(self) -> None:
        table: KeyPath = ()
        while self.i < len(self.text):
            self.skip_ws(newlines=True)
            c = self.peek()
            if c == "":
                break
            if c == "[":
                start = self.here()
                aot = self.text.startswith("[[", self.i)
                self.advance(2 if aot else 1)
                self.skip_ws()
                parts = tuple(self.read_dotted_key())
                base = self._resolve(parts)
                if aot:
                    n = self.aot_counts.get(base, 0)
                    self.aot_counts[base] = n + 1
                    self.keys.setdefault(base, start)
                    table = base + (n,)
                else:
                    table = base
                self.keys.setdefault(table, start)
                self.skip_line()
                continue
            self.read_key_value(table)
            self.skip_ws()
            if self.peek() == "#":
                self.skip_line()

    def _resolve(self, parts: tuple[str, ...]) -> KeyPath:
        """Map a header's dotted key to a path, inserting array-of-tables indices:
        `[nodes.x.verdicts.extra]` after `[[nodes.x.verdicts]]` lives in the last element."""
        out: list[str | int] = []
        for part in parts:
            out.append(part)
            key = tuple(out)
            if key in self.aot_counts and len(out) < len(parts):
                out.append(self.aot_counts[key] - 1)
        return tuple(out)


def _to_line_col(text: str, table: dict[KeyPath, Any]) -> None:
    """Turn the offsets the scan recorded into 1-based (line, column), in place."""
    starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
    for path, offset in table.items():
        if isinstance(offset, int):
            line = bisect.bisect_right(starts, offset)
            table[path] = (line, offset - starts[line - 1] + 1)


def locate(text: str, *, lazy: bool = False) -> Positions:
    """Positions of every key and value in `text` (which must be valid TOML).

    With `lazy`, the scan waits for the first lookup.
    """
    positions = Positions(text=text)
    if not lazy:
        positions._ensure()
    return positions

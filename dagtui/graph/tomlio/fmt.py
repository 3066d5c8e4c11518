"""`dagtui fmt`: a hand-written file in the canonical layout, every comment carried along with
the key it sits above; refuses (FormatError) rather than change what the file means."""

from __future__ import annotations

import math
import tomllib
from typing import Any

from tomlkit import items as tk

from dagtui.graph.model import NODE_CLASSES
from dagtui.graph.tomlio.document import array_entries, inline_table_text
from dagtui.graph.tomlio.errors import FormatError
from dagtui.graph.tomlio.fastfmt import flatten
from dagtui.graph.tomlio.source import match_newlines, parse_or_refuse, strict_parse
from dagtui.graph.tomlio.writer import METRIC_ORDER, VERDICT_ORDER


class _Entry:
    """One `key = value` line (or lines) with the comments that belong to it."""

    __slots__ = ("above", "comment", "inner", "key", "name", "value")

    def __init__(self, key: str, name: str, value: str, comment: str, above: list[str],
                 inner: list[str]) -> None:
        self.key, self.name, self.value, self.comment, self.above = (
            key, name, value, comment, above)
        self.inner = inner  # comments inside a multi-line array value


class _Block:
    """One table header, the comments above it, its entries and its trailing comments."""

    def __init__(self, header: str, path: tuple[str, ...], above: list[str], comment: str,
                 order: tuple[str, ...]) -> None:
        self.header, self.path, self.above, self.comment, self.order = (
            header, path, above, comment, order)
        self.entries: list[_Entry] = []
        self.trailing: list[str] = []


class _Flattener:
    """Walks a tomlkit document in file order and cuts it into blocks.

    Comments directly above a header (no blank line between) travel with that header, which
    tomlkit itself files under the end of the previous table.
    """

    def __init__(self) -> None:
        self.preamble: list[str] = []
        self.root_entries: list[_Entry] = []
        self.blocks: list[_Block] = []
        self.pending: list[str] = []  # comment lines ("" = blank line) not yet placed

    def run(self, doc: Any) -> _Flattener:
        self.body(doc.body, (), (), None)
        self.finish_pending(self.blocks[-1] if self.blocks else None, to_next=False)
        return self

    # comments ------------------------------------------------------------------------
    def note(self, item: Any) -> None:
        if isinstance(item, tk.Comment):
            self.pending.append(item.trivia.comment.strip() or item.as_string().strip())
        elif (isinstance(item, tk.Whitespace) and "\n" in item.as_string()
              and (self.pending or self.has_content())):
            self.pending.append("")

    def has_content(self) -> bool:
        return bool(self.blocks or self.root_entries or self.preamble)

    def take_above(self) -> list[str]:
        above = _trim_blanks(self.pending)
        self.pending = []
        return above

    def finish_pending(self, block: _Block | None, *, to_next: bool = True) -> None:
        """Split pending comments: those after the last blank line go to the next header."""
        if not self.pending:
            return
        lines = self.pending
        cut = max((i for i, x in enumerate(lines) if x == ""), default=-1) if to_next else len(
            lines)
        stay, move = _trim_blanks(lines[:cut]) if cut >= 0 else [], lines[cut + 1:]
        if stay and lines[0] == "":
            # comments set off from the last key by a blank line (and, before a header, from
            # that header too) keep the blank line: they are about neither, e.g. what the
            # editor leaves above a deleted node, or a note closing the file
            stay = ["", *stay]
        if block is None:
            self.preamble += ([""] if self.preamble and stay else []) + stay
        else:
            block.trailing += stay
        self.pending = [x for x in move if x != ""] if to_next else []

    # structure ------------------------------------------------------------------------
    def body(self, body: list[tuple[Any, Any]], keys: tuple[str, ...],
             names: tuple[str, ...], block: _Block | None) -> None:
        for key, item in body:
            if key is None:
                self.note(item)
                continue
            if getattr(key, "is_dotted", lambda: False)():
                raise FormatError(f"dotted key '{key.as_string().strip()}' is not reformatted; "
                                  "write it as a [table]")
            ktext = key.as_string().strip()
            kname = key.key
            if isinstance(item, tk.Table):
                self.table(item, keys + (ktext,), names + (kname,), aot=False)
            elif isinstance(item, tk.AoT):
                for element in item.body:
                    self.table(element, keys + (ktext,), names + (kname,), aot=True)
            else:
                entry = _Entry(ktext, kname, _value_text(kname, item, names),
                               _comment_of(item), self.take_above(), _array_comments(item))
                if block is None:
                    if self.blocks:
                        raise FormatError("a key after a table belongs to no table")
                    self.root_entries.append(entry)
                else:
                    block.entries.append(entry)

    def table(self, item: Any, keys: tuple[str, ...], names: tuple[str, ...], aot: bool) -> None:
        current = self.blocks[-1] if self.blocks else None
        if item.is_super_table() and not aot:
            self.body(item.value.body, keys, names, None if not self.blocks else current)
            return
        self.finish_pending(current)
        header = ("[[{}]]" if aot else "[{}]").format(".".join(keys))
        block = _Block(header, names, self.take_above(), _comment_of(item),
                       _order_for(names, item))
        self.blocks.append(block)
        self.body(item.value.body, keys, names, block)


def _trim_blanks(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if line == "" and (not out or out[-1] == ""):
            continue
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    return out


def _comment_of(item: Any) -> str:
    """The inline comment after a value, with the spacing the user put before it."""
    try:
        comment = item.trivia.comment.strip()
        ws = item.trivia.comment_ws
    except (AttributeError, RuntimeError):
        return ""
    if not comment:
        return ""
    return (ws if ws.strip(" \t") == "" and ws else "  ") + comment


def _order_for(names: tuple[str, ...], item: Any) -> tuple[str, ...]:
    return _order_of(names, item.get("type") if len(names) == 2 else None)


def _order_of(names: tuple[str, ...], node_type: Any) -> tuple[str, ...]:
    """The canonical key order of the table at `names` (a node's by its `type`)."""
    if names == ("metric",):
        return METRIC_ORDER
    if len(names) == 2 and names[0] == "nodes":
        cls = NODE_CLASSES.get(str(node_type))
        return cls.FIELDS if cls else ()
    if len(names) == 3 and names[0] == "nodes" and names[2] == "verdicts":
        return VERDICT_ORDER
    return ()


def _value_text(name: str, item: Any, table: tuple[str, ...]) -> str:
    """A value as the user wrote it, except verdict arrays: one verdict per line."""
    is_node = len(table) == 2 and table[0] == "nodes"
    if (is_node and name == "verdicts" and isinstance(item, tk.Array)
            and all(isinstance(v, tk.InlineTable) for v in item)):
        entries = array_entries(item)
        if not entries:
            return "[]"
        lines: list[str] = []
        for value, comment, above in entries:
            lines += [f"  {c}" for c in above]
            if value is not None:
                lines.append(f"  {inline_table_text(value)},{comment}")
        return "[\n" + "\n".join(lines) + "\n]"
    return item.as_string().strip()


def _entry_lines(entries: list[_Entry], order: tuple[str, ...]) -> list[str]:
    rank = {k: i for i, k in enumerate(order)}
    indexed = list(enumerate(entries))
    indexed.sort(key=lambda ie: (rank.get(ie[1].name, len(rank)), ie[0]))
    lines: list[str] = []
    for _, entry in indexed:
        above = _trim_blanks(entry.above)
        if above and above[0] == "" and not lines:
            above = above[1:]
        lines += above
        lines.append(f"{entry.key} = {entry.value}{entry.comment}")
    return lines


def _format_once(text: str) -> tuple[str, _Flattener]:
    """One formatting pass; also returns the parsed layout (for the comment audit)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    # a graph file's usual layout is read directly; anything else by tomlkit
    flat = flatten(text, _Flattener(), _Block, _Entry, _order_of) \
        or _Flattener().run(parse_or_refuse(text))
    parts: list[str] = []
    head = list(flat.preamble)
    if flat.root_entries:
        head = (head + [""] if head else []) + _entry_lines(flat.root_entries, ())
    if head:
        parts.append("\n".join(_trim_blanks(head)))
    metric = [b for b in flat.blocks if b.path[:1] == ("metric",)]
    rest = [b for b in flat.blocks if b.path[:1] != ("metric",)]
    for block in metric + rest:
        lines = list(block.above)
        lines.append(block.header + block.comment)
        lines += _entry_lines(block.entries, block.order)
        trailing = _trim_blanks(block.trailing)
        lines += ([""] if trailing and block.trailing[0] == "" else []) + trailing
        parts.append("\n".join(lines))
    out = "\n\n".join(p for p in parts if p) + "\n" if parts else ""
    return out, flat


def _comments(flat: _Flattener) -> list[str]:
    """Every comment of a parsed layout (sorted), to prove formatting dropped none."""
    found = [c for c in flat.preamble if c]
    for entry in flat.root_entries:
        found += [c for c in entry.above if c] + ([entry.comment.strip()] if entry.comment
                                                   else [])
    for block in flat.blocks:
        found += [c for c in block.above + block.trailing if c]
        found += [block.comment.strip()] if block.comment else []
        for entry in block.entries:
            found += [c for c in entry.above if c]
            found += [entry.comment.strip()] if entry.comment else []
            found += entry.inner
    return sorted(found)


def _array_comments(item: Any) -> list[str]:
    """Comments inside an array value (nested arrays included)."""
    if not isinstance(item, tk.Array):
        return []
    found: list[str] = []
    for value, comment, above in array_entries(item):
        found += above + ([comment.strip()] if value is not None and comment else [])
        found += _array_comments(value)
    return found


def format_text(text: str, *, data: dict[str, Any] | None = None) -> str:
    """The canonical layout of a graph file, keeping every comment (`dagtui fmt`).

    `[metric]` first, node keys in their type's canonical order, `key = value`, one blank
    line between tables, inline verdict arrays one verdict per line, a trailing newline.
    Idempotent. Raises `UnparsableError` for invalid TOML and `FormatError` when the layout
    cannot be normalised without changing the data or losing a comment. `data`: `text` as
    tomllib parsed it, when the caller has (`dagtui fmt` read the file to know its kind).
    """
    original_data = data if data is not None else strict_parse(text)
    out, flat_in = _format_once(text)
    flat_out = flat_in
    # settle: a second pass must change nothing (a file already formatted is that pass)
    for _ in range(3):
        if out == text.removeprefix("\ufeff"):
            break
        again, flat_out = _format_once(out)
        if again == out:
            break
        out = again
    else:
        raise FormatError("formatting does not settle on one layout")
    if out != text and not _same_data(tomllib.loads(out), original_data):
        raise FormatError("reformatting would change the data; file left as it is")
    if _comments(flat_out) != _comments(flat_in):
        raise FormatError("reformatting would lose a comment; file left as it is")
    return match_newlines(text, out)


def _same_data(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_data(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_data(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b

"""Editing a tomlkit document in place with its layout kept: tables deleted with the comments
that belong to them, keys renamed, replaced and inserted in canonical order, and verdict lists
(inline arrays or arrays of tables) rebuilt entry by entry so each keeps its comments."""

from __future__ import annotations

from typing import Any

import tomlkit
from tomlkit import items as tk
from tomlkit.container import Container

from dagtui.graph.tomlio.writer import (
    VERDICT_ORDER,
    in_order,
    key_value_text,
    multiline_string,
    table_text,
    verdict_inline,
)


def _last_table(table: Any) -> Any:
    """The table whose body is rendered last inside `table` (sub-tables come after keys);
    None for what has no body of its own (an inline table, dotted keys)."""
    if not isinstance(table, tk.Table):
        return None
    body = table.value.body
    for _key, item in reversed(body):
        if isinstance(item, tk.AoT) and item.body:
            return _last_table(item.body[-1])
        if isinstance(item, tk.Table):
            return _last_table(item)
        if not isinstance(item, tk.Comment | tk.Whitespace):
            break
    return table


def delete_table(doc: Any, nodes_doc: Any, nid: str) -> None:
    """Delete a node's table; the comment lines at its end, which tomlkit files there but
    which sit above the *next* header, move to whatever now precedes that header."""
    last = _last_table(nodes_doc[nid])
    orphans = [x for x in _trailing_comments(last) if isinstance(x[1], tk.Comment)] if last \
        is not None else []
    ids = list(nodes_doc.keys())
    pos = ids.index(nid)
    _drop_header_comments(doc, nodes_doc, ids, pos)
    del nodes_doc[nid]
    if not orphans:
        return
    target = _last_table(nodes_doc[ids[pos - 1]]) if pos > 0 else None
    if target is not None:
        target.value.body.extend(orphans)
        return
    keys = list(doc.keys())
    at = keys.index("nodes") if "nodes" in keys else -1
    target = _last_table(doc[keys[at - 1]]) if at > 0 else None
    if target is not None:
        target.value.body.extend(orphans)
        return
    body = doc.body
    for i, (k, _) in enumerate(body):
        if k is not None and k.key == "nodes":
            body[i:i] = orphans
            return
    body.extend(orphans)


def _drop_header_comments(doc: Any, nodes_doc: Any, ids: list[str], pos: int) -> None:
    """Remove the comment lines right above the header of the node being deleted (no blank
    line between them and the header): they describe that node and would otherwise stay
    behind, stale, above the next one. tomlkit files them at the end of whatever precedes
    the header: the previous node's table, else the table before `[nodes]`."""
    if pos > 0:
        holder = _last_table(nodes_doc[ids[pos - 1]])
    else:
        keys = list(doc.keys())
        at = keys.index("nodes") if "nodes" in keys else -1
        holder = _last_table(doc[keys[at - 1]]) if at > 0 else None
    if holder is None:
        return
    body = holder.value.body
    while body and body[-1][0] is None and isinstance(body[-1][1], tk.Comment):
        body.pop()


def rename_key(container: Any, old: str, new: str) -> None:
    """Rename a table key in place, keeping its position, body and comments."""
    item = container[old]
    for fragment in getattr(container, "_tables", ()):  # a table split across the file
        if old in fragment:
            container = fragment
            break
    inner = container.value if isinstance(container, tk.Table) else container
    body = item.value.body if isinstance(item, tk.Table) else None
    size = len(body) if body is not None else 0
    inner._replace(old, new, item)
    if new not in dict.keys(inner):  # tomlkit only re-indexes replaced *tables* by name
        dict.__setitem__(inner, new, item.value)
    # tomlkit pads a replaced table with a cosmetic blank line; a rename must not add one
    if body is not None and len(body) == size + 1 and isinstance(body[-1][1], tk.Whitespace):
        body.pop()
    if hasattr(item, "invalidate_display_name"):
        item.invalidate_display_name()


def _item_for(key: str, value: Any, old: Any = None) -> Any:
    """A tomlkit item for `value`, parsed from canonical text (so escaping is ours) and
    keeping the string style of `old` where that style can hold the new value."""
    if isinstance(value, str) and isinstance(old, tk.String):
        style = old.type
        if style == tk.StringType.MLB:
            return tomlkit.parse(f"x = {multiline_string(value)}\n")["x"]
        if style == tk.StringType.SLL and _literal_ok(value):
            return tomlkit.parse(f"x = '{value}'\n")["x"]
        if style == tk.StringType.MLL and _literal_ok(value, multiline=True):
            return tomlkit.parse(f"x = '''\n{value}'''\n")["x"]
    name = "verdicts" if key == "verdicts" else "x"  # a verdict list: one verdict per line
    return tomlkit.parse(key_value_text(name, value) + "\n")[name]


def _literal_ok(value: str, multiline: bool = False) -> bool:
    if "'" in value or "\r" in value:
        return False
    if not multiline and "\n" in value:
        return False
    return not any((ord(c) < 0x20 and c not in "\t\n") or ord(c) == 0x7F for c in value)


def replace_value(table: Any, key: str, value: Any) -> None:
    """Give `key` a new value in place, keeping the comment at the end of its line."""
    old = table[key]
    item = _item_for(key, value, old)
    comment = old.trivia.comment if hasattr(old, "trivia") and not isinstance(
        old, tk.Whitespace) else ""
    comment_ws = old.trivia.comment_ws if comment else ""
    table[key] = item
    if comment:
        placed = table[key]
        placed.trivia.comment = comment
        placed.trivia.comment_ws = comment_ws or "  "


def insert_after(container: Container, after: str, key: str, item: Any) -> None:
    """Put `key = item` right after the key `after` of `container` (after its last place,
    for a key that appears twice), e.g. before the blank lines and comments that follow.

    tomlkit has no public way to insert after a key; its private `_insert_after` went in
    0.15, so this places by index with `_insert_at`, which 0.13 has too.
    """
    idx = container._map[tomlkit.items.SingleKey(after)]
    if isinstance(idx, tuple):
        idx = max(idx)
    if idx + 1 < len(container.body):
        container._insert_at(idx + 1, key, item)
    else:  # `after` is the last thing in the table
        container.append(key, item)


def insert_key(table: Any, key: str, value: Any, order: tuple[str, ...] | list[str]) -> None:
    """Insert a new key where the canonical order puts it among the keys already there."""
    item = _item_for(key, value)
    if isinstance(table, tk.InlineTable) or key not in order:
        table[key] = item
        return
    rank = {k: i for i, k in enumerate(order)}
    before = [k for k in table if k in rank and rank[k] < rank[key]
              and not isinstance(table[k], tk.Table | tk.AoT)]
    container: Container = table.value
    if before:
        insert_after(container, before[-1], key, item)
        return
    after = [k for k in table if k in rank and rank[k] > rank[key]
             and not isinstance(table[k], tk.Table | tk.AoT)]
    if after:
        idx = container._map[tomlkit.items.SingleKey(after[0])]
        if isinstance(idx, tuple):
            idx = idx[0]
        container._insert_at(idx, key, item)
        return
    table[key] = item


def respace_inline(arr: Any, index: int) -> None:
    """Rewrite an inline verdict table that was edited in place as `{ k = v, ... }`.

    tomlkit leaves `{ verdict = true  }` after deleting a key and `{ verdict = "X",  then
    = "y"}` after adding one, which `dagtui fmt --check` then flags; each value keeps the
    text it now has (so an untouched string keeps its quoting), only the spacing is redone.
    The array's own layout (indent, comma, trailing comment) is not part of the element.
    """
    element = arr[index]
    if isinstance(element, tk.InlineTable):
        arr[index] = tomlkit.parse(f"x = {inline_table_text(element)}\n")["x"]


def array_entries(arr: Any) -> list[tuple[Any, str, list[str]]]:
    """(element, its trailing comment, standalone comment lines above it) for each element of
    a tomlkit array; standalone comments after the last element come back with element None."""
    out: list[tuple[Any, str, list[str]]] = []
    pending: list[str] = []
    for group in getattr(arr, "_value", []):
        value = getattr(group, "value", None)
        comment = getattr(group, "comment", None)
        text = comment.as_string().rstrip() if comment is not None else ""
        if value is None or isinstance(value, tk.Null):
            if text.strip():
                pending.append(text.strip())
            continue
        if text and not text[0].isspace():
            text = "  " + text
        out.append((value, text, pending))
        pending = []
    if pending:
        out.append((None, "", pending))
    return out


def rebuild_array(table: Any, current: Any, plan: list[tuple[Any, Any]]) -> None:
    """Rewrite a multi-line array of inline verdict tables as `plan` says (kept entries, new
    ones), each kept entry with the comments that sat around it."""
    comments: dict[int, tuple[str, list[str]]] = {}
    tail: list[str] = []
    kept_ids = {id(kept) for kept, _ in plan if kept is not None}
    carry: list[str] = []  # standalone comments above a deleted verdict move down, not away
    for value, comment, above in array_entries(current):
        if value is None:
            tail, carry = carry + above, []
        elif id(value) in kept_ids:
            comments[id(value)] = (comment, carry + above)
            carry = []
        else:
            carry = carry + above
    if carry:
        tail = carry + tail
    lines: list[str] = []
    for kept, verdict in plan:
        comment, above = comments.get(id(kept), ("", [])) if kept is not None else ("", [])
        lines += [f"  {c}" for c in above]
        body = inline_table_text(kept) if kept is not None else verdict_inline(verdict)
        lines.append(f"  {body},{comment}")
    lines += [f"  {c}" for c in tail]
    text = "verdicts = [\n" + "\n".join(lines) + "\n]\n" if lines else "verdicts = []\n"
    old = table["verdicts"]
    item = tomlkit.parse(text)["verdicts"]
    trailing = old.trivia.comment
    table["verdicts"] = item
    if trailing:
        table["verdicts"].trivia.comment = trailing
        table["verdicts"].trivia.comment_ws = old.trivia.comment_ws or "  "


def inline_table_text(item: Any) -> str:
    """An inline table as `{ k = v, ... }`, each value as the user wrote it."""
    parts = []
    for key, value in _inline_items(item):
        parts.append(f"{key} = {value}")
    return "{ " + ", ".join(parts) + " }" if parts else "{}"


def _inline_items(item: Any) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    body = item.value.body if hasattr(item, "value") and hasattr(item.value, "body") else []
    entries = [(k, v) for k, v in body if k is not None]
    rank = {k: i for i, k in enumerate(VERDICT_ORDER)}
    entries.sort(key=lambda kv: rank.get(kv[0].key, len(rank)))
    for k, v in entries:
        out.append((k.as_string().strip(), v.as_string().strip()))
    return out


def _trailing_comments(t: Any) -> list[tuple[Any, Any]]:
    """Comment lines (and blank lines) after the last key of a `[[...]]` table: tomlkit files
    the comments above the *next* header there, so they must outlive this table."""
    body = t.value.body
    i = len(body)
    while i > 0 and body[i - 1][0] is None:
        i -= 1
    return [(k, v) for k, v in body[i:] if isinstance(v, tk.Comment | tk.Whitespace)]


def _ends_blank(t: Any) -> bool:
    body = t.value.body
    return bool(body) and isinstance(body[-1][1], tk.Whitespace) and "\n" in body[-1][1].s


def rebuild_aot(table: Any, current: Any, plan: list[tuple[Any, Any]]) -> None:
    """Delete and insert `[[...]]` tables in place; kept tables are not touched at all."""
    if not plan:
        orphans = [x for el in current.body for x in el.value.body
                   if isinstance(x[1], tk.Comment)]
        last_blank = bool(current.body) and _ends_blank(current.body[-1])
        replace_value(table, "verdicts", [])
        if orphans:
            _insert_before(table, "verdicts", orphans)
        _drop_blank_lines_before(table, "verdicts")  # a key now, no longer a header
        if last_blank and not _ends_blank(table):
            table.value.body.append((None, tk.Whitespace("\n")))
        return
    kept_ids = {id(kept) for kept, _ in plan if kept is not None}
    last_blank = bool(current.body) and _ends_blank(current.body[-1])
    previous: Any = None
    front: list[tuple[Any, Any]] = []
    for element in list(current.body):
        if id(element) in kept_ids:
            previous = element
            continue
        orphans = [x for x in _trailing_comments(element) if isinstance(x[1], tk.Comment)]
        if previous is not None:
            previous.value.body.extend(orphans)
        else:
            front += orphans
    for i in reversed(range(len(current.body))):
        if id(current.body[i]) not in kept_ids:
            del current[i]
    for pos, (kept, verdict) in enumerate(plan):
        if kept is None:
            text = table_text("[[v]]", in_order(verdict, VERDICT_ORDER))
            current.insert(pos, tomlkit.parse(text)["v"][0])
    tables = list(current.body)
    for pos, (kept, _) in enumerate(plan):
        if kept is not None:
            continue
        fresh = tables[pos]
        fresh.trivia.indent = "" if pos == 0 or _ends_blank(tables[pos - 1]) else "\n"
        if pos < len(tables) - 1 or last_blank:
            fresh.value.body.append((None, tk.Whitespace("\n")))
    if last_blank and not _ends_blank(tables[-1]):
        tables[-1].value.body.append((None, tk.Whitespace("\n")))
    if front:
        _insert_before(table, "verdicts", front)


def _insert_before(table: Any, key: str, entries: list[tuple[Any, Any]]) -> None:
    """Put comment lines in a table's body just before `key` (above its first header)."""
    body = table.value.body
    for i, (k, _) in enumerate(body):
        if k is not None and k.key == key:
            body[i:i] = entries
            return
    body.extend(entries)


def _drop_blank_lines_before(table: Any, key: str) -> None:
    """Remove the blank lines between `key` and the key above it (comments stay): the
    blank line that set off a `[[...]]` header would split a plain key from its table."""
    body = table.value.body
    at = next((i for i, (k, _) in enumerate(body) if k is not None and k.key == key), None)
    if at is None:
        return
    start = at
    while start > 0 and body[start - 1][0] is None:
        start -= 1
    for i in range(start, at):
        if isinstance(body[i][1], tk.Whitespace):
            body[i] = (None, tk.Null())  # as tomlkit removes: the key index stays valid

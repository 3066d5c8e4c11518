"""Writing graphs back to TOML without wrecking the file a human wrote.

The TOML file is the source of truth (README "The editor"): people edit it by hand and in the
TUI, so a save must look like a careful person made the edit. `render` therefore works in two
modes:

* no original text: a canonical layout (metric first, nodes in model order, keys in each node
  type's `FIELDS` order, verdicts one per line) emitted by the small writer in this module;
* with the original text: a three-way merge. The original is loaded into the model again
  (the *base*), compared with the graph being saved, and only the differences are applied
  to the tomlkit document, so every untouched key, comment, blank line and ordering survives
  byte for byte, even keys the model never understood (they stay for the validator to flag).

Every merged result is reloaded and compared with the graph; if tomlkit produced something
that means anything else, the canonical text is returned instead (correct beats pretty).

`format_text` (for `dagtui fmt`) sits at the bottom of this module: it reorders a parsed
document into the canonical layout while carrying every comment along with the key it sits
above, and refuses (FormatError) rather than change what the file means.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from typing import Any

import tomlkit
from tomlkit import items as tk
from tomlkit.container import Container

from .loader import build_graph
from .model import NODE_CLASSES, Graph, Metric
from .safewrite import Stamp, atomic_write

__all__ = [
    "FormatError",
    "SaveError",
    "UnparsableError",
    "atomic_write",
    "canonical_text",
    "format_text",
    "key_value_text",
    "node_table_text",
    "render",
    "save_graph",
    "toml_key",
    "toml_string",
    "toml_value",
]

METRIC_ORDER: tuple[str, ...] = Metric.toml_keys()
VERDICT_ORDER: tuple[str, ...] = ("verdict", "score", "then")
#: a list of scalars longer than this (as one line) is written one item per line
_WRAP_AT = 88
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


class SaveError(Exception):
    """A save was refused; the file on disk was not touched."""


class UnparsableError(SaveError):
    """The text to merge into (or format) is not valid TOML: never overwrite it."""


class FormatError(Exception):
    """`format_text` could not reformat the text without changing its meaning."""


# ----------------------------------------------------------------------------------------
# canonical writer
# ----------------------------------------------------------------------------------------

def toml_key(key: str) -> str:
    """A key as TOML: bare when possible, else a quoted basic string."""
    return key if _BARE_KEY.match(key) else toml_string(key)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def _escaped(value: str, *, keep_newlines: bool) -> str:
    """`value` with TOML basic-string escapes: quotes, backslashes and every control
    character (newlines too, unless a multi-line string keeps them)."""
    out = []
    for ch in value:
        if ch == "\n" and keep_newlines:
            out.append("\n")
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def toml_string(value: str) -> str:
    """A one-line TOML basic string; every control character is escaped."""
    return f'"{_escaped(value, keep_newlines=False)}"'


def _multiline_string(value: str) -> str:
    """A multi-line basic string for text with newlines (readable prompts).

    Quotes and backslashes are escaped so no run of `\"\"\"` can close the string early, and
    the newline right after the opening quotes (which TOML trims) is ours, not the user's.
    """
    return f'"""\n{_escaped(value, keep_newlines=True)}"""'


def toml_value(value: Any) -> str:
    """Any TOML-ready Python value on one line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()
                          if v is not None)
        return "{ " + inner + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _verdict_inline(verdict: dict[str, Any]) -> str:
    ordered = _ordered(verdict, VERDICT_ORDER)
    return toml_value(ordered)


def key_value_text(key: str, value: Any) -> str:
    """`key = value` in the canonical layout (may span lines)."""
    head = f"{toml_key(key)} = "
    if key == "verdicts" and isinstance(value, list) and all(isinstance(v, dict) for v in value):
        if not value:
            return head + "[]"
        lines = [f"  {_verdict_inline(v)}," for v in value]
        return head + "[\n" + "\n".join(lines) + "\n]"
    if isinstance(value, str) and "\n" in value:
        return head + _multiline_string(value)
    if isinstance(value, list) and value and not any(isinstance(v, dict | list) for v in value):
        one_line = head + toml_value(value)
        if len(one_line) > _WRAP_AT:
            return head + "[\n" + "".join(f"  {toml_value(v)},\n" for v in value) + "]"
        return one_line
    return head + toml_value(value)


def _table_text(header: str, data: dict[str, Any]) -> str:
    lines = [header]
    for key, value in data.items():
        if value is None:
            continue
        lines.append(key_value_text(key, value))
    return "\n".join(lines) + "\n"


def node_table_text(node_id: str, raw: dict[str, Any]) -> str:
    """One `[nodes.<id>]` table in canonical layout."""
    cls = NODE_CLASSES.get(str(raw.get("type")))
    order = cls.FIELDS if cls else ()
    return _table_text(f"[nodes.{toml_key(node_id)}]", _ordered(raw, order))


def canonical_text(raw: dict[str, Any]) -> str:
    """Canonical text for a `Graph.to_raw()` dict: `[metric]` first, then every node."""
    parts = [_table_text("[metric]", _ordered(raw.get("metric", {}), METRIC_ORDER))]
    for nid, node in raw.get("nodes", {}).items():
        parts.append(node_table_text(nid, node))
    return "\n".join(parts)


def _ordered(data: dict[str, Any], order: tuple[str, ...] | list[str]) -> dict[str, Any]:
    rank = {k: i for i, k in enumerate(order)}
    keys = sorted(data, key=lambda k: (rank.get(k, len(rank)), list(data).index(k)))
    return {k: data[k] for k in keys}


# ----------------------------------------------------------------------------------------
# three-way merge into the user's document
# ----------------------------------------------------------------------------------------

def render(
    graph: Graph, original_text: str | None = None, *, renames: dict[str, str] | None = None
) -> str:
    """The text a save of `graph` would write.

    With `original_text`, only what differs between that text's model and `graph` is changed
    (comments, blank lines, order and untouched keys survive; new nodes go at the end).
    `renames` maps node ids as they are in `original_text` to their ids in `graph` (compose
    chains of renames into one mapping), so a renamed node keeps its table, comments and
    place. Raises `UnparsableError` if `original_text` is not valid TOML.
    """
    new = graph.to_raw()
    if original_text is None:
        return canonical_text(new)
    data = _strict_parse(original_text)
    doc = _parse_or_refuse(original_text)
    base = _model_raw(data)
    try:
        merged = _merge(doc, base, new, dict(renames or {}))
        if _one_final_newline(original_text) and merged.strip():
            # a blank line that set off a deleted last table or verdict would end the file
            merged = merged.rstrip("\r\n") + "\n"
        # verify: the merged text must mean exactly the graph being saved
        ok = _same(_model_raw(tomllib.loads(merged.lstrip("\ufeff"))), new)
    except Exception:  # tomlkit corner cases: fall back to a correct canonical file
        ok = False
    if ok:
        return _match_newlines(original_text, merged)
    return _match_newlines(original_text, canonical_text(new))


def _one_final_newline(text: str) -> bool:
    body = text.rstrip("\r\n")
    return text[len(body):] in ("\n", "\r\n")


def _strict_parse(text: str) -> dict[str, Any]:
    """tomllib is the strict judge of validity: never merge into what it rejects."""
    try:
        return tomllib.loads(text.lstrip("\ufeff"))
    except Exception as exc:  # TOMLDecodeError, RecursionError on absurd nesting, ...
        raise UnparsableError(f"the original text is not valid TOML ({exc}); refusing to "
                              "overwrite what could not be parsed") from exc


def _model_raw(data: dict[str, Any]) -> dict[str, Any]:
    """`to_raw()` of the model the loader builds from parsed data.

    Positions are not needed here, so the loader's position scan (the slow half of
    `load_text` on big files) is skipped.
    """
    return build_graph(data).to_raw()


def _match_newlines(original: str, text: str) -> str:
    """Write CRLF when the original was CRLF throughout (TOML reads both the same, including
    inside multi-line strings, so this never changes a value)."""
    crlf = original.count("\r\n")
    if crlf and crlf == original.count("\n"):
        return re.sub(r"(?<!\r)\n", "\r\n", text)
    return text


def _parse_or_refuse(text: str) -> tomlkit.TOMLDocument:
    """Parse with tomlkit, which keeps the layout (callers check validity with tomllib)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return tomlkit.parse(text)
    except Exception as exc:  # tomllib.TOMLDecodeError, tomlkit.exceptions.ParseError, ...
        raise UnparsableError(f"the original text is not valid TOML ({exc}); refusing to "
                              "overwrite what could not be parsed") from exc


def _merge(doc: Any, base: dict[str, Any], new: dict[str, Any], renames: dict[str, str]) -> str:
    prefix = ""
    metric_base = base.get("metric", {})
    metric_new = new.get("metric", {})
    if "metric" in doc and isinstance(doc["metric"], tk.Table):
        _merge_mapping(doc["metric"], metric_base, metric_new, METRIC_ORDER)
    elif not _same(metric_base, metric_new):
        if "metric" in doc:
            raise ValueError("[metric] is not a plain table")
        prefix = _table_text("[metric]", _ordered(metric_new, METRIC_ORDER)) + "\n"

    base_nodes: dict[str, Any] = dict(base.get("nodes", {}))
    new_nodes: dict[str, Any] = new.get("nodes", {})
    nodes_doc = doc.get("nodes") if "nodes" in doc else None
    appended: list[str] = []

    # renames first, so the rest of the merge sees the new ids. Two steps (old -> a
    # placeholder -> new) so that swaps and chains (a->b, b->c) never collide.
    moves = [(old, new_id) for old, new_id in renames.items()
             if old != new_id and old in base_nodes and new_id in new_nodes
             and nodes_doc is not None and old in nodes_doc]
    held: dict[str, Any] = {}
    for i, (old, _new_id) in enumerate(moves):
        placeholder = f"__dagtui_rename_{i}__"
        _rename_key(nodes_doc, old, placeholder)
        held[placeholder] = base_nodes.pop(old)
        nodes_doc = doc.get("nodes")  # a table split across the file is a fresh view
    for i, (_old, new_id) in enumerate(moves):
        placeholder = f"__dagtui_rename_{i}__"
        _rename_key(nodes_doc, placeholder, new_id)
        base_nodes[new_id] = held[placeholder]
        nodes_doc = doc.get("nodes")

    for nid in list(base_nodes):
        if nid not in new_nodes and nodes_doc is not None and nid in nodes_doc:
            _delete_table(doc, nodes_doc, nid)
    for nid, raw in new_nodes.items():
        cls = NODE_CLASSES.get(str(raw.get("type")))
        order = cls.FIELDS if cls else ()
        if nid in base_nodes and nodes_doc is not None and nid in nodes_doc:
            # a changed type is one more changed key: the table keeps its comments
            if not _same(base_nodes[nid], raw):
                _merge_mapping(nodes_doc[nid], base_nodes[nid], raw, order)
        elif nodes_doc is not None and nid in nodes_doc:
            # the loader could not use this table (bad type...): the model's node replaces it
            _replace_node(nodes_doc, nid, raw)
        else:
            appended.append(node_table_text(nid, raw))

    text = prefix + tomlkit.dumps(doc)
    if appended:
        text = text.rstrip("\n") + "\n\n" if text.strip() else ""
        text += "\n".join(appended)
    return text


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


def _delete_table(doc: Any, nodes_doc: Any, nid: str) -> None:
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


def _replace_node(nodes_doc: Any, nid: str, raw: dict[str, Any]) -> None:
    fresh = tomlkit.parse(node_table_text(nid, raw))["nodes"][nid]
    nodes_doc[nid] = fresh


def _rename_key(container: Any, old: str, new: str) -> None:
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


def _merge_mapping(table: Any, base: dict[str, Any], new: dict[str, Any],
                   order: tuple[str, ...] | list[str]) -> None:
    """Apply base -> new key changes to a tomlkit table or inline table."""
    for key in base:
        if key not in new and key in table:
            del table[key]
    for key, value in new.items():
        if key in base and _same(base[key], value):
            continue
        if value is None:
            continue
        if key == "verdicts" and key in table and isinstance(value, list):
            _merge_verdicts(table, base.get(key) or [], value)
        elif key in table:
            _replace_value(table, key, value)
        else:
            _insert_key(table, key, value, order)


def _item_for(key: str, value: Any, old: Any = None) -> Any:
    """A tomlkit item for `value`, parsed from canonical text (so escaping is ours) and
    keeping the string style of `old` where that style can hold the new value."""
    if isinstance(value, str) and isinstance(old, tk.String):
        style = old.type
        if style == tk.StringType.MLB:
            return tomlkit.parse(f"x = {_multiline_string(value)}\n")["x"]
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


def _replace_value(table: Any, key: str, value: Any) -> None:
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


def _insert_key(table: Any, key: str, value: Any, order: tuple[str, ...] | list[str]) -> None:
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
        container._insert_after(before[-1], key, item)
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


def _verdict_key(v: Any) -> str:
    return repr(sorted((k, (type(x).__name__ == "bool", x)) for k, x in v.items())) \
        if isinstance(v, dict) else repr(v)


def _merge_verdicts(table: Any, base: list[Any], new: list[Any]) -> None:
    """Change only the verdicts that changed, in the form (inline array or `[[...]]`) the
    user wrote them."""
    current = table["verdicts"]
    if isinstance(current, tk.AoT):
        elements = list(current.body)
    elif isinstance(current, tk.Array):
        elements = list(current)
    else:
        _replace_value(table, "verdicts", new)
        return
    usable = [e for e in elements
              if isinstance(e, dict) and isinstance(e.get("verdict"), bool | str)]
    if len(usable) != len(elements) or len(usable) != len(base):
        _replace_verdicts(table, current, new)
        return
    sm = difflib.SequenceMatcher(a=[_verdict_key(v) for v in base],
                                 b=[_verdict_key(v) for v in new], autojunk=False)
    ops = sm.get_opcodes()
    if all(op in ("equal", "replace") and (i2 - i1) == (j2 - j1) for op, i1, i2, j1, j2 in ops):
        for op, i1, i2, j1, _j2 in ops:
            if op == "replace":
                for k in range(i2 - i1):
                    _merge_mapping(elements[i1 + k], base[i1 + k], new[j1 + k], VERDICT_ORDER)
                    if isinstance(current, tk.Array):
                        _respace_inline(current, i1 + k)
        return
    # insertions or deletions: rebuild the list, keeping every untouched element as written
    plan: list[tuple[Any, Any]] = []  # (kept element or None, new verdict dict)
    for op, i1, i2, j1, j2 in ops:
        if op == "equal":
            plan += [(elements[i1 + k], new[j1 + k]) for k in range(i2 - i1)]
        elif op == "replace" and (i2 - i1) == (j2 - j1):
            for k in range(i2 - i1):
                _merge_mapping(elements[i1 + k], base[i1 + k], new[j1 + k], VERDICT_ORDER)
                plan.append((elements[i1 + k], new[j1 + k]))
        else:
            plan += [(None, v) for v in new[j1:j2]]
    if isinstance(current, tk.AoT):
        _rebuild_aot(table, current, plan)
    else:
        _rebuild_array(table, current, plan)


def _respace_inline(arr: Any, index: int) -> None:
    """Rewrite an inline verdict table that was edited in place as `{ k = v, ... }`.

    tomlkit leaves `{ verdict = true  }` after deleting a key and `{ verdict = "X",  then
    = "y"}` after adding one, which `dagtui fmt --check` then flags; each value keeps the
    text it now has (so an untouched string keeps its quoting), only the spacing is redone.
    The array's own layout (indent, comma, trailing comment) is not part of the element.
    """
    element = arr[index]
    if isinstance(element, tk.InlineTable):
        arr[index] = tomlkit.parse(f"x = {_inline_table_text(element)}\n")["x"]


def _replace_verdicts(table: Any, current: Any, new: list[Any]) -> None:
    if isinstance(current, tk.AoT):
        _rebuild_aot(table, current, [(None, v) for v in new])
    else:
        _rebuild_array(table, current, [(None, v) for v in new])


def _array_entries(arr: Any) -> list[tuple[Any, str, list[str]]]:
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


def _rebuild_array(table: Any, current: Any, plan: list[tuple[Any, Any]]) -> None:
    comments: dict[int, tuple[str, list[str]]] = {}
    tail: list[str] = []
    kept_ids = {id(kept) for kept, _ in plan if kept is not None}
    carry: list[str] = []  # standalone comments above a deleted verdict move down, not away
    for value, comment, above in _array_entries(current):
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
        body = _inline_table_text(kept) if kept is not None else _verdict_inline(verdict)
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


def _inline_table_text(item: Any) -> str:
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


def _rebuild_aot(table: Any, current: Any, plan: list[tuple[Any, Any]]) -> None:
    """Delete and insert `[[...]]` tables in place; kept tables are not touched at all."""
    if not plan:
        orphans = [x for el in current.body for x in el.value.body
                   if isinstance(x[1], tk.Comment)]
        last_blank = bool(current.body) and _ends_blank(current.body[-1])
        _replace_value(table, "verdicts", [])
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
            text = _table_text("[[v]]", _ordered(verdict, VERDICT_ORDER))
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


def _same(a: Any, b: Any) -> bool:
    """Equality that tells `true` from `1` (Python does not) and treats nan as itself."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b if not (
        isinstance(a, int | float) and isinstance(b, int | float)) else a == b


# ----------------------------------------------------------------------------------------
# atomic save (the writing itself lives in dagtui.safewrite, shared by every command)
# ----------------------------------------------------------------------------------------

def save_graph(
    graph: Graph,
    path: str | os.PathLike[str],
    *,
    original_text: str | None = None,
    renames: dict[str, str] | None = None,
    expected: Stamp | None = None,
    force: bool = False,
) -> str:
    """Render `graph` (merged into `original_text` when given) and write it atomically.

    Returns the text written. Raises `UnparsableError` (a `SaveError`) without touching the
    file when `original_text` is not valid TOML, and `safewrite.WriteRefused` when the file
    is read-only (without `force`) or no longer what `expected` says was read.
    """
    text = render(graph, original_text, renames=renames)
    atomic_write(path, text, expected=expected, force=force)
    return text



# ----------------------------------------------------------------------------------------
# `dagtui fmt`: canonical layout for a hand-written file, comments kept
# ----------------------------------------------------------------------------------------

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
    if names == ("metric",):
        return METRIC_ORDER
    if len(names) == 2 and names[0] == "nodes":
        cls = NODE_CLASSES.get(str(item.get("type")))
        return cls.FIELDS if cls else ()
    if len(names) == 3 and names[0] == "nodes" and names[2] == "verdicts":
        return VERDICT_ORDER
    return ()


def _value_text(name: str, item: Any, table: tuple[str, ...]) -> str:
    """A value as the user wrote it, except verdict arrays: one verdict per line."""
    is_node = len(table) == 2 and table[0] == "nodes"
    if (is_node and name == "verdicts" and isinstance(item, tk.Array)
            and all(isinstance(v, tk.InlineTable) for v in item)):
        entries = _array_entries(item)
        if not entries:
            return "[]"
        lines: list[str] = []
        for value, comment, above in entries:
            lines += [f"  {c}" for c in above]
            if value is not None:
                lines.append(f"  {_inline_table_text(value)},{comment}")
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
    doc = _parse_or_refuse(text)
    flat = _Flattener().run(doc)
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
    for value, comment, above in _array_entries(item):
        found += above + ([comment.strip()] if value is not None and comment else [])
        found += _array_comments(value)
    return found


def format_text(text: str) -> str:
    """The canonical layout of a graph file, keeping every comment (`dagtui fmt`).

    `[metric]` first, node keys in their type's canonical order, `key = value`, one blank
    line between tables, inline verdict arrays one verdict per line, a trailing newline.
    Idempotent. Raises `UnparsableError` for invalid TOML and `FormatError` when the layout
    cannot be normalised without changing the data or losing a comment.
    """
    original_data = _strict_parse(text)
    out, flat_in = _format_once(text)
    for _ in range(3):  # settle: a second pass must change nothing
        again, flat_out = _format_once(out)
        if again == out:
            break
        out = again
    else:
        raise FormatError("formatting does not settle on one layout")
    if not _same_data(tomllib.loads(out), original_data):
        raise FormatError("reformatting would change the data; file left as it is")
    if _comments(flat_out) != _comments(flat_in):
        raise FormatError("reformatting would lose a comment; file left as it is")
    return _match_newlines(text, out)


def _same_data(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_data(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_data(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b

"""Saving into the user's own text: a three-way merge. The original is loaded into the model
again (the *base*), compared with the graph being saved, and only the differences are applied
to the tomlkit document, so every untouched key, comment, blank line and ordering survives
byte for byte, even keys the model never understood (they stay for the validator to flag).

Every merged result is reloaded and compared with the graph; if tomlkit produced something
that means anything else, the canonical text is returned instead (correct beats pretty)."""

from __future__ import annotations

import difflib
import math
import tomllib
from typing import Any

import tomlkit
from tomlkit import items as tk

from dagtui.graph.model import NODE_CLASSES, Graph
from dagtui.graph.tomlio.document import (
    delete_table,
    insert_key,
    rebuild_aot,
    rebuild_array,
    rename_key,
    replace_value,
    respace_inline,
)
from dagtui.graph.tomlio.source import (
    match_newlines,
    model_raw,
    one_final_newline,
    parse_or_refuse,
    strict_parse,
)
from dagtui.graph.tomlio.writer import (
    METRIC_ORDER,
    VERDICT_ORDER,
    canonical_text,
    in_order,
    node_table_text,
    table_text,
)


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
    data = strict_parse(original_text)
    doc = parse_or_refuse(original_text)
    base = model_raw(data)
    try:
        merged = _merge(doc, base, new, dict(renames or {}))
        if one_final_newline(original_text) and merged.strip():
            # a blank line that set off a deleted last table or verdict would end the file
            merged = merged.rstrip("\r\n") + "\n"
        # verify: the merged text must mean exactly the graph being saved
        ok = _same(model_raw(tomllib.loads(merged.lstrip("\ufeff"))), new)
    except Exception:  # tomlkit corner cases: fall back to a correct canonical file
        ok = False
    if ok:
        return match_newlines(original_text, merged)
    return match_newlines(original_text, canonical_text(new))


def _merge(doc: Any, base: dict[str, Any], new: dict[str, Any], renames: dict[str, str]) -> str:
    prefix = ""
    metric_base = base.get("metric", {})
    metric_new = new.get("metric", {})
    if "metric" in doc and isinstance(doc["metric"], tk.Table):
        _merge_mapping(doc["metric"], metric_base, metric_new, METRIC_ORDER)
    elif not _same(metric_base, metric_new):
        if "metric" in doc:
            raise ValueError("[metric] is not a plain table")
        prefix = table_text("[metric]", in_order(metric_new, METRIC_ORDER)) + "\n"

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
        rename_key(nodes_doc, old, placeholder)
        held[placeholder] = base_nodes.pop(old)
        nodes_doc = doc.get("nodes")  # a table split across the file is a fresh view
    for i, (_old, new_id) in enumerate(moves):
        placeholder = f"__dagtui_rename_{i}__"
        rename_key(nodes_doc, placeholder, new_id)
        base_nodes[new_id] = held[placeholder]
        nodes_doc = doc.get("nodes")

    for nid in list(base_nodes):
        if nid not in new_nodes and nodes_doc is not None and nid in nodes_doc:
            delete_table(doc, nodes_doc, nid)
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


def _replace_node(nodes_doc: Any, nid: str, raw: dict[str, Any]) -> None:
    fresh = tomlkit.parse(node_table_text(nid, raw))["nodes"][nid]
    nodes_doc[nid] = fresh


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
            replace_value(table, key, value)
        else:
            insert_key(table, key, value, order)


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
        replace_value(table, "verdicts", new)
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
                        respace_inline(current, i1 + k)
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
        rebuild_aot(table, current, plan)
    else:
        rebuild_array(table, current, plan)


def _replace_verdicts(table: Any, current: Any, new: list[Any]) -> None:
    if isinstance(current, tk.AoT):
        rebuild_aot(table, current, [(None, v) for v in new])
    else:
        rebuild_array(table, current, [(None, v) for v in new])


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

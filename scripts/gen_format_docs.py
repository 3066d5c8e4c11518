"""Write the field tables of docs/format.md from the model (dagtui/graph/model.py).

Each table of graph keys in docs/format.md sits between `<!-- fields: NAME -->` and
`<!-- /fields: NAME -->`; this script rewrites it from what each field declares about itself
(`dagtui.graph.model.field_specs`: its type, default, meaning and the codes that guard it) and,
for check nodes, from what each check kind takes and needs (`dagtui.graph.model.CHECK_SETTINGS`).
The prose around the tables is written by hand. tests/test_format_tables.py fails when a
table and the model differ.

    python scripts/gen_format_docs.py          # rewrite the tables
    python scripts/gen_format_docs.py --check  # exit 1 when docs/format.md is out of date
"""

from __future__ import annotations

import argparse
import sys
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without an install too

from dagtui.graph.model import (  # noqa: E402
    CHECK_SETTINGS,
    NO_DEFAULT,
    BinaryNode,
    CheckNode,
    FieldSpec,
    GEvalNode,
    MapNode,
    Metric,
    MetricNode,
    NodeBase,
    NonBinaryNode,
    TaskNode,
    Verdict,
    field_specs,
)
from dagtui.safewrite import atomic_write  # noqa: E402
from scripts.docblocks import cell, replace_block  # noqa: E402

PAGE = "docs/format.md"
HEADER = "| key | type | default | meaning | codes |\n|---|---|---|---|---|"
#: the keys every node table leaves to the "Every node" table
SHARED = ("type", "label")


def _code(value: Any) -> str:
    return f"`{value}`"


def _value_words(value: Any) -> str:
    """A default as TOML writes it: `"Untitled metric"`, `0.5`, `true`, `[]`; none."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return _code("true" if value else "false")
    if isinstance(value, str):
        return _code(f'"{value}"')
    if isinstance(value, list | tuple):
        return _code("[]") if not value else _code(list(value))
    if isinstance(value, dict):
        return _code("{}") if not value else _code(value)
    return _code(value)


def _kinds_with(key: str, of: Callable[[Any], Sequence[str]]) -> list[str]:
    return [name for name, settings in CHECK_SETTINGS.items() if key in of(settings)]


def type_words(spec: FieldSpec) -> str:
    if spec.type_words:
        return spec.type_words
    per_kind = [(k, s.choices[spec.key]) for k, s in CHECK_SETTINGS.items()
                if spec.key in s.choices]
    if per_kind:
        return "; ".join(f"`{k}`: {', '.join(map(_code, vs))}" for k, vs in per_kind)
    if spec.choices is not None and typing.get_origin(spec.annotation) is not list:
        return "one of " + ", ".join(_code(c) for c in spec.choices)
    words = spec.words
    for article in ("a ", "an "):
        words = words.removeprefix(article)
    words = words.replace("true or false", "bool")
    return f"{words} {spec.bounds_words}" if spec.bounds else words


def default_words(spec: FieldSpec) -> str:
    if spec.default_words:
        return spec.default_words
    needed = _kinds_with(spec.key, lambda s: s.required)
    if needed:
        return "required for " + ", ".join(map(_code, needed))
    if spec.required:
        return "required"
    per_kind = [(k, s.choices[spec.key][0]) for k, s in CHECK_SETTINGS.items()
                if spec.key in s.choices]
    if per_kind:
        return ", ".join(f"{_value_words(v)} (`{k}`)" for k, v in per_kind)
    return _value_words(spec.unset if spec.unset is not NO_DEFAULT else spec.default)


def meaning_words(spec: FieldSpec, cls: type) -> str:
    """The meaning, after the check kinds that take the setting (`length`: ...)."""
    users = _kinds_with(spec.key, lambda s: s.fields) if cls is CheckNode else []
    prefix = ", ".join(map(_code, users)) + ": " if users else ""
    return prefix + spec.meaning


def row(spec: FieldSpec, cls: type) -> str:
    cells = [_code(spec.key), type_words(spec), default_words(spec),
             meaning_words(spec, cls), ", ".join(spec.codes)]
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def own_keys(cls: type[NodeBase]) -> list[str]:
    """The keys a node type's table lists: its own, and the shared ones it says more of
    (a G-Eval leaf's `params` are required)."""
    base = field_specs(NodeBase)
    specs = field_specs(cls)
    return [k for k in cls.FIELDS
            if k not in SHARED and (k not in base or specs[k] != base[k])]


def field_table(classes: Sequence[type], keys: Callable[[Any], Sequence[str]]) -> str:
    """One table of the keys of `classes` (a key two classes share, once)."""
    rows: list[str] = []
    seen: set[str] = set()
    for cls in classes:
        specs = field_specs(cls)
        for key in keys(cls):
            if key not in seen:
                seen.add(key)
                rows.append(row(specs[key], cls))
    return "\n".join([HEADER, *rows])


def check_kinds_table() -> str:
    rows = ["| kind | settings | needs | holds when |", "|---|---|---|---|"]
    for name, settings in CHECK_SETTINGS.items():
        rows.append("| " + " | ".join(cell(c) for c in (
            _code(name), ", ".join(map(_code, settings.fields)) or "—",
            ", ".join(map(_code, settings.required)) or "—", settings.meaning)) + " |")
    return "\n".join(rows)


#: block name -> what it holds
TABLES: dict[str, Callable[[], str]] = {
    "metric": lambda: field_table([Metric], lambda cls: cls.toml_keys()),
    "node": lambda: field_table([NodeBase], lambda cls: cls.toml_keys()),
    "task": lambda: field_table([TaskNode], own_keys),
    "judgement": lambda: field_table([BinaryNode, NonBinaryNode], own_keys),
    "verdict": lambda: field_table([Verdict], lambda cls: cls.toml_keys()),
    "check": lambda: field_table([CheckNode], own_keys),
    "check-kinds": check_kinds_table,
    "geval": lambda: field_table([GEvalNode], own_keys),
    "metric-node": lambda: field_table([MetricNode], own_keys),
    "map": lambda: field_table([MapNode], own_keys),
}


def block(name: str) -> str:
    """The whole generated block `name`, markers included."""
    return (f"<!-- fields: {name} -->\n<!-- generated by scripts/gen_format_docs.py from "
            f"dagtui/graph/model.py: edit the model, not this table -->\n\n{TABLES[name]()}\n\n"
            f"<!-- /fields: {name} -->")


def updated(text: str, names: Sequence[str] = tuple(TABLES)) -> str:
    """`text` with the blocks `names` rewritten; ValueError naming a block the page lacks."""
    for name in names:
        text = replace_block(text, "fields", name, block(name))
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when "
                        "the page is out of date")
    args = parser.parse_args(argv)
    path = ROOT / PAGE
    try:
        text = path.read_text(encoding="utf-8")
        new = updated(text)
    except (OSError, ValueError) as exc:
        print(f"{PAGE}: {exc}", file=sys.stderr)
        return 2
    if new == text:
        return 0
    if args.check:
        print(f"{PAGE}: field tables out of date; run python scripts/gen_format_docs.py")
        return 1
    atomic_write(path, new)
    print(f"{PAGE}: field tables rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())

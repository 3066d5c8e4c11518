"""The graph-key tables of docs/format.md are the model's own description of its fields.

scripts/gen_format_docs.py writes each table between `<!-- fields: NAME -->` markers from
`dagtui.graph.model.field_specs` (type, default, meaning, codes) and `CHECK_SETTINGS`; a field
added, retyped or redescribed on the model without rerunning the script fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from script_module import load_script

from dagtui.graph.model import CHECK_SETTINGS, NODE_CLASSES, CheckNode, field_specs

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "format.md"


GEN = load_script("gen_format_docs")


def test_the_field_tables_match_the_model() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert GEN.updated(text) == text, (
        "docs/format.md: its field tables differ from dagtui/graph/model.py; run "
        "python scripts/gen_format_docs.py")


def test_every_field_of_every_node_type_has_a_row() -> None:
    text = DOC.read_text(encoding="utf-8")
    tables = "\n".join(GEN.block(name) for name in GEN.TABLES)
    for ntype, cls in NODE_CLASSES.items():
        for key in cls.FIELDS:
            row = f"| `{key}` |"
            assert row in tables and row in text, f"no row for {ntype} key {key!r}"


def test_every_field_says_what_it_means() -> None:
    for cls in (*NODE_CLASSES.values(),):
        specs = field_specs(cls)
        for key in cls.FIELDS:
            assert specs[key].meaning, f"{cls.__name__}.{key} has no meaning (model.about)"


def test_a_changed_field_makes_the_table_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    text = DOC.read_text(encoding="utf-8")
    spec = field_specs(CheckNode)["unit"]
    monkeypatch.setitem(field_specs(CheckNode), "unit",
                        type(spec)(**{**spec.__dict__, "meaning": "how long it is"}))
    new = GEN.updated(text)
    assert new != text and "`length`: how long it is" in new


def test_a_registered_check_kind_gets_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = type(CHECK_SETTINGS["json"])("the text is empty")
    monkeypatch.setitem(CHECK_SETTINGS, "empty", settings)
    assert "| `empty` | — | — | the text is empty |" in GEN.check_kinds_table()


def test_a_stale_block_is_rewritten_and_a_missing_one_named() -> None:
    stale = "".join(f"<!-- fields: {n} -->\nold\n<!-- /fields: {n} -->\n" for n in GEN.TABLES)
    new = GEN.updated("intro\n" + stale + "outro\n")
    assert new.startswith("intro\n") and new.endswith("outro\n") and "\nold\n" not in new
    assert "| `threshold` | number 0..1 | `0.5` |" in new
    with pytest.raises(ValueError, match="no <!-- fields: metric -->"):
        GEN.updated("no block here")


def test_the_script_checks_without_writing() -> None:
    assert GEN.main(["--check"]) == 0

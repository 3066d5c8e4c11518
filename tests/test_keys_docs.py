"""The keys tables of the docs are the key table in code (dagtui/tui/keys.py).

docs/editor.md, docs/debugger.md and docs/suites.md carry blocks that
scripts/gen_keys_docs.py writes from the groups F1 shows; a key added, moved or reworded in
the table without rerunning the script fails here, and so does a README key that the editor
does not have.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from script_module import load_script

from dagtui.tui.keys import EDITOR_KEYS, describe_key, editor_groups

ROOT = Path(__file__).resolve().parent.parent


GEN = load_script("gen_keys_docs")


@pytest.mark.parametrize("name", sorted(GEN.PAGES))
def test_each_keys_page_matches_the_key_table(name: str) -> None:
    page = ROOT / GEN.PAGES[name][0]
    text = page.read_text(encoding="utf-8")
    assert GEN.updated(name, text) == text, (
        f"{page.relative_to(ROOT)}: its keys tables differ from dagtui/tui/keys.py; "
        "run python scripts/gen_keys_docs.py")


def test_every_editor_binding_is_on_the_editor_page() -> None:
    text = (ROOT / "docs" / "editor.md").read_text(encoding="utf-8")
    for spec in EDITOR_KEYS:
        row = f"| `{describe_key(spec.key)}` | {spec.help.replace('|', chr(92) + '|')} | `{spec.id}` |"
        assert row in text, f"docs/editor.md lacks the row of {spec.id}"


def test_a_stale_block_is_rewritten_and_a_missing_one_named() -> None:
    stale = "intro\n<!-- keys: editor -->\nold rows\n<!-- /keys: editor -->\noutro\n"
    new = GEN.updated("editor", stale)
    assert new.startswith("intro\n") and new.endswith("\noutro\n") and "old rows" not in new
    assert "`editor.save`" in new
    with pytest.raises(ValueError, match="no <!-- keys: editor -->"):
        GEN.updated("editor", "no block here")


def test_the_readme_keys_are_the_editors() -> None:
    """Each key the README's editor table names (the first cell, before any ` / `) is bound
    in the editor, or is a plain tree or focus key Textual gives every app."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## In the editor you just opened", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (`[^|]*`(?: [^|]*)?) \| (.*) \|$", section, re.M)
    assert len(rows) >= 10, "the README's editor key table moved"
    bound = {describe_key(b.key) for _title, group in editor_groups() for b in group}
    bound |= {part for key in list(bound) for part in key.split(" or ")}
    plain = {"↑", "↓", "tab", "esc"}
    for cell, _does in rows:
        for key in re.findall(r"`([^`]+)`", cell):
            assert key in bound or key in plain, f"README names key {key!r}, which the editor lacks"

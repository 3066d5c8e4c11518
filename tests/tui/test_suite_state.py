"""The suite view's state without a terminal: edits, refusals, undo/redo, dirty, save."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from dagtui.suite.model import SuiteEditError
from dagtui.tui.suite_state import SuiteState

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_DIR = ROOT / "graphs" / "suites"


@pytest.fixture
def state(tmp_path: Path) -> SuiteState:
    for name in ("spans.toml", "correctness.toml", "deep_analysis.toml"):
        shutil.copy(EXAMPLE_DIR / name, tmp_path / name)
    opened = SuiteState.open(tmp_path / "spans.toml")
    opened.settle_selection()
    return opened


def shape(state: SuiteState) -> dict[str, tuple[list[str], str]]:
    assert state.suite is not None
    return {rid: (list(r.depends_on), r.status) for rid, r in state.suite.rules.items()}


def test_the_state_never_imports_textual() -> None:
    code = ("import sys, dagtui.tui.suite_state; "
            "sys.exit('textual' in sys.modules)")
    import subprocess

    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_opening_selects_the_named_rule_or_the_first(state: SuiteState) -> None:
    assert state.selected == "has_output" and not state.dirty and not state.can_undo
    for asked, settled in (("concise", "concise"), ("nope", "has_output"), (None, "has_output")):
        opened = SuiteState.open(state.path, asked)
        assert opened.selected == asked  # until settled (the view does that when shown)
        opened.settle_selection()
        assert opened.selected == settled
    assert [rid for _n, rid in state.ordered_rules()][:2] == ["has_output", "is_english"]


def test_every_edit_undoes_and_redoes_exactly(state: SuiteState) -> None:
    original = shape(state)
    state.selected = "concise"
    state.toggle_paused("concise")
    state.add_dependency("deep_analysis", "is_english")
    state.delete_rule("concise")
    state.remove_dependency("correctness", "has_output")
    edited = shape(state)
    assert "concise" not in edited and state.dirty
    for expected in ("'correctness' no longer depends on 'has_output'", "delete rule 'concise'",
                     "'deep_analysis' depends on 'is_english'", "'concise' active"):
        assert state.undo() == expected
    assert shape(state) == original and not state.dirty and not state.can_undo
    assert state.selected == "concise"  # where the first edit was made
    assert state.undo() is None
    while state.redo() is not None:
        pass
    assert shape(state) == edited and state.dirty and not state.can_redo


def test_a_refused_edit_changes_nothing_and_is_not_a_step(state: SuiteState) -> None:
    before = shape(state)
    with pytest.raises(SuiteEditError, match="cycle"):
        state.add_dependency("has_output", "deep_analysis")
    with pytest.raises(SuiteEditError, match="deep_analysis, concise"):
        state.delete_rule("correctness")
    assert shape(state) == before and not state.dirty and not state.can_undo


def test_a_new_edit_clears_redo(state: SuiteState) -> None:
    state.toggle_paused("is_english")
    state.undo()
    assert state.can_redo
    state.toggle_paused("has_output")
    assert not state.can_redo and shape(state)["has_output"][1] == "paused"


def test_problems_follow_edits_and_undo(state: SuiteState) -> None:
    def flagged() -> bool:
        return any(d.code == "SUI101" and d.node == "correctness" for d in state.diagnostics)

    assert not flagged()
    state.toggle_paused("is_english")  # correctness now depends on a paused rule
    assert flagged() and state.problems_of("correctness")
    state.undo()
    assert not flagged()
    state.redo()
    assert flagged()


def test_save_makes_clean_and_undo_past_it_makes_dirty(state: SuiteState) -> None:
    state.toggle_paused("deep_analysis")
    state.save()
    assert not state.dirty
    text = Path(state.path).read_text()
    assert 'status = "paused"' in text.split("[rules.deep_analysis]")[1].split("[rules.")[0]
    assert state.undo() == "'deep_analysis' paused" and state.dirty
    state.redo()
    assert not state.dirty

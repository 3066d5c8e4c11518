"""EditorState without a terminal: history, renames across saves, refusals."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagtui.tui.state import EditorState, EditRefused

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def state(tmp_path: Path) -> EditorState:
    target = tmp_path / "g.toml"
    shutil.copy(ROOT / "graphs" / "meeting_summary.toml", target)
    return EditorState.open(target)


def test_undoing_a_saved_rename_keeps_the_table_and_its_comments(state: EditorState) -> None:
    original = state.path.read_text()
    state.rename("extract", "headings")
    state.save()
    assert "[nodes.headings]" in state.path.read_text()
    assert state.undo() is not None
    assert state.dirty
    state.save()
    assert state.path.read_text() == original


def test_dirty_tracks_content_not_edit_count(state: EditorState) -> None:
    state.add_verdict("order")
    state.save()
    state.undo()
    assert state.dirty  # differs from what is on disk
    state.redo()
    assert not state.dirty  # back to exactly what was saved


def test_refusals(state: EditorState) -> None:
    with pytest.raises(EditRefused, match="used by"):
        state.delete_node("order")
    with pytest.raises(EditRefused, match="already exists"):
        state.rename("order", "present")
    with pytest.raises(EditRefused, match="letters, digits"):
        state.add_node("binary", "bad id!")
    assert not state.dirty


def test_delete_and_detach_then_undo(state: EditorState) -> None:
    state.delete_node("order", detach=True)
    assert "order" not in state.graph.nodes
    assert state.graph.nodes["extract"].children == ["present"]
    assert any(d.node == "present" and d.is_error for d in state.diagnostics)
    state.undo()
    assert state.graph.nodes["present"].verdicts[1].then == "order"
    assert state.valid


def test_keymap_from_env_and_file(tmp_path: Path) -> None:
    from dagtui.keyfile import KeymapError, load_keymap, parse_env, unknown_ids
    from dagtui.tui.keys import binding_ids

    keys = tmp_path / "keys.toml"
    keys.write_text('"editor.rename" = "n"\n"editor.save" = "ctrl+w"\n')
    keymap = load_keymap({"DAGTUI_KEYS": "editor.save=f2; editor.goto=ctrl+f"}, keys)
    assert keymap == {"editor.rename": "n", "editor.save": "f2", "editor.goto": "ctrl+f"}
    assert unknown_ids(keymap, binding_ids("editor")) == []
    assert unknown_ids({"editor.nope": "x"}, binding_ids("editor")) == ["editor.nope"]
    # the debugger F5 opens shares the keys file: its ids are known to `dagtui edit` too
    assert unknown_ids({"debugger.step": "s"}, binding_ids("editor")) == []
    with pytest.raises(KeymapError):
        parse_env("editor.rename")
    assert load_keymap({}, tmp_path / "missing.toml") == {}


BROKEN = """[metric]
name = "Broken"

[nodes.judge]
type = "binary"
criteria = ""
verdicts = [{ verdict = true, then = "nowhere" }, { verdict = false, score = 0 }]
"""


def test_a_deferred_check_finds_what_an_immediate_one_finds(tmp_path: Path) -> None:
    """The editor opens with `defer_check` (tree first, problems right after): once
    `finish_check` has run, the state is the same as a fully checked open."""
    target = tmp_path / "broken.toml"
    target.write_text(BROKEN)
    now = EditorState.open(target)
    later = EditorState.open(target, defer_check=True)
    assert later.checking and not now.checking
    assert later.graph.to_raw() == now.graph.to_raw()
    assert later.paths is None
    assert later.finish_check()
    assert not later.checking and not later.finish_check()
    assert [d.format() for d in later.diagnostics] == [d.format() for d in now.diagnostics]
    assert later.errors >= 2  # empty criteria, then to a missing node


def test_an_edit_before_the_deferred_check_validates_the_edited_graph(tmp_path: Path) -> None:
    target = tmp_path / "broken.toml"
    target.write_text(BROKEN)
    state = EditorState.open(target, defer_check=True)
    state.set_field("judge", "criteria", "Is it right?")
    assert not state.checking and not state.finish_check()
    assert not any(d.node == "judge" and d.field == "criteria" for d in state.diagnostics)
    assert any("nowhere" in d.message for d in state.diagnostics)

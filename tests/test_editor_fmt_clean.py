"""A file the editor saves stays `dagtui fmt --check` clean when the original was.

The editor merges each edit into the file as written (tomlio's three-way merge), so a save
must not leave layout `fmt` would change: once it wrote `{ verdict = true  }` after a score
was cleared and `{ verdict = "X",  then = "y"}` after a `then` was set. The property test
drives the editor's Textual-free `EditorState` through random edit sequences (rename, add or
remove a verdict, change a score or `then`, edit criteria text, add or delete a node, undo,
save in between) on every shipped example, and checks each saved file with the same test
`fmt --check` applies. (That the shipped files are canonical, `fmt --check graphs/` passing,
is tested in test_shipped_examples.py.)
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagtui.graph.model import TaskNode
from dagtui.graph.tomlio import format_text
from dagtui.tui.state import EditorState, EditRefused

GRAPHS = Path(__file__).resolve().parent.parent / "graphs"
EXAMPLES = sorted(GRAPHS.glob("*.toml")) + sorted(
    p for p in (GRAPHS / "suites").glob("*.toml") if "[suite]" not in p.read_text())

#: the verdicts written as `[[nodes.x.verdicts]]` tables, the other form saving keeps
AOT = """\
[metric]
name = "Tables"
threshold = 0.5

[nodes.gate]
type = "binary"
criteria = "Is it there?"
params = ["actual_output"]

# the gate's verdicts
[[nodes.gate.verdicts]]
verdict = true
then = "kind"  # go on

[[nodes.gate.verdicts]]
verdict = false
score = 0

[nodes.kind]
type = "non_binary"
criteria = "Which kind?"
params = ["actual_output"]
verdicts = [
  { verdict = "A", score = 10 },
  { verdict = "B", score = 5 },   # half
]
"""

TEXT = st.text(st.sampled_from(list("abcXY z09'\"\\#{}=,.\n\té→😀")), max_size=30)
IDS = st.from_regex(r"\A[a-z][a-z0-9_]{0,7}\Z")
OPS = ("rename", "add_verdict", "remove_verdict", "score", "then", "clear_score",
       "clear_then", "label", "text", "add_child", "add_then", "delete", "move_verdict",
       "undo", "save")


def _is_clean(text: str) -> bool:
    """What `dagtui fmt --check` tests for one file."""
    return format_text(text) == text


def _with_verdicts(state: EditorState) -> list[str]:
    return [nid for nid, n in state.graph.nodes.items() if getattr(n, "verdicts", None)]


def _apply(state: EditorState, op: str, data: Any) -> None:
    nodes = list(state.graph.nodes)
    if not nodes:
        return
    nid = data.draw(st.sampled_from(nodes))
    judged = _with_verdicts(state)
    vid = data.draw(st.sampled_from(judged)) if judged else None
    index = data.draw(st.integers(0, len(state.verdicts(vid)) - 1)) if vid else 0
    if op == "rename":
        state.rename(nid, data.draw(IDS))
    elif op == "add_verdict" and vid:
        state.add_verdict(vid)
    elif op == "remove_verdict" and vid:
        state.remove_verdict(vid, index)
    elif op == "score" and vid:
        score = data.draw(st.integers(0, 10) | st.sampled_from([0.5, 2.5, 7.25]))
        state.set_verdict(vid, index, score=score)
    elif op == "then" and vid:
        state.set_verdict(vid, index, then=data.draw(st.sampled_from(nodes)))
    elif op == "clear_score" and vid:
        state.set_verdict(vid, index, score=None)
    elif op == "clear_then" and vid:
        state.set_verdict(vid, index, then=None)
    elif op == "label" and vid and state.graph.nodes[vid].type == "non_binary":
        state.set_verdict(vid, index, verdict=data.draw(TEXT) or "x")
    elif op == "text":
        node = state.graph.nodes[nid]
        field = "instructions" if isinstance(node, TaskNode) else "criteria"
        if hasattr(node, node.attr_for(field)):
            state.set_field(nid, field, data.draw(TEXT))
    elif op == "add_child":
        tasks = [n for n, v in state.graph.nodes.items() if isinstance(v, TaskNode)]
        parent = data.draw(st.sampled_from(tasks)) if tasks else None
        kind = data.draw(st.sampled_from(["task", "binary", "non_binary", "check", "geval"]))
        state.add_node(kind, data.draw(IDS), parent=parent)
    elif op == "add_then" and vid:
        kind = data.draw(st.sampled_from(["binary", "non_binary", "geval"]))
        state.add_node(kind, data.draw(IDS), parent=vid, verdict_index=index)
    elif op == "delete" and len(nodes) > 1:
        state.delete_node(nid, detach=True)
    elif op == "move_verdict" and vid:
        state.move_verdict(vid, index, data.draw(st.sampled_from([-1, 1])))
    elif op == "undo":
        state.undo()


def _saved_clean(state: EditorState) -> None:
    state.save()
    saved = state.path.read_bytes().decode("utf-8")
    assert _is_clean(saved), "fmt --check would flag the saved file:\n" + saved


@pytest.mark.parametrize("source", [*EXAMPLES, "aot"], ids=lambda p: getattr(p, "name", p))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_editor_saves_stay_fmt_clean(source: Path | str, data: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.toml"
        if source == "aot":
            path.write_text(AOT, encoding="utf-8")
        else:
            shutil.copy(source, path)
        assert _is_clean(path.read_text(encoding="utf-8"))
        state = EditorState.open(path)
        for op in data.draw(st.lists(st.sampled_from(OPS), min_size=1, max_size=10)):
            try:
                _apply(state, op, data)
            except EditRefused:
                continue
            if op == "save":
                _saved_clean(state)
        _saved_clean(state)


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda s: s.set_verdict("present", 0, score=None), "  { verdict = false },"),
    (lambda s: s.set_verdict("order", 0, then="present"),
     '  { verdict = "Correct order", then = "present" },'),
    (lambda s: s.set_verdict("present", 1, score=5), "  { verdict = true, score = 5 },"),
])
def test_an_inline_verdict_edited_in_place_is_spaced_canonically(tmp_path: Path, edit: Any,
                                                                   expected: str) -> None:
    path = tmp_path / "g.toml"
    shutil.copy(GRAPHS / "meeting_summary.toml", path)
    state = EditorState.open(path)
    edit(state)
    state.save()
    saved = path.read_text(encoding="utf-8")
    assert expected in saved.splitlines() or any(
        line.startswith(expected) for line in saved.splitlines())
    assert _is_clean(saved)


@pytest.mark.parametrize("edit", [
    pytest.param(lambda s: s.delete_node("order", detach=True), id="delete the last node"),
    pytest.param(lambda s: (s.delete_node("order", detach=True),
                            s.add_node("geval", "tone", parent="present", verdict_index=1)),
                 id="delete the last node, add one"),
])
def test_comments_above_a_deleted_last_node_stay_fmt_clean(tmp_path: Path, edit: Any) -> None:
    path = tmp_path / "g.toml"
    shutil.copy(GRAPHS / "meeting_summary.toml", path)
    state = EditorState.open(path)
    edit(state)
    _saved_clean(state)
    saved = path.read_text(encoding="utf-8")
    # the comment block right above [nodes.order] was that node's: it goes with it
    assert "# Only summaries with all three headings get here." not in saved
    assert not saved.endswith("\n\n")


def test_removing_every_table_verdict_leaves_a_fmt_clean_key(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_text(AOT, encoding="utf-8")
    state = EditorState.open(path)
    state.remove_verdict("gate", 1)
    state.remove_verdict("gate", 0)
    _saved_clean(state)
    assert 'params = ["actual_output"]\n# the gate\'s verdicts\nverdicts = []\n' in \
        path.read_text(encoding="utf-8")


def test_fmt_keeps_a_comment_block_set_off_by_blank_lines() -> None:
    text = '[metric]\nname = "M"\n\n# a note about nothing above\n\n[nodes.a]\ntype = "task"\n' \
           '\n# closing note\n'
    assert format_text(text) == text
    glued = '[metric]\nname = "M"\n# about name\n'
    assert format_text(glued) == glued


def test_a_crlf_file_is_saved_crlf_and_stays_fmt_clean(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_bytes((GRAPHS / "meeting_summary.toml").read_bytes().replace(b"\n", b"\r\n"))
    assert _is_clean(path.read_bytes().decode("utf-8"))
    state = EditorState.open(path)
    state.set_verdict("present", 0, score=None)
    state.add_node("geval", "tone", parent="present", verdict_index=0)
    _saved_clean(state)
    raw = path.read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n") > 0
    assert not state.dirty and not state.changed_on_disk() and "\r" not in (state.text or "")
    state.set_field("present", "criteria", "Two\nlines")
    _saved_clean(state)  # the second save merges into the (LF) text of the first
    raw = path.read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n")
    assert EditorState.open(path).graph.nodes["present"].criteria == "Two\nlines"


def test_a_node_added_under_the_id_of_a_renamed_then_deleted_one_is_new(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    shutil.copy(GRAPHS / "meeting_summary.toml", path)
    state = EditorState.open(path)
    state.rename("extract", "a")
    state.delete_node("a", detach=True)
    state.add_node("binary", "a", parent="present", verdict_index=0)
    _saved_clean(state)
    saved = path.read_text(encoding="utf-8")
    # a fresh table at the end, verdicts one per line; not extract's table and comments
    assert saved.rstrip().endswith('verdicts = [\n  { verdict = true, score = 10 },\n'
                                   '  { verdict = false, score = 0 },\n]')
    assert saved.index("[nodes.a]") > saved.index("[nodes.order]")
    state.undo()  # back to the deleted-but-renamed state: still consistent
    state.undo()
    assert "a" in state.graph.nodes and "extract" not in state.graph.nodes
    _saved_clean(state)

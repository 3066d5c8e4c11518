"""Saving graphs: canonical output, comment-keeping merges, atomic writes, starters.

The central promise (README "The editor"): the TUI never loses a comment, never reorders what it did not
touch, never overwrites a file it could not parse, and writes atomically. The property tests
generate arbitrary graphs (any node type, any unicode text including quotes, backslashes,
newlines and control characters, verdicts in both TOML forms) and check that what is written
loads back as the same model, both fresh and merged into an earlier file after an edit.
"""

from __future__ import annotations

import copy
import difflib
import os
import re
import stat
import tomllib
from pathlib import Path
from unittest import mock

import pytest
import tomli_w
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dagtui.graph import tomlio
from dagtui.graph.loader import load_text
from dagtui.graph.model import (
    CHECK_KINDS,
    SINGLE_TURN_PARAMS,
    BinaryNode,
    CheckNode,
    GEvalNode,
    Graph,
    Metric,
    NonBinaryNode,
    TaskNode,
    Verdict,
)
from dagtui.graph.starters import STARTERS, starter_text
from dagtui.graph.tomlio import (
    SaveError,
    UnparsableError,
    atomic_write,
    format_text,
    render,
    save_graph,
)
from dagtui.graph.validate import check_text

# ------------------------------------------------------------------------------------------
# strategies

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
SHORT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
IDS = st.one_of(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    SHORT,  # ids that must be quoted in TOML keys
)
PARAMS = st.lists(st.sampled_from(SINGLE_TURN_PARAMS), unique=True, max_size=3)
SCORE = st.one_of(st.integers(0, 10), st.sampled_from([2.5, 11, -1]))


def _verdicts(values: list, ids: list[str], draw) -> list[Verdict]:
    out = []
    for value in values:
        if ids and draw(st.booleans()):
            out.append(Verdict(verdict=value, then=draw(st.sampled_from(ids))))
        else:
            out.append(Verdict(verdict=value, score=draw(SCORE)))
    return out


@st.composite
def nodes(draw, nid: str, ids: list[str]):
    kind = draw(st.sampled_from(["task", "binary", "non_binary", "check", "geval"]))
    common = {"label": draw(st.none() | TEXT), "params": draw(PARAMS)}
    if draw(st.integers(0, 5)) == 0:
        common["turn_window"] = (draw(st.integers(-5, 5)), draw(st.integers(-5, 5)))
    if kind == "task":
        node = TaskNode(instructions=draw(TEXT), output_label=draw(TEXT),
                        children=draw(st.lists(st.sampled_from(ids), unique=True, max_size=2))
                        if ids else [], **common)
    elif kind == "binary":
        values = draw(st.permutations([True, False]))
        node = BinaryNode(criteria=draw(TEXT), verdicts=_verdicts(values, ids, draw), **common)
    elif kind == "non_binary":
        labels = draw(st.lists(SHORT, min_size=1, max_size=4, unique=True))
        node = NonBinaryNode(criteria=draw(TEXT), verdicts=_verdicts(labels, ids, draw),
                             **common)
    elif kind == "check":
        extra = draw(st.fixed_dictionaries({}, optional={
            "param": st.sampled_from(SINGLE_TURN_PARAMS),
            "pattern": TEXT,
            "flags": st.sampled_from(["i", "ms"]),
            "schema": st.one_of(TEXT, st.dictionaries(SHORT, st.one_of(TEXT, st.integers(),
                                                                       st.booleans()),
                                                      max_size=3)),
            "unit": st.sampled_from(["chars", "words", "sentences"]),
            "min": st.integers(0, 10**6),
            "max": st.integers(0, 10**6),
            "values": st.lists(TEXT, max_size=3),
            "mode": st.sampled_from(["any", "all", "subset", "ordered"]),
            "case_sensitive": st.booleans(),
            "allowed": st.lists(SHORT, max_size=3),
            "function": TEXT,
        }))
        # a check reads one `param` (or evidence): no params list, no turn window
        node = CheckNode(check=draw(st.sampled_from(CHECK_KINDS)),
                         verdicts=_verdicts(draw(st.permutations([True, False])), ids, draw),
                         label=common["label"],
                         **{CheckNode.attr_for(key): value for key, value in extra.items()})
    else:
        node = GEvalNode(name=draw(TEXT), criteria=draw(st.none() | TEXT),
                         evaluation_steps=draw(st.none() | st.lists(TEXT, max_size=3)),
                         model=draw(st.none() | SHORT), **common)
    node.id = nid
    return node


@st.composite
def graphs(draw) -> Graph:
    ids = draw(st.lists(IDS, min_size=1, max_size=5, unique=True))
    metric = Metric(
        name=draw(TEXT),
        threshold=draw(st.floats(0, 1, allow_nan=False)),
        model=draw(st.none() | SHORT),
        include_reason=draw(st.booleans()),
        strict=draw(st.booleans()),
        multi_turn=draw(st.booleans()),
        roots=draw(st.none() | st.lists(st.sampled_from(ids), unique=True, max_size=2)),
        cases=draw(st.none() | TEXT),
    )
    graph = Graph(metric=metric)
    for nid in ids:
        graph.nodes[nid] = draw(nodes(nid, [i for i in ids if i != nid]))
    return graph


def _reload(text: str) -> Graph:
    result = load_text(text)
    assert result.parsed, result.diagnostics
    assert result.graph is not None
    shape = [d for d in result.diagnostics if d.code in ("DAG001", "DAG002", "DAG004")]
    assert shape == [], [d.format() for d in shape]
    return result.graph


def _original(graph: Graph, aot: bool) -> str:
    """The graph as a user might have written it: inline verdicts, or `[[...]]` tables."""
    return tomli_w.dumps(graph.to_raw()) if aot else render(graph)


@st.composite
def edited(draw, graph: Graph):
    """A copy of `graph` with one random edit, plus the renames that edit implies."""
    g = copy.deepcopy(graph)
    ids = list(g.nodes)
    action = draw(st.sampled_from(
        ["text", "score", "add_verdict", "drop_verdict", "drop_node", "add_node", "rename",
         "metric", "params"]))
    renames: dict[str, str] = {}
    nid = draw(st.sampled_from(ids))
    node = g.nodes[nid]
    if action == "text":
        for attr in ("criteria", "instructions", "name", "pattern", "label"):
            if hasattr(node, attr):
                setattr(node, attr, draw(TEXT))
                break
    elif action == "score" and getattr(node, "verdicts", None):
        i = draw(st.integers(0, len(node.verdicts) - 1))
        node.verdicts[i] = Verdict(verdict=node.verdicts[i].verdict, score=draw(SCORE))
    elif action == "add_verdict" and hasattr(node, "verdicts"):
        pos = draw(st.integers(0, len(node.verdicts)))
        node.verdicts.insert(pos, Verdict(verdict=draw(SHORT), score=draw(SCORE)))
    elif action == "drop_verdict" and getattr(node, "verdicts", None):
        node.verdicts.pop(draw(st.integers(0, len(node.verdicts) - 1)))
    elif action == "drop_node":
        del g.nodes[nid]
    elif action == "add_node":
        new_id = draw(IDS.filter(lambda x: x not in g.nodes))
        g.nodes[new_id] = draw(nodes(new_id, ids))
    elif action == "rename":
        new_id = draw(IDS.filter(lambda x: x not in g.nodes))
        g.nodes = {(new_id if k == nid else k): v for k, v in g.nodes.items()}
        node.id = new_id
        for other in g.nodes.values():
            if isinstance(other, TaskNode):
                other.children = [new_id if c == nid else c for c in other.children]
            for v in getattr(other, "verdicts", []):
                if v.then == nid:
                    v.then = new_id
        renames[nid] = new_id
    elif action == "metric":
        g.metric.threshold = draw(st.floats(0, 1, allow_nan=False))
        g.metric.model = draw(st.none() | SHORT)
    elif action == "params" and not isinstance(node, CheckNode):
        node.params = draw(PARAMS)
    return g, renames


# ------------------------------------------------------------------------------------------
# property tests

PROPERTY = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPERTY
@given(graphs())
def test_canonical_render_reloads_to_the_same_model(graph: Graph) -> None:
    text = render(graph)
    assert text.startswith("[metric]\n") and text.endswith("\n")
    assert _reload(text).to_raw() == graph.to_raw()
    assert list(_reload(text).nodes) == list(graph.nodes)  # model order kept


_HEADER = re.compile(r"^\[\[?(metric|nodes\.)")


def _with_comments(text: str) -> tuple[str, list[tuple[str, tuple]]]:
    """`text` with a numbered comment line above every table header, and each note with
    the key path of the header it sits above."""
    out, notes = [], []
    for line in text.split("\n")[:-1]:
        if _HEADER.match(line):
            notes.append((f"# note {len(notes)} about {line}", _header_path(line)))
            out.append(notes[-1][0])
        out.append(line)
    return "\n".join(out) + "\n", notes


def _header_path(line: str) -> tuple:
    data, path = tomllib.loads(line), []
    while isinstance(data, dict | list) and data:
        data = data[0] if isinstance(data, list) else data
        key = next(iter(data))
        path.append(key)
        data = data[key]
    return tuple(path)


@PROPERTY
@given(graphs(), st.booleans(), st.data())
def test_merged_render_after_an_edit_reloads_to_the_edited_model(
    graph: Graph, aot: bool, data: st.DataObject
) -> None:
    original, notes = _with_comments(_original(graph, aot))
    # (a header-like line inside a multi-line string would make this a different file)
    assume(load_text(original).graph.to_raw() == graph.to_raw())
    changed, renames = data.draw(edited(graph))
    # the merge itself must succeed: falling back to the canonical layout would drop comments
    with mock.patch.object(tomlio, "canonical_text", side_effect=AssertionError("fallback")):
        assert render(graph, original) == original  # nothing changed: not one byte differs
        text = render(changed, original, renames=renames)
    assert _reload(text).to_raw() == changed.to_raw()
    kept = set(text.split("\n"))
    # a note right above a deleted node's header, or above one of its sub-tables
    # ([nodes.x.schema]), described that node: it goes with it
    gone = {k for k in graph.nodes if k not in changed.nodes and k not in renames}
    expected = [n for n, path in notes if not (len(path) >= 2 and path[1] in gone)]
    assert [n for n in expected if n not in kept] == []


@PROPERTY
@given(graphs())
def test_render_output_is_already_formatted(graph: Graph) -> None:
    text = render(graph)
    assert format_text(text) == text


# ------------------------------------------------------------------------------------------
# comment preservation

COMMENTED = '''\
# Support graph: a heavily commented file, as a person would keep it.
# Second header line.

[metric]
name = "Support"           # shown in reports
threshold = 0.5            # pass mark
model = "gpt-4.1-mini"     # pinned judge
# cases = "support.cases.jsonl"   (disabled for now)

# --- evidence -------------------------------------------------------
[nodes.extract]
type = "task"
# what the judge should pull out
instructions = """
List every promise the agent makes.
One per line."""
output_label = "Promises"  # shown to children
params = ["actual_output"]
children = ["gate", "tone"]

# --- the gate -------------------------------------------------------
[nodes.gate]
type = "binary"
label = "Policy"
criteria = "Does any promise break the refund policy?"   # keep it narrow
params = ["context"]
verdicts = [
  # violations end here
  { verdict = true, score = 0 },        # hard zero
  { verdict = false, then = "tone" },   # otherwise judge tone
]
critera = "a typo the validator reports; saving must not eat it"

# --- tone -----------------------------------------------------------
[nodes.tone]
type = "non_binary"
criteria = 'How is the tone?'
params = ["actual_output"]

# first verdict
[[nodes.tone.verdicts]]
verdict = "Warm"   # best
score = 10

# second verdict
[[nodes.tone.verdicts]]
verdict = "Neutral"
score = 6

[[nodes.tone.verdicts]]
verdict = "Curt"
score = 2
# end of file
'''


def _diff(a: str, b: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.ndiff(a.splitlines(), b.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


def _comment_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.lstrip().startswith("#")]


def test_editing_one_field_changes_only_that_line() -> None:
    graph = load_text(COMMENTED).graph
    graph.nodes["gate"].criteria = 'Does any promise break the "30-day" policy?\\'
    out = render(graph, COMMENTED)
    removed, added = _diff(COMMENTED, out)
    assert removed == [
        'criteria = "Does any promise break the refund policy?"   # keep it narrow']
    assert added == [
        'criteria = "Does any promise break the \\"30-day\\" policy?\\\\"   # keep it narrow']
    assert _comment_lines(out) == _comment_lines(COMMENTED)
    assert load_text(out).graph.nodes["gate"].criteria == graph.nodes["gate"].criteria


def test_every_untouched_line_survives_several_edits() -> None:
    graph = load_text(COMMENTED).graph
    graph.metric.threshold = 0.7
    graph.nodes["extract"].instructions = "List every promise.\nOne per line, verbatim."
    graph.nodes["tone"].params = ["actual_output", "input"]
    out = render(graph, COMMENTED)
    removed, added = _diff(COMMENTED, out)
    assert removed == [
        "threshold = 0.5            # pass mark",
        "List every promise the agent makes.",
        "One per line.\"\"\"",
        'params = ["actual_output"]',
    ]
    assert added == [
        "threshold = 0.7            # pass mark",
        "List every promise.",
        'One per line, verbatim."""',
        'params = ["actual_output", "input"]',
    ]
    assert _comment_lines(out) == _comment_lines(COMMENTED)


def test_unknown_keys_and_unusable_values_are_kept() -> None:
    graph = load_text(COMMENTED).graph
    graph.nodes["gate"].label = "Refund policy"
    out = render(graph, COMMENTED)
    assert 'critera = "a typo the validator reports; saving must not eat it"' in out
    assert 'label = "Refund policy"' in out


def test_rename_keeps_the_table_its_comments_and_place() -> None:
    graph = load_text(COMMENTED).graph
    node = graph.nodes["gate"]
    node.id = "policy"
    graph.nodes = {("policy" if k == "gate" else k): v for k, v in graph.nodes.items()}
    graph.nodes["extract"].children = ["policy", "tone"]
    out = render(graph, COMMENTED, renames={"gate": "policy"})
    removed, added = _diff(COMMENTED, out)
    assert removed == ['children = ["gate", "tone"]', "[nodes.gate]"]
    assert added == ['children = ["policy", "tone"]', "[nodes.policy]"]
    assert _comment_lines(out) == _comment_lines(COMMENTED)
    assert list(load_text(out).graph.nodes) == ["extract", "policy", "tone"]


def test_rename_of_a_node_with_verdict_tables() -> None:
    graph = load_text(COMMENTED).graph
    graph.nodes = {("style" if k == "tone" else k): v for k, v in graph.nodes.items()}
    graph.nodes["style"].id = "style"
    graph.nodes["extract"].children = ["gate", "style"]
    graph.nodes["gate"].verdicts[1].then = "style"
    out = render(graph, COMMENTED, renames={"tone": "style"})
    assert out.count("[[nodes.style.verdicts]]") == 3 and "nodes.tone" not in out
    assert _comment_lines(out) == _comment_lines(COMMENTED)
    assert load_text(out).graph.to_raw() == graph.to_raw()


def test_inline_verdict_change_touches_one_verdict() -> None:
    graph = load_text(COMMENTED).graph
    graph.nodes["gate"].verdicts[0].score = 1
    out = render(graph, COMMENTED)
    removed, added = _diff(COMMENTED, out)
    assert removed == ["  { verdict = true, score = 0 },        # hard zero"]
    assert added == ["  { verdict = true, score = 1 },        # hard zero"]


def test_table_verdict_change_touches_one_verdict() -> None:
    graph = load_text(COMMENTED).graph
    graph.nodes["tone"].verdicts[1].score = 5
    out = render(graph, COMMENTED)
    removed, added = _diff(COMMENTED, out)
    assert (removed, added) == (["score = 6"], ["score = 5"])


def test_adding_and_removing_verdicts_keeps_each_form() -> None:
    graph = load_text(COMMENTED).graph
    graph.nodes["tone"].verdicts.insert(2, Verdict(verdict="Flat", score=4))
    graph.nodes["gate"].verdicts.pop(0)
    out = render(graph, COMMENTED)
    assert out.count("[[nodes.tone.verdicts]]") == 4  # still tables
    assert "verdicts = [" in out and "hard zero" not in out  # still inline, only that one gone
    assert "# otherwise judge tone" in out and "# violations end here" in out
    assert "# first verdict" in out and "# second verdict" in out and "# best" in out
    reloaded = load_text(out).graph
    assert reloaded.to_raw() == graph.to_raw()
    assert [v.verdict for v in reloaded.nodes["tone"].verdicts] == [
        "Warm", "Neutral", "Flat", "Curt"]


def test_new_and_deleted_nodes() -> None:
    graph = load_text(COMMENTED).graph
    del graph.nodes["tone"]
    graph.nodes["extract"].children = ["gate"]
    graph.nodes["gate"].verdicts[1] = Verdict(verdict=False, then="clarity")
    graph.nodes["clarity"] = GEvalNode(name="Clarity", params=["actual_output"],
                                       evaluation_steps=["Is it clear?"])
    out = render(graph, COMMENTED)
    assert "[nodes.tone" not in out and '"Warm"' not in out
    assert out.rstrip().endswith('evaluation_steps = ["Is it clear?"]')
    assert "# --- the gate ---" in out and "# Support graph" in out
    assert load_text(out).graph.to_raw() == graph.to_raw()


def test_new_key_lands_in_canonical_position() -> None:
    graph = load_text(COMMENTED).graph
    graph.nodes["tone"].label = "Tone"
    out = render(graph, COMMENTED)
    lines = out.splitlines()
    at = lines.index('label = "Tone"')
    assert lines[at - 1] == 'type = "non_binary"'


# ------------------------------------------------------------------------------------------
# saving to disk


def _graph() -> Graph:
    return load_text(STARTERS["extract-judge"]).graph


def test_atomic_write_preserves_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    atomic_write(target, "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.toml"]


def test_atomic_write_creates_a_missing_file(tmp_path: Path) -> None:
    target = tmp_path / "new.toml"
    atomic_write(target, "x = 1\n")
    assert target.read_text() == "x = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.toml"]


def test_atomic_write_failure_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "g.toml"
    target.write_text("precious\n")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write(target, "new\n")
    assert target.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.toml"]


def test_save_graph_merges_and_returns_what_it_wrote(tmp_path: Path) -> None:
    target = tmp_path / "g.toml"
    target.write_text(COMMENTED)
    graph = load_text(COMMENTED).graph
    graph.metric.name = "Support v2"
    written = save_graph(graph, target, original_text=COMMENTED)
    assert target.read_text() == written
    assert 'name = "Support v2"           # shown in reports' in written


@pytest.mark.parametrize("bad", ["[metric\nname = 1", "a = 1\na = 2\n", 'x = "unterminated'])
def test_save_refuses_an_unparsable_original(tmp_path: Path, bad: str) -> None:
    target = tmp_path / "g.toml"
    target.write_text(bad)
    with pytest.raises(UnparsableError) as info:
        save_graph(_graph(), target, original_text=bad)
    assert isinstance(info.value, SaveError)
    assert "not valid TOML" in str(info.value)
    assert target.read_text() == bad
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.toml"]


# ------------------------------------------------------------------------------------------
# starters


@pytest.mark.parametrize("name", sorted(STARTERS))
def test_starters_validate_clean(name: str) -> None:
    report = check_text(starter_text(name), f"{name}.toml")
    # a map node (the claims starter) always carries DAG119: DeepEval cannot export it
    assert [d.format() for d in report.diagnostics if d.code != "DAG119"] == []
    # blank is one judgement to start from; the others show how nodes fit together
    assert report.graph is not None and len(report.graph.nodes) >= (1 if name == "blank" else 2)
    assert format_text(starter_text(name)) == starter_text(name)  # already canonical
    assert starter_text(name).startswith("# ")  # first line describes it (editor dialog)


def test_required_starters_exist() -> None:
    assert {"blank", "extract-judge", "gate-geval"} <= set(STARTERS)
    blank = load_text(starter_text("blank")).graph
    assert [n.type for n in blank.nodes.values()] == ["binary"]
    extract_judge = load_text(starter_text("extract-judge")).graph
    assert sorted(n.type for n in extract_judge.nodes.values()) == ["binary", "task"]
    with pytest.raises(KeyError, match="known starters"):
        starter_text("nope")


_HAND_WRITTEN = [COMMENTED] + [
    p.read_text(encoding="utf-8")
    for p in sorted((Path(__file__).resolve().parent.parent / "graphs").glob("*.toml"))
    if p.stem in ("meeting_summary", "refund_policy", "code_review", "tool_selection")
]


@PROPERTY
@given(st.sampled_from(_HAND_WRITTEN), st.data())
def test_random_edits_of_hand_written_files_merge_without_fallback(
    text: str, data: st.DataObject
) -> None:
    graph = load_text(text).graph
    changed, renames = data.draw(edited(graph))
    with mock.patch.object(tomlio, "canonical_text", side_effect=AssertionError("fallback")):
        out = render(changed, text, renames=renames)
    assert load_text(out).graph.to_raw() == changed.to_raw()
    # comments above headers and on their own lines outside deleted nodes survive
    if all(k in changed.nodes or k in renames for k in graph.nodes):
        kept = {line.strip() for line in out.split("\n")}
        assert [c for c in _comment_lines(text) if c.strip() not in kept] == []


def test_crlf_files_stay_crlf() -> None:
    text = COMMENTED.replace("\n", "\r\n")
    graph = load_text(text).graph
    graph.nodes["gate"].criteria = "Two\nlines"
    graph.nodes["added"] = GEvalNode(name="Added", params=["input"])
    out = render(graph, text)
    assert out.count("\r\n") == out.count("\n") > text.count("\n")
    assert load_text(out).graph.to_raw() == graph.to_raw()


def test_merge_into_a_file_without_metric_or_nodes() -> None:
    graph = _graph()
    out = render(graph, "# just a comment\n")
    assert out.startswith("[metric]\n") and "# just a comment" in out
    assert load_text(out).graph.to_raw() == graph.to_raw()
    assert load_text(render(graph, "")).graph.to_raw() == graph.to_raw()


def test_swapping_two_node_ids() -> None:
    graph = load_text(COMMENTED).graph
    swap = {"gate": "tone", "tone": "gate"}
    graph.nodes = {swap.get(k, k): v for k, v in graph.nodes.items()}
    for nid, node in graph.nodes.items():
        node.id = nid
    graph.nodes["extract"].children = ["tone", "gate"]
    graph.nodes["tone"].verdicts[1].then = "gate"
    out = render(graph, COMMENTED, renames=swap)
    assert _comment_lines(out) == _comment_lines(COMMENTED)
    assert load_text(out).graph.to_raw() == graph.to_raw()
    assert out.index("# --- the gate ---") < out.index("[nodes.tone]") < out.index(
        "# --- tone ---") < out.index("[nodes.gate]")


def test_changing_a_node_type_keeps_its_comments() -> None:
    graph = load_text(COMMENTED).graph
    old = graph.nodes["tone"]
    graph.nodes["tone"] = BinaryNode(criteria="Is the tone polite?", params=old.params,
                                     verdicts=[Verdict(verdict=True, score=10),
                                               Verdict(verdict=False, score=0)])
    graph.nodes["tone"].id = "tone"
    out = render(graph, COMMENTED)
    assert load_text(out).graph.to_raw() == graph.to_raw()
    assert "# --- tone ---" in out and 'type = "binary"' in out


_OTHER_FORMS = {
    "inline node tables": '''[metric]
name = "x"  # the name
[nodes]
a = { type = "binary", criteria = "c", verdicts = [{ verdict = true, score = 1 }, { verdict = false, then = "b" }] }  # node a
b = { type = "geval", name = "B", params = ["input"] }  # node b
''',
    "dotted keys": '''metric.name = "x"  # the name
nodes.a.type = "binary"  # node a
nodes.a.criteria = "c"
nodes.a.verdicts = [{ verdict = true, score = 1 }, { verdict = false, then = "b" }]
nodes.b.type = "geval"  # node b
nodes.b.name = "B"
nodes.b.params = ["input"]
''',
}


@pytest.mark.parametrize("form", sorted(_OTHER_FORMS))
@pytest.mark.parametrize("edit", ["criteria", "rename", "add", "delete", "verdict"])
def test_other_table_styles_merge_in_place(form: str, edit: str) -> None:
    text = _OTHER_FORMS[form]
    graph = load_text(text).graph
    renames: dict[str, str] = {}
    if edit == "criteria":
        graph.nodes["a"].criteria = "new"
    elif edit == "rename":
        graph.nodes = {("bb" if k == "b" else k): v for k, v in graph.nodes.items()}
        graph.nodes["a"].verdicts[1].then = "bb"
        renames = {"b": "bb"}
    elif edit == "add":
        graph.nodes["c"] = GEvalNode(name="C", params=["input"])
    elif edit == "delete":
        graph.nodes["a"].verdicts[1] = Verdict(verdict=False, score=0)
        del graph.nodes["b"]
    else:
        graph.nodes["a"].verdicts[0].score = 7
    with mock.patch.object(tomlio, "canonical_text", side_effect=AssertionError("fallback")):
        out = render(graph, text, renames=renames)
    assert load_text(out).graph.to_raw() == graph.to_raw()
    assert "# the name" in out and "# node a" in out


def test_a_key_ending_in_a_newline_is_quoted_not_written_bare() -> None:
    """`^[A-Za-z0-9_-]+$` matched "0\\n" (`$` matches before a final newline): the id was
    written as a bare key, a header TOML cannot read (found by the property test above)."""
    from dagtui.graph.checks import split_function
    from dagtui.graph.tomlio.writer import toml_key

    assert toml_key("0\n") == '"0\\n"' and toml_key("ok_id-1") == "ok_id-1"
    assert tomllib.loads(f"[nodes.{toml_key('0' + chr(10))}]\n") == {"nodes": {"0\n": {}}}
    assert split_function("pkg.mod:fn\n") is None and split_function("pkg.mod:fn")

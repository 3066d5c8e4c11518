"""`disk_merge.merge`: each node (and `[metric]`) from the side that changed it; the same
one changed differently on both sides is a conflict."""

from __future__ import annotations

from dagtui.graph.loader import load_text
from dagtui.tui.disk_merge import merge

BASE = """\
[metric]
name = "M"

[nodes.a]
type = "binary"
criteria = "A?"
verdicts = [{ verdict = true, then = "b" }, { verdict = false, score = 0 }]

[nodes.b]
type = "binary"
criteria = "B?"
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 2 }]
"""


def graph(text: str):  # type: ignore[no-untyped-def]
    loaded = load_text(text)
    assert loaded.graph is not None
    return loaded.graph


def test_each_side_keeps_what_it_changed() -> None:
    ours = graph(BASE.replace('"A?"', '"Ours?"'))
    theirs = graph(BASE.replace('"B?"', '"Theirs?"').replace('name = "M"', 'name = "T"')
                   + '\n[nodes.c]\ntype = "binary"\ncriteria = "C?"\n'
                     'verdicts = [{ verdict = true, score = 1 }, { verdict = false, score = 0 }]\n')
    out = merge(graph(BASE), ours, theirs)
    assert not out.conflicts
    assert out.nodes["a"].criteria == "Ours?" and out.nodes["b"].criteria == "Theirs?"
    assert list(out.nodes) == ["a", "b", "c"] and out.metric is not None
    assert out.metric.name == "T"
    assert out.theirs == ["[metric]", "b", "c"]


def test_a_node_deleted_there_and_untouched_here_goes() -> None:
    theirs = graph(BASE.replace('then = "b"', 'score = 5').split("[nodes.b]")[0])
    out = merge(graph(BASE), graph(BASE), theirs)
    assert list(out.nodes) == ["a"] and not out.conflicts


def test_the_same_node_changed_both_ways_conflicts() -> None:
    ours = graph(BASE.replace('"A?"', '"Ours?"'))
    theirs = graph(BASE.replace('"A?"', '"Theirs?"'))
    assert merge(graph(BASE), ours, theirs).conflicts == ["a"]
    same = graph(BASE.replace('"A?"', '"Same?"'))
    assert not merge(graph(BASE), same, same).conflicts  # changed alike: no conflict

"""The shared execution semantics (`dagtui.run.schedule`, README "A graph file") on small graphs."""

from __future__ import annotations

from dagtui.graph.loader import load_text
from dagtui.graph.model import Verdict
from dagtui.run.schedule import RunState

MEETING = '''
[metric]
name = "m"
[nodes.extract]
type = "task"
instructions = "x"
output_label = "Headings"
children = ["present", "order"]
[nodes.present]
type = "binary"
criteria = "c"
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "order" }]
[nodes.order]
type = "non_binary"
criteria = "c"
verdicts = [{ verdict = "ok", score = 10 }, { verdict = "bad", score = 2 }]
'''


def _graph(text: str = MEETING):
    result = load_text(text)
    assert result.diagnostics == []
    return result.graph


def test_order_waits_for_both_parents() -> None:
    g = _graph()
    state = RunState.start(g)
    assert state.ready() == ["extract"]
    state.finish_task("extract")
    assert state.ready() == ["present"]  # order still waits for present's verdict
    state.choose("present", g.nodes["present"].verdicts[1])
    assert state.ready() == ["order"]
    state.choose("order", g.nodes["order"].verdicts[0])
    assert state.finished
    assert [leaf.score for leaf in state.leaves] == [10]
    assert state.skipped() == []


def test_gate_skips_the_rest() -> None:
    g = _graph()
    state = RunState.start(g)
    state.finish_task("extract")
    state.choose("present", g.nodes["present"].verdicts[0])
    assert state.finished
    assert [leaf.score for leaf in state.leaves] == [0]
    assert state.skipped() == ["order"]


def test_two_verdicts_into_one_node_are_one_edge() -> None:
    g = _graph('''
[metric]
name = "m"
[nodes.a]
type = "binary"
criteria = "c"
params = ["input"]
verdicts = [{ verdict = true, then = "b" }, { verdict = false, then = "b" }]
[nodes.b]
type = "binary"
criteria = "c"
params = ["input"]
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
''')
    state = RunState.start(g)
    state.choose("a", Verdict(verdict=False, then="b"))
    assert state.ready() == ["b"]


def test_finish_requires_a_verdict_for_judgements() -> None:
    g = _graph()
    state = RunState.start(g)
    state.finish("extract")
    try:
        state.finish("present")
    except ValueError as exc:
        assert "present" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("finish without a verdict must fail")

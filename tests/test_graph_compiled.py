"""The compiled graph, the one arrival rule (`schedule.Progress`) and `graphcycles`: what the
engine, path analysis, the validator, suites and the DeepEval export now share."""

from __future__ import annotations

import pytest

from dagtui.export.refusals import deepeval_refusals
from dagtui.graph.compiled import CompiledGraph, NodeNames
from dagtui.graph.cycles import CycleError, components, cycles, find_cycle, levels
from dagtui.graph.model import BinaryNode, Graph, Metric, TaskNode, Verdict
from dagtui.run.schedule import Progress
from dagtui.suite.model import CycleError as SuiteCycleError
from dagtui.suite.model import Rule, Suite


def graph(**nodes: object) -> Graph:
    g = Graph(metric=Metric(name="g", model="m"))
    for nid, node in nodes.items():
        node.id = nid  # type: ignore[attr-defined]
        g.nodes[nid] = node  # type: ignore[assignment]
    return g


def task(*children: str) -> TaskNode:
    return TaskNode(instructions="x", output_label="X", params=["input"],
                    children=list(children))


def gate(yes: str | None = None, no: str | None = None) -> BinaryNode:
    def verdict(value: bool, then: str | None) -> Verdict:
        return Verdict(verdict=value, then=then) if then else Verdict(verdict=value, score=0)

    return BinaryNode(criteria="?", params=["input"],
                      verdicts=[verdict(True, yes), verdict(False, no)])


# -- the compiled graph ----------------------------------------------------------------------


def test_compiled_edges_are_distinct_known_and_in_file_order() -> None:
    g = graph(t=task("b", "a", "b", "ghost"), a=gate("c", "c"), b=gate("c"), c=task())
    cg = CompiledGraph.of(g)
    assert cg.ids == ("t", "a", "b", "c") and cg.index["c"] == 3
    assert cg.data == ((2, 1), (), (), ())  # declared order, duplicates and unknowns dropped
    assert cg.parents == ((), (0,), (0,), (1, 2))  # two verdicts into c: one edge
    assert cg.targets == ((1, 2), (3,), (3,), ())
    assert cg.needs == (0, 1, 1, 2) and cg.roots == (0,)
    assert cg.reachable([1]) == [1, 3] and cg.names(cg.reachable(cg.roots)) == list(cg.ids)


def test_declared_roots_are_distinct_and_in_file_order() -> None:
    g = graph(a=task("b"), b=task(), c=task())
    g.metric.roots = ["c", "b", "c", "ghost"]
    assert CompiledGraph.of(g).roots == (1, 2)


def test_node_names_is_a_live_set_of_ids() -> None:
    cg = CompiledGraph.of(graph(a=task(), b=task(), c=task()))
    members = {0, 2}
    names = NodeNames(members, cg)
    assert names == {"a", "c"} and "a" in names and "b" not in names and 0 not in names
    members.discard(0)
    assert len(names) == 1 and set(names) == {"c"}


# -- the arrival rule ------------------------------------------------------------------------


def test_a_node_waits_for_every_distinct_parent_and_runs_once() -> None:
    cg = CompiledGraph.of(graph(a=task("c"), b=task("c"), c=task()))
    p = Progress(cg)
    assert p.ready == [0, 1]
    p.take(0)
    assert not p.arrive(2) and p.ready == [1]
    p.take(1)
    assert p.arrive(2) and p.ready == [2] and p.in_ready[2]
    p.drop_ready(2)
    p.unarrive(2)
    assert p.remaining[2] == 1 and p.ready == [] and not p.in_ready[2]


def test_a_declared_root_that_is_also_a_child_is_ready_once() -> None:
    g = graph(a=task("b"), b=task())
    g.metric.roots = ["a", "b"]
    p = Progress(CompiledGraph.of(g))
    p.take(0)
    assert not p.arrive(1) and p.ready == [1]  # ready already
    p.take(1)
    copy = p.copy()
    p.untake(1)
    assert p.ready == [1] and copy.ready == [] and copy.done == [True, True]


# -- cycles, order, levels -------------------------------------------------------------------


def test_find_cycle_follows_before_to_after_and_ignores_unknown_names() -> None:
    assert find_cycle({"a": ["c"], "b": ["a"], "c": ["b"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["ghost"], "b": ["a"]}) is None
    assert find_cycle({"a": ["a"]}) == ["a", "a"]


def test_levels_are_longest_paths_in_mapping_order() -> None:
    before = {"d": ["b", "c"], "c": [], "b": ["c"], "a": []}
    assert levels(before) == [["c", "a"], ["b"], ["d"]]
    with pytest.raises(CycleError):
        levels({"a": ["b"], "b": ["a"]})


def test_components_report_every_cycle_and_order_an_acyclic_graph() -> None:
    after = {"a": ["b"], "b": ["a", "c"], "c": ["c"], "d": ["e"], "e": []}
    found = components(after, after)
    assert sorted(sorted(c) for c in cycles(found, after)) == [["a", "b"], ["c"]]
    dag = {"x": ["z"], "y": ["x"], "z": []}
    order = [c[0] for c in reversed(components(dag, dag))]
    assert order.index("y") < order.index("x") < order.index("z")


def test_a_long_chain_needs_no_recursion() -> None:
    n = 20_000
    after = {i: [i + 1] for i in range(n - 1)} | {n - 1: []}
    assert len(components(after, after)) == n
    assert find_cycle({i: [i - 1] for i in range(1, n)} | {0: [n - 1]}) is not None


# -- the users -------------------------------------------------------------------------------


def test_suite_cycle_reads_from_its_first_rule_in_file_order() -> None:
    suite = Suite()
    for rid, deps in [("x", ["c"]), ("b", ["c"]), ("c", ["b"])]:
        suite.rules[rid] = Rule(rid, check={"check": "json"}, depends_on=deps)
    assert suite.find_cycle() == ["b", "c", "b"]
    with pytest.raises(SuiteCycleError) as err:
        suite.levels()
    assert err.value.cycle == ["b", "c", "b"]


def test_export_refusal_names_the_cycle_not_what_waits_behind_it() -> None:
    g = graph(t=task("a"), a=gate("b"), b=gate("a", "c"), c=gate())
    (refusal,) = [r for r in deepeval_refusals(g) if "cycle" in r.message]
    assert refusal.nodes == ("a", "b")

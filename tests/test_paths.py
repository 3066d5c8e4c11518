"""Path analysis: its numbers on known graphs, its budget, and agreement with `RunState`.

`dagtui.graph.paths` walks the execution rules with its own fast undo-based search; the engine
uses `dagtui.run.schedule.RunState`. The property test below enumerates random graphs (including
broken ones: cycles, dangling references, duplicate edges, declared roots) both ways and
requires identical runs.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rich.console import Console

from dagtui.graph.loader import load_file, load_text
from dagtui.graph.model import (
    BinaryNode,
    CheckNode,
    GEvalNode,
    Graph,
    Metric,
    NonBinaryNode,
    TaskNode,
    Verdict,
)
from dagtui.graph.paths import analyze, describe_choices, render_table, structural_dead_nodes
from dagtui.run.schedule import RunState, Topology


def seed_graph() -> Graph:
    graph = load_file("graphs/meeting_summary.toml").graph
    assert graph is not None
    return graph


def test_seed_graph_paths() -> None:
    report = analyze(seed_graph())
    assert report.complete
    assert len(report.paths) == 4
    assert report.bad_paths == []
    assert (report.min_calls, report.max_calls) == (2, 3)
    assert abs(report.expected_calls - 2.5) < 1e-9
    assert report.reachable_scores == [0.0, 0.2, 0.4, 1.0]
    assert report.dead_nodes == []
    swapped = [p for p in report.paths if ("order", "Two headings swapped") in p.choices][0]
    assert swapped.describe() == "present=true, order='Two headings swapped'"
    assert swapped.score == 0.4 and swapped.passes is False
    assert swapped.nodes_run == ("extract", "present", "order")
    assert abs(sum(p.weight for p in report.paths) - 1.0) < 1e-9


def test_calls_count_checks_as_free_and_geval_criteria_as_two() -> None:
    text = """
[metric]
model = "m"
[nodes.c]
type = "check"
check = "json"
param = "actual_output"
verdicts = [ { verdict = true, then = "g" }, { verdict = false, score = 0 } ]
[nodes.g]
type = "geval"
name = "Tone"
params = ["actual_output"]
criteria = "Is it friendly?"
"""
    graph = load_text(text).graph
    report = analyze(graph)
    calls = {p.describe(): p.calls for p in report.paths}
    assert calls == {"c=true": 2, "c=false": 0}
    geval = [p for p in report.paths if p.is_geval][0]
    assert geval.score is None and geval.passes is None
    assert report.geval_leaves == ["g"]
    assert report.reachable_scores == [0.0]


def test_strict_mode_changes_pass_fail() -> None:
    graph = seed_graph()
    graph.metric.strict = True
    report = analyze(graph)
    assert [p.passes for p in report.paths if p.ok] == [False, True, False, False]


def test_bad_paths_and_dead_nodes() -> None:
    graph = Graph(metric=Metric(model="m"))
    graph.nodes["g"] = BinaryNode(criteria="?", params=["input"], verdicts=[
        Verdict(verdict=True, then="x"), Verdict(verdict=False, then="y")])
    graph.nodes["x"] = BinaryNode(criteria="?", params=["input"], verdicts=[
        Verdict(verdict=True, score=10), Verdict(verdict=False, then="z")])
    graph.nodes["y"] = BinaryNode(criteria="?", params=["input"], verdicts=[
        Verdict(verdict=True, score=0), Verdict(verdict=False, then="z")])
    graph.nodes["z"] = BinaryNode(criteria="?", params=["input"], verdicts=[
        Verdict(verdict=True, score=10), Verdict(verdict=False, score=0)])
    report = analyze(graph)
    assert report.dead_nodes == ["z"]
    assert sorted(p.describe() for p in report.bad_paths) == [
        "g=false, y=false", "g=true, x=false"]
    assert all(p.outcome() == "no leaf" for p in report.bad_paths)


def test_budget_announces_fallback() -> None:
    graph = Graph(metric=Metric(model="m"))
    for k in range(6):
        target = {"then": f"n{k + 1}"} if k < 5 else {"score": 5}
        graph.nodes[f"n{k}"] = NonBinaryNode(criteria="?", params=["input"], verdicts=[
            Verdict(verdict=f"L{i}", **target) for i in range(4)])
    full = analyze(graph, max_paths=10_000)
    assert full.complete and len(full.paths) == 4**6
    cut = analyze(graph, max_paths=100, max_states=0)
    assert not cut.complete and not cut.proven
    assert "100" in cut.reason
    assert cut.min_calls is None and cut.max_calls is None and cut.expected_calls is None
    assert "unknown" in cut.calls_text()
    assert cut.dead_nodes == []
    steps = analyze(graph, max_steps=50)
    assert not steps.complete and "steps" in steps.reason
    assert steps.proven and steps.min_calls == 6  # the state search finished the job


def test_structural_dead_nodes_fallback() -> None:
    graph = Graph(metric=Metric(model="m", roots=["a"]))
    graph.nodes["a"] = BinaryNode(criteria="?", params=["input"], verdicts=[
        Verdict(verdict=True, score=10), Verdict(verdict=False, score=0)])
    graph.nodes["b"] = TaskNode(instructions="x", output_label="X", params=["input"],
                                children=["c"])
    graph.nodes["c"] = BinaryNode(criteria="?", verdicts=[
        Verdict(verdict=True, score=10), Verdict(verdict=False, score=0)])
    assert structural_dead_nodes(graph) == ["b", "c"]
    assert analyze(graph).dead_nodes == ["b", "c"]


def test_render_table_lists_every_path() -> None:
    graph = seed_graph()
    table = render_table(analyze(graph), graph)
    console = Console(width=140, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    text = console.export_text()
    assert "present=false" in text and "Two headings swapped" in text
    assert "2–3 calls/case" in text
    assert text.count("pass") >= 1 and text.count("fail") >= 3


def test_describe_choices_empty() -> None:
    assert "no verdicts" in describe_choices(())


# -- agreement with the engine's state machine ---------------------------------------------


def reference_runs(graph: Graph) -> set[tuple]:
    """Every run, by driving `RunState` and copying it at each branch (slow but obvious)."""
    topo = Topology.of(graph)
    out: set[tuple] = set()

    def rec(state: RunState, choices: tuple) -> None:
        ready = state.ready()
        if not ready:
            leaves = tuple((lf.node, lf.verdict, lf.score) for lf in state.leaves)
            out.add((choices, leaves, tuple(state.done)))
            return
        nid = ready[0]
        node = graph.nodes[nid]
        if isinstance(node, TaskNode | GEvalNode):
            nxt = clone(state)
            nxt.finish(nid)
            rec(nxt, choices)
            return
        for v in node.verdicts:
            nxt = clone(state)
            nxt.choose(nid, v)
            rec(nxt, choices + ((nid, v.verdict),))

    rec(RunState.start(graph, topo), ())
    return out


def clone(state: RunState) -> RunState:
    return state.copy()


def walker_runs(graph: Graph) -> set[tuple]:
    report = analyze(graph)
    assert report.complete
    return {
        (p.choices, tuple((lf.node, lf.verdict, lf.score) for lf in p.leaves), p.nodes_run)
        for p in report.paths
    }


IDS = ["a", "b", "c", "d", "e", "f"]


@st.composite
def random_graphs(draw: st.DrawFn) -> Graph:
    n = draw(st.integers(1, 6))
    ids = IDS[:n]
    graph = Graph(metric=Metric(model="m"))
    targets = st.sampled_from([*ids, "ghost"])
    for nid in ids:
        kind = draw(st.sampled_from(["task", "binary", "non_binary", "check", "geval"]))
        if kind == "task":
            children = draw(st.lists(targets, max_size=3))
            graph.nodes[nid] = TaskNode(instructions="x", output_label="X", children=children)
        elif kind == "geval":
            graph.nodes[nid] = GEvalNode(name="g", params=["input"], criteria="c")
        else:
            count = draw(st.integers(1, 3))
            verdicts = []
            for i in range(count):
                value = (i % 2 == 0) if kind != "non_binary" else f"L{i}"
                if draw(st.booleans()):
                    verdicts.append(Verdict(verdict=value, then=draw(targets)))
                else:
                    verdicts.append(Verdict(verdict=value, score=draw(st.integers(0, 10))))
            cls = {"binary": BinaryNode, "non_binary": NonBinaryNode, "check": CheckNode}[kind]
            extra = {"check": "json", "param": "input"} if kind == "check" else {"criteria": "?"}
            graph.nodes[nid] = cls(verdicts=verdicts, **extra)
    if draw(st.booleans()):
        graph.metric.roots = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=2,
                                           unique=True))
    return graph


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_walker_agrees_with_run_state(graph: Graph) -> None:
    assert walker_runs(graph) == reference_runs(graph)


@settings(max_examples=60, deadline=None)
@given(random_graphs())
def test_dead_nodes_are_the_nodes_no_run_executes(graph: Graph) -> None:
    # a task listing one child twice counts down twice in RunState (reported to the lead);
    # the structural estimate counts edges once, so leave such graphs out here
    assume(all(len(set(n.children)) == len(n.children) for n in graph.nodes.values()
               if isinstance(n, TaskNode)))
    report = analyze(graph)
    ran = {nid for p in report.paths for nid in p.nodes_run}
    assert set(report.dead_nodes) == set(graph.nodes) - ran
    # the structural estimate never calls a live node dead
    assert set(structural_dead_nodes(graph)) <= set(report.dead_nodes)


@settings(max_examples=60, deadline=None)
@given(random_graphs())
def test_validator_topology_matches_schedule(graph: Graph) -> None:
    from dagtui.graph.positions import Positions
    from dagtui.graph.validate import _Checker

    assert _Checker(graph, Positions(), None, ".", None).topology() == Topology.of(graph)


def aggregates(report) -> tuple:
    kinds = {("none" if not p.leaves else "many") for p in report.bad_paths}
    return (report.min_calls, report.max_calls, round(report.expected_calls or 0, 9),
            report.reachable_scores, sorted(report.geval_leaves), report.dead_nodes, kinds)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_state_search_proves_what_enumeration_finds(graph: Graph) -> None:
    full = analyze(graph)
    assert full.complete
    searched = analyze(graph, max_paths=0)  # the listing stops at once; states take over
    assert not searched.complete and searched.proven
    assert aggregates(searched) == aggregates(full)
    for p in searched.bad_paths:  # the examples are real bad runs, replayed in full
        assert not p.ok
        assert p in full.paths


def test_state_search_handles_label_fan_in_without_fallback() -> None:
    graph = Graph(metric=Metric(model="m"))
    for k in range(8):
        target = {"then": f"n{k + 1}"} if k < 7 else {"score": 5}
        graph.nodes[f"n{k}"] = NonBinaryNode(criteria="?", params=["input"], verdicts=[
            Verdict(verdict=f"L{i}", **target) for i in range(10)])
    report = analyze(graph)  # 10**8 combinations, 8 distinct states
    assert not report.complete and report.proven
    assert report.steps < 10_000
    assert (report.min_calls, report.max_calls) == (8, 8)
    assert report.reachable_scores == [0.5] and report.bad_paths == []


def test_state_search_budget_falls_back() -> None:
    graph = Graph(metric=Metric(model="m"))
    for k in range(6):
        target = {"then": f"n{k + 1}"} if k < 5 else {"score": 5}
        graph.nodes[f"n{k}"] = NonBinaryNode(criteria="?", params=["input"], verdicts=[
            Verdict(verdict=f"L{i}", **target) for i in range(4)])
    report = analyze(graph, max_paths=10, max_states=2)
    assert not report.complete and not report.proven
    assert "state search stopped" in report.reason
    assert report.min_calls is None

"""A step's bookkeeping does not grow with the graph (issue #11: 5,000-node graphs).

Timings live in `tests/benchmarks/bench_graph_size.py`; these tests pin the two things that
make them hold without timing anything: the incremental structures agree with the obvious
full recomputation, and stepping a run never iterates over the graph's nodes.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from dagtui.graph.loader import load_file
from dagtui.graph.model import BinaryNode, Graph, Metric, NonBinaryNode, TaskNode, Verdict
from dagtui.judges import CallbackJudge
from dagtui.run.cases import Case
from dagtui.run.engine import Engine
from dagtui.run.schedule import Reach, RunState, Topology

GRAPHS = sorted(Path(__file__).resolve().parent.parent.joinpath("graphs").glob("*.toml"))


def brute_reach(graph: Graph, state: RunState) -> set[str]:
    """Nodes reachable from the ready set along every edge, walked from scratch."""
    seen: set[str] = set()
    stack = state.ready()
    while stack:
        nid = stack.pop()
        if nid in seen or nid not in graph.nodes:
            continue
        seen.add(nid)
        stack.extend(graph.nodes[nid].targets())
    return {n for n in seen if n not in state.done}


def chain(n: int) -> Graph:
    """n binary gates, each leading to the next on true; false scores 0, the last true 10."""
    graph = Graph(metric=Metric(name="chain", model="m"))
    for i in range(n):
        last = {"score": 10} if i == n - 1 else {"then": f"g{i + 1}"}
        graph.nodes[f"g{i}"] = BinaryNode(criteria=f"step {i}?", params=["actual_output"],
                                          verdicts=[Verdict(verdict=False, score=0),
                                                    Verdict(verdict=True, **last)])
    for nid, node in graph.nodes.items():
        node.id = nid
    return graph


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: p.stem)
def test_reach_agrees_with_a_full_walk_at_every_step(path: Path) -> None:
    graph = load_file(path).graph
    topo = Topology.of(graph)
    for seed in range(30):
        rng = random.Random(seed)
        state = RunState.start(graph, topo)
        reach = Reach(state)
        while True:
            assert reach.update() == brute_reach(graph, state)
            ready = state.ready()
            if not ready:
                break
            nid = rng.choice(ready)  # any ready node may finish first (concurrent runs)
            node = graph.nodes[nid]
            verdicts = getattr(node, "verdicts", None)
            if isinstance(node, TaskNode) or not verdicts:
                state.finish(nid)
            else:
                state.finish(nid, rng.choice(verdicts))


def test_ready_set_is_in_file_order_and_fresh_nodes_come_once() -> None:
    graph = Graph(metric=Metric(name="fan", model="m"))
    kids = [f"k{i}" for i in range(20)]
    graph.nodes["root"] = TaskNode(instructions="x", output_label="y",
                                   params=["actual_output"], children=kids[::-1])
    for k in kids:
        graph.nodes[k] = NonBinaryNode(criteria="?", verdicts=[Verdict(verdict="a", score=1)])
    for nid, node in graph.nodes.items():
        node.id = nid
    state = RunState.start(graph)
    assert state.take_new_ready() == ["root"] and state.take_new_ready() == []
    state.finish("root")
    assert state.ready() == kids and state.first_ready() == "k0"
    assert state.take_new_ready() == kids
    state.finish("k7", graph.nodes["k7"].verdicts[0])
    assert not state.is_ready("k7") and state.is_done("k7") and state.is_ready("k8")
    assert state.ready() == [k for k in kids if k != "k7"]


class CountingNodes(dict):
    """A graph's node table that counts every walk over it (lookups by id are free)."""

    walks = 0

    def __iter__(self) -> Any:
        CountingNodes.walks += 1
        return super().__iter__()

    def keys(self) -> Any:
        CountingNodes.walks += 1
        return super().keys()

    def values(self) -> Any:
        CountingNodes.walks += 1
        return super().values()

    def items(self) -> Any:
        CountingNodes.walks += 1
        return super().items()


class CountingOrder(tuple):
    """`Topology.order`, counting scans (iteration or `.index`)."""

    scans = 0

    def __iter__(self) -> Any:
        CountingOrder.scans += 1
        return super().__iter__()

    def index(self, *args: Any) -> int:
        CountingOrder.scans += 1
        return super().index(*args)


def test_stepping_a_run_never_walks_the_graph() -> None:
    graph = chain(300)
    engine = Engine(graph, CallbackJudge(lambda ask: (True, "yes"), needs_params=False))
    case = Case("c", {"actual_output": "x"})
    engine.preflight(case)  # per-engine work (validation, params needed) happens up front
    from dagtui.tui.debugger.run_model import DebugRun

    run = DebugRun(graph, engine.judge, case)
    session = run.restart()
    assert session is not None
    run.progress()
    graph.nodes = CountingNodes(graph.nodes)
    object.__setattr__(engine.topo, "order", CountingOrder(engine.topo.order))
    CountingNodes.walks = CountingOrder.scans = 0

    async def step_all() -> None:
        while not session.done:
            await session.step()
            run.progress()
            run.status(session.peek() or "g0")
            run.record("g0")
            run.totals()
            run.marks()

    asyncio.run(step_all())
    assert len(session.records) == 300
    assert (CountingNodes.walks, CountingOrder.scans) == (0, 0)
    result = session.result()
    assert result.score == 1.0 and result.error is None

    # the concurrent runner (dagtui run) likewise
    other = engine.session(case)
    CountingNodes.walks = CountingOrder.scans = 0
    asyncio.run(other.run_all(concurrent=True))
    assert (CountingNodes.walks, CountingOrder.scans) == (0, 0)
    assert other.result().score == 1.0

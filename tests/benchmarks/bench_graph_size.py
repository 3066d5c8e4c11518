"""Scale of a single graph: 10 nodes against 5,000 (run by hand; prints figures, asserts nothing).

    .venv/bin/python tests/benchmarks/bench_graph_size.py             # everything
    .venv/bin/python tests/benchmarks/bench_graph_size.py --no-stub   # skip the HTTP leg
    .venv/bin/python tests/benchmarks/bench_graph_size.py --runs 5 --nodes 5000
    ... --import-sizes 10000,100000 --debug-steps 20 --graphs meeting,chain,fan
    ... --no-engine --no-stub --no-debugger --no-import

A step's bookkeeping must not grow with the graph, so a judge call should cost the engine the
same on a 5,000-node graph as on the 10-node meeting-summary one (goal: the per-call rate
within ~1.5x). Graphs, generated in memory:

- meeting: graphs/meeting_summary.toml (10 nodes; 3 calls on the passing path);
- chain: N binary gates, each true verdict leading to the next (one case = N calls in a row);
- fan: a task with N-1 children (N-2 tasks and the binary that scores), so N-1 nodes become
  ready at once.

1. Engine overhead: an in-process judge that answers at once (no litellm, no HTTP). Every case
   is run one at a time (`concurrency=1`), so a call's cost is the engine's own; calls per
   second of CPU for each graph and the ratio to the meeting-summary rate. Building the
   `Engine` (validation and path analysis, once per graph) is printed apart.
2. Against the loopback stub (`tests/stub_server.py` in its own process, 5 ms per call) with
   the litellm judge, cache off, one case at a time: calls per second of wall time.
3. Debugger, Textual-free: build the run model (`DebugRun`: the engine, so validation) and
   paint once (progress, result and every node's status, what the path tree draws), then the
   cost of one step with its redraw: the nodes the tree relabels (only those a step changed
   when the run model can say so, else every node, as the tree used to).
4. Import: DeepEval JSON with a task and K binary children that all say the same thing (so
   their readable ids collide), through `import_deepeval_json`; ms per 1,000 children shows
   whether it is linear.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
sys.path.insert(0, str(ROOT))

from dagtui.export.importer import import_deepeval_json  # noqa: E402
from dagtui.graph.loader import load_file, load_text  # noqa: E402
from dagtui.graph.model import Graph  # noqa: E402
from dagtui.judges import CallbackJudge  # noqa: E402
from dagtui.run.batch import evaluate_cases  # noqa: E402
from dagtui.run.cases import Case  # noqa: E402
from dagtui.run.engine import Engine  # noqa: E402

MEETING = ROOT / "graphs" / "meeting_summary.toml"
LATENCY = 0.005


# ---------------------------------------------------------------------------- graphs


def chain_toml(n: int) -> str:
    """n binary gates: false scores 0, true leads to the next gate (the last scores 10)."""
    out = ['[metric]\nname = "chain"\nthreshold = 0.5\nmodel = "gpt-4.1-mini"\n']
    for i in range(n):
        nxt = (f'{{ verdict = true, then = "g{i + 1}" }}' if i < n - 1
               else "{ verdict = true, score = 10 }")
        out.append(f'[nodes.g{i}]\ntype = "binary"\ncriteria = "Is step {i} right?"\n'
                   f'params = ["actual_output"]\n'
                   f"verdicts = [{{ verdict = false, score = 0 }}, {nxt}]\n")
    return "\n".join(out)


def fan_toml(n: int) -> str:
    """A root task with n-1 children: n-2 tasks (evidence nobody reads, a warning) and the
    binary that scores; every child is ready as soon as the root has run."""
    kids = [f"t{i}" for i in range(n - 2)] + ["decide"]
    out = ['[metric]\nname = "fan"\nthreshold = 0.5\nmodel = "gpt-4.1-mini"\n',
           '[nodes.root]\ntype = "task"\ninstructions = "Extract the claims."\n'
           f'params = ["actual_output"]\noutput_label = "Claims"\nchildren = {json.dumps(kids)}\n']
    for k in kids[:-1]:
        out.append(f'[nodes.{k}]\ntype = "task"\ninstructions = "Extract part {k}."\n'
                   'output_label = "Part"\nparams = ["actual_output"]\n')
    out.append('[nodes.decide]\ntype = "binary"\ncriteria = "Are the claims supported?"\n'
               "verdicts = [{ verdict = false, score = 0 }, { verdict = true, score = 10 }]\n")
    return "\n".join(out)


def graphs(n: int) -> dict[str, Graph]:
    return {
        "meeting (10)": load_file(MEETING).graph,
        f"chain ({n})": load_text(chain_toml(n), "chain.toml").graph,
        f"fan ({n})": load_text(fan_toml(n), "fan.toml").graph,
    }


def deepeval_doc(k: int) -> dict[str, Any]:
    """DeepEval `dag_to_json` shape: a task and k binary judgements, each with two verdict
    nodes, all judgements asking the same question (uuid ids, so names are derived)."""
    nodes: dict[str, Any] = {}
    kids = []
    for i in range(k):
        jid = f"{i + 1:08x}-0000-4000-8000-000000000000"
        nodes[jid] = {"type": "BinaryJudgementNode", "criteria": "Is the aspect covered?",
                      "label": None, "evaluation_params": None,
                      "children": [f"vf{i}", f"vt{i}"]}
        nodes[f"vf{i}"] = {"type": "VerdictNode", "verdict": False, "score": 0}
        nodes[f"vt{i}"] = {"type": "VerdictNode", "verdict": True, "score": 10}
        kids.append(jid)
    root = {"type": "TaskNode", "instructions": "Extract the aspects.", "output_label": "Aspects",
            "label": None, "evaluation_params": ["actual_output"], "children": kids}
    return {"nodes": {"00000000-0000-4000-8000-000000000000": root, **nodes}}


# ---------------------------------------------------------------------------- helpers


def instant(ask: Any) -> Any:
    if ask.kind == "task":
        return "Intro\nBody\nConclusion", "found"
    if ask.kind == "binary":
        return True, "yes"
    return ask.prompt.labels[0], "first"


def cases(n: int, tag: str) -> list[Case]:
    return [Case(f"{tag} {i}", {"actual_output": f"Intro\nBody {tag} {i}\nConclusion"})
            for i in range(n)]


def cpu_wall(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - cpu0, time.perf_counter() - wall0, out


def median(values: list[float]) -> float:
    return statistics.median(values)


def cases_for(name: str, calls_wanted: int, calls_per_case: int) -> int:
    return max(1, calls_wanted // calls_per_case) if name.startswith("meeting") else 1


# ---------------------------------------------------------------------------- 1. engine


def engine_overhead(gs: dict[str, Graph], runs: int) -> None:
    print("1. engine overhead, instant in-process judge, one case at a time "
          f"(median of {runs}; CPU s, so the shared machine's load matters less)")
    rates: dict[str, float] = {}
    for name, graph in gs.items():
        build, _, engine = cpu_wall(lambda g=graph: Engine(g, CallbackJudge(instant)))
        asyncio.run(evaluate_cases(engine, cases(2, "warm"), concurrency=1))
        per_call = []
        calls = 0
        for run in range(runs):
            batch = cases(cases_for(name, 3000, 3), f"r{run}")
            cpu, _, report = cpu_wall(
                lambda b=batch, e=engine: asyncio.run(evaluate_cases(e, b, concurrency=1)))
            calls = sum(len(r.steps) for r in report.results)  # one answer per step
            per_call.append(cpu / calls)
        rates[name] = 1 / median(per_call)
        base = rates[next(iter(rates))]
        print(f"   {name:<13} Engine() {build * 1000:8.1f} ms | {calls:5d} calls, "
              f"{rates[name]:8.0f} calls/s CPU ({median(per_call) * 1e6:6.1f} µs/call) | "
              f"rate vs 10 nodes {base / rates[name]:.2f}x (goal <= 1.5x)")


# ---------------------------------------------------------------------------- 2. stub


def against_stub(gs: dict[str, Graph]) -> None:
    from bench_engine import StubProcess

    from dagtui.judges import LiteLLMJudge

    stub = StubProcess("--latency", str(LATENCY))
    print(f"2. litellm judge against the stub at {LATENCY * 1000:.0f} ms per call, cache off, "
          "one case at a time (wall time)")
    try:
        rates: dict[str, float] = {}
        for name, graph in gs.items():
            judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test",
                                 cache=None)
            engine = Engine(graph, judge)
            asyncio.run(evaluate_cases(engine, cases(1, "warm"), concurrency=1))
            batch = cases(cases_for(name, 600, 3), "s")
            _, wall, report = cpu_wall(
                lambda b=batch, e=engine: asyncio.run(evaluate_cases(e, b, concurrency=1)))
            rates[name] = report.calls / wall
            base = rates[next(iter(rates))]
            print(f"   {name:<13} {report.calls:5d} calls in {wall:6.2f} s = "
                  f"{rates[name]:6.1f} calls/s | vs 10 nodes {base / rates[name]:.2f}x | "
                  f"errors {len(report.errored)}")
    finally:
        stub.close()


# ---------------------------------------------------------------------------- 3. debugger


def debugger(gs: dict[str, Graph], steps: int = 20) -> None:
    print("3. debugger run model (Textual-free): build + first paint, then one step + redraw")
    for name, graph in gs.items():
        paint, step, done = debug_one(graph, steps)
        print(f"   {name:<13} build + first paint {paint * 1000:8.1f} ms CPU | step + redraw "
              f"{step * 1000:7.2f} ms CPU (mean of {done} steps)")


def debug_one(graph: Graph, steps: int) -> tuple[float, float, int]:
    """(CPU s to build the run model and paint once, CPU s per step with its redraw, steps
    taken)."""
    from dagtui.tui.debugger.run_model import DebugRun

    judge = CallbackJudge(instant, needs_params=False)
    case = Case("c", {"actual_output": "Intro\nBody\nConclusion"})
    cpu0 = time.process_time()
    run = DebugRun(graph, judge, case)
    session = run.restart()
    assert session is not None
    run.progress()
    run.result()
    for nid in run.order:
        run.status(nid)
    paint = time.process_time() - cpu0
    incremental = hasattr(run, "marks")
    seen = 0

    async def step_some() -> int:
        nonlocal seen
        done = 0
        while done < steps and not session.done:
            await session.step()
            run.progress()
            run.result()
            if incremental:  # what PathTree relabels: new records and moved marks
                nodes: Any = set(run.nodes_recorded_since(seen))
                nodes.update(nid for _, nid in run.marks())
                seen = run.record_count()
            else:  # the tree used to relabel every row
                nodes = run.order
            for nid in nodes:
                run.status(nid)
            done += 1
        return done

    cpu0 = time.process_time()
    done = asyncio.run(step_some())
    return paint, (time.process_time() - cpu0) / max(done, 1), done


# ---------------------------------------------------------------------------- 4. import


def importing(sizes: list[int]) -> None:
    print("4. import DeepEval JSON: a task with K same-worded binary children")
    for k in sizes:
        text = json.dumps(deepeval_doc(k))
        gc.collect()
        cpu, _, graph = cpu_wall(lambda t=text: import_deepeval_json(t))
        print(f"   K={k:>7,}: {len(text) / 2**20:6.1f} MB, {cpu:7.2f} s CPU, "
              f"{cpu / k * 1e6:6.1f} µs per child, {len(graph.nodes):,} nodes")


def main() -> None:
    argv = sys.argv[1:]
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    n = int(argv[argv.index("--nodes") + 1]) if "--nodes" in argv else 5000
    sizes = ([int(s) for s in argv[argv.index("--import-sizes") + 1].split(",")]
             if "--import-sizes" in argv else [10_000, 100_000])
    print(f"graph size: {n} nodes, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    gs = graphs(n)
    if "--graphs" in argv:  # e.g. --graphs meeting,chain (the old code took hours on fan)
        keep = argv[argv.index("--graphs") + 1].split(",")
        gs = {k: v for k, v in gs.items() if k.split()[0] in keep}
    if "--no-engine" not in argv:
        engine_overhead(gs, runs)
    if "--no-stub" not in argv:
        against_stub(gs)
    if "--no-debugger" not in argv:
        debugger(gs, int(argv[argv.index("--debug-steps") + 1]) if "--debug-steps" in argv
                 else 20)
    if "--no-import" not in argv:
        importing(sizes)


if __name__ == "__main__":
    main()

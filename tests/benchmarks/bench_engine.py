"""Engine throughput and overhead (run by hand; prints figures, asserts nothing).

    .venv/bin/python tests/benchmarks/bench_engine.py            # throughput + overhead
    .venv/bin/python tests/benchmarks/bench_engine.py --runs 5   # more runs (default 3)
    .venv/bin/python tests/benchmarks/bench_engine.py --soak     # + 100-case fault soak

1. Throughput: 100 distinct cases × the meeting-summary graph through litellm against the
   loopback stub at 200 ms per call, concurrency 20, no cache. The latency bound is
   calls × 0.2 s / 20 (perfect packing); the target is wall time ≤ 1.25 × bound.
   The judge runs litellm's calls on its default lanes (`dagtui.judges.lanes`: event loops
   in threads, so a burst of replies is not worked off all at once on the engine's loop).
   Repeated `--runs` times (the machine is shared, so the spread is printed), each run
   beside the same requests sent by litellm alone on one loop; then, once, by the openai
   SDK and by bare httpx, to show where the time goes (client CPU per call), and the same
   batch with `lanes=0` (every call on the engine's loop) for comparison. DeepEval's
   figure for the same setup (reference: 4 calls per passing case, ≈16.7 s for 100 cases at
   20 concurrent) is printed beside it; measured live if deepeval is importable.
   Then the same batch with the cases spread over Dask worker processes (`--workers 2`,
   `dagtui.run.cluster`, needs dagtui[dask]): the ratio for workers=1 and workers=2, `--runs`
   runs each, clock started once the workers are warm (as `dagtui run` does).
2. Overhead: the engine's own cost per judge call, with an instant in-process judge (no
   litellm, no HTTP): scheduling, prompt building, parsing and step records. Target < 1 ms.
3. Soak (--soak): 100 cases, 200 ms, 20% of requests failing (429, 500, malformed body,
   non-JSON answer, timeout); every case must end with a score or a reported judge error.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from stub_server import StubServer  # noqa: E402

from dagtui.graph.loader import load_file  # noqa: E402
from dagtui.judges import CallbackJudge, LiteLLMJudge  # noqa: E402
from dagtui.run.batch import evaluate_cases  # noqa: E402
from dagtui.run.cases import Case  # noqa: E402
from dagtui.run.engine import Engine  # noqa: E402

GRAPH = ROOT / "graphs" / "meeting_summary.toml"
LATENCY = 0.2
CONCURRENCY = 20
CASES = 100
DEEPEVAL_REFERENCE_S = 16.7  # DeepEval's DAGMetric measured on this setup (see deepeval_live)


def cases(n: int, tag: str = "") -> list[Case]:
    return [Case(f"case {tag}{i}", {"actual_output": f"Intro\nBody {tag}{i}\nConclusion"})
            for i in range(n)]


class StubProcess:
    """The stub in its own process, so its CPU does not share the client's GIL."""

    def __init__(self, *args: str) -> None:
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "stub_server.py"), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        tail = self.proc.stderr.read().strip()
        self.proc.wait(10)
        return tail


async def replay_requests(base_url: str, per_case: list[list[dict]], via: str) -> float:
    """The engine's own requests sent again without the engine, 20 cases in flight and each
    case's calls in a row: `litellm` (the floor the engine's figure should be compared with),
    `openai` (the SDK litellm drives underneath) or `httpx` (bare HTTP: what the stub and this
    machine allow). Returns the wall time."""
    sem = asyncio.Semaphore(CONCURRENCY)
    closers: list = []
    if via == "litellm":
        import litellm

        async def send(req: dict) -> None:
            await litellm.acompletion(**req, api_base=base_url, api_key="test",
                                      num_retries=0, max_retries=0)
    elif via == "openai":
        import openai

        client = openai.AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0)
        closers.append(client.close)

        async def send(req: dict) -> None:
            body = dict(req, model=req["model"].split("/", 1)[-1])
            await client.chat.completions.create(**body)
    else:
        import httpx

        http = httpx.AsyncClient(limits=httpx.Limits(max_connections=CONCURRENCY * 2))
        closers.append(http.aclose)

        async def send(req: dict) -> None:
            body = dict(req, model=req["model"].split("/", 1)[-1])
            reply = await http.post(f"{base_url}/chat/completions", json=body,
                                    headers={"Authorization": "Bearer test"})
            reply.json()

    async def one_case(requests: list[dict]) -> None:
        async with sem:
            for req in requests:
                await send(req)

    start = time.perf_counter()
    await asyncio.gather(*(one_case(reqs) for reqs in per_case))
    wall = time.perf_counter() - start
    for close in closers:
        await close()
    return wall


def _timed(coro_fn, *args) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(wall, client CPU) of one asyncio.run (CPU includes litellm's worker threads)."""
    cpu0 = time.process_time()
    wall = asyncio.run(coro_fn(*args))
    return wall, time.process_time() - cpu0


def _spread(values: list[float]) -> str:
    ordered = sorted(values)
    mid = ordered[len(ordered) // 2]
    return f"min {ordered[0]:.2f}  median {mid:.2f}  max {ordered[-1]:.2f}"


def throughput(runs: int) -> None:
    graph = load_file(GRAPH).graph
    stub = StubProcess("--latency", str(LATENCY))
    rows: list[dict[str, float]] = []
    try:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test",
                             concurrency=CONCURRENCY, cache=None)
        engine = Engine(graph, judge)
        # warm up: litellm import and its first-call setup are not the engine's throughput
        asyncio.run(evaluate_cases(engine, cases(2, "warm"), concurrency=CONCURRENCY))
        print(f"throughput: {CASES} cases x meeting-summary, {LATENCY * 1000:.0f} ms per call "
              f"at the stub, concurrency {CONCURRENCY}, {runs} run(s), {os.cpu_count()} cores")
        for run in range(runs):
            load = os.getloadavg()[0]
            sent_before = judge.calls_sent
            start, cpu0 = time.perf_counter(), time.process_time()
            report = asyncio.run(evaluate_cases(engine, cases(CASES, f"r{run}-"),
                                                concurrency=CONCURRENCY))
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
            calls = judge.calls_sent - sent_before
            bound = calls * LATENCY / CONCURRENCY
            per_case = [[c.request for s in r.steps for c in s.calls] for r in report.results]
            alone, alone_cpu = _timed(replay_requests, stub.base_url, per_case, "litellm")
            lat = sorted(c.latency for r in report.results for s in r.steps for c in s.calls)
            rows.append({"ratio": wall / bound, "alone": alone / bound,
                         "cpu": cpu / calls * 1000, "alone_cpu": alone_cpu / calls * 1000})
            print(f"  run {run + 1}: {calls} calls, bound {bound:.2f} s | engine wall "
                  f"{wall:.2f} s = {wall / bound:.2f}x, CPU {cpu / calls * 1000:.1f} ms/call, "
                  f"p50 {lat[len(lat) // 2] * 1000:.0f} ms | litellm alone {alone:.2f} s = "
                  f"{alone / bound:.2f}x, CPU {alone_cpu / calls * 1000:.1f} ms/call | errors "
                  f"{len(report.errored)} | load {load:.1f}")
        floors = {}
        for via in ("openai", "httpx"):
            floor_wall, floor_cpu = _timed(replay_requests, stub.base_url, per_case, via)
            floors[via] = (floor_wall / bound, floor_cpu / calls * 1000)
        on_one_loop = lanes_ratios(graph, stub.base_url, 0, runs)
        by_workers = {w: workers_ratios(engine, w, runs) for w in (1, 2)}
    finally:
        stub.close()
    print(f"  engine ratio        {_spread([r['ratio'] for r in rows])}   (target <= 1.25x)")
    print(f"  litellm alone ratio {_spread([r['alone'] for r in rows])}")
    print(f"  client CPU per call: engine {_spread([r['cpu'] for r in rows])} ms; litellm "
          f"alone {_spread([r['alone_cpu'] for r in rows])} ms")
    print("  floors without litellm (same requests, same pattern, one run): openai SDK "
          f"{floors['openai'][0]:.2f}x at {floors['openai'][1]:.1f} ms CPU/call; bare httpx "
          f"{floors['httpx'][0]:.2f}x at {floors['httpx'][1]:.1f} ms CPU/call")
    print(f"  lanes=0 (litellm on the engine's own loop, as before lanes): ratio "
          f"{_spread(on_one_loop)}   (default: {judge.lanes} lanes, the engine ratio above)")
    for w, ratios in by_workers.items():
        print(f"  workers={w}: ratio {_spread(ratios)}   (target <= 1.25x)")
    if importlib.util.find_spec("deepeval") is not None:
        deepeval_live()
    else:
        print("  deepeval is not installed here (it is the `interop` extra, in its own venv); "
              "its figure from the reference notes:")
        print(f"  DeepEval, same setup: {DEEPEVAL_REFERENCE_S:.1f} s for 100 cases "
              f"(4 calls per passing case; bound 4.0 s, ratio {DEEPEVAL_REFERENCE_S / 4.0:.1f}x)")


def deepeval_live() -> None:
    """DeepEval's own DAGMetric on the same workload: the graph exported to DeepEval Python
    (`dagtui export --format deepeval-python`), its OpenAI-compatible LocalModel pointed at a
    fresh stub at the same latency, 100 cases with 20 `a_measure` in flight. Calls are
    counted at the stub, so the figure includes DeepEval's separate reason call."""
    import tempfile

    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
    os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
    from deepeval.models import LocalModel
    from deepeval.test_case import LLMTestCase
    from test_export_support import load_module

    from dagtui.export import export_graph

    graph = load_file(GRAPH).graph
    with tempfile.TemporaryDirectory() as tmp:
        module = load_module(export_graph(graph, "deepeval-python"), Path(tmp))

    async def batch(items: list[Case], base_url: str) -> tuple[float, list[float | None]]:
        model = LocalModel(model="gpt-4.1-mini", base_url=base_url, api_key="test")
        sem = asyncio.Semaphore(CONCURRENCY)

        async def one(case: Case) -> float | None:
            async with sem:
                metric = module.build_metric(model=model)
                await metric.a_measure(LLMTestCase(input="", **case.fields),
                                       _show_indicator=False)
                return metric.score

        start = time.perf_counter()
        scores = await asyncio.gather(*(one(c) for c in items))
        return time.perf_counter() - start, scores

    async def warm_then_measure(warm_url: str, url: str) -> tuple[float, list[float | None]]:
        await batch(cases(2, "dwarm"), warm_url)  # imports and first-call setup
        return await batch(cases(CASES, "d"), url)

    # one stub for the warm-up and a fresh one for the measured batch, so its count is clean
    warm, stub = StubProcess("--latency", str(LATENCY)), StubProcess("--latency", str(LATENCY))
    try:
        wall, scores = asyncio.run(warm_then_measure(warm.base_url, stub.base_url))
    finally:
        warm.close()
        tail = stub.close()
    calls = int(tail.split()[1]) if tail.startswith("calls ") else 0
    bound = calls * LATENCY / CONCURRENCY
    print(f"  DeepEval {importlib.metadata.version('deepeval')} live, same setup: {CASES} cases, "
          f"{calls} calls ({calls / CASES:.1f} per case), wall {wall:.2f} s = "
          f"{wall / bound:.2f}x its own bound; {sum(sc is None for sc in scores)} unscored")


def lanes_ratios(graph, base_url: str, lanes: int, runs: int) -> list[float]:  # type: ignore[no-untyped-def]
    """Wall / bound for `runs` batches with the judge's calls on `lanes` lanes (0: on the
    engine's loop), to show what `dagtui.judges.lanes` buys on this machine."""
    judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=base_url, api_key="test",
                         concurrency=CONCURRENCY, cache=None, lanes=lanes)
    engine = Engine(graph, judge)
    asyncio.run(evaluate_cases(engine, cases(2, f"warm-l{lanes}"), concurrency=CONCURRENCY))
    ratios = []
    for run in range(runs):
        report = asyncio.run(evaluate_cases(engine, cases(CASES, f"l{lanes}-{run}-"),
                                            concurrency=CONCURRENCY))
        ratios.append(report.wall_time / (report.calls * LATENCY / CONCURRENCY))
    return ratios


def workers_ratios(engine: Engine, workers: int, runs: int) -> list[float]:
    """Wall / bound for `runs` batches through `workers` processes (1: in process, warm).

    For workers > 1 the Dask batch is driven directly (what `evaluate_in_workers` does) to
    read the workers' CPU time: workers far from a full core each mean the CPU left the GIL's
    bottleneck and the rest is the machine (other load, the stub) or the latency itself."""
    ratios = []
    for run in range(runs):
        batch = cases(CASES, f"w{workers}-{run}-")
        cpu_note = ""
        if workers == 1:
            cpu0 = time.process_time()
            report = asyncio.run(evaluate_cases(engine, batch, concurrency=CONCURRENCY))
            calls, wall, errors = report.calls, report.wall_time, len(report.errored)
            cpu_note = f"CPU {(time.process_time() - cpu0) / calls * 1000:.1f} ms/call"
        else:
            from dagtui.run.cluster import Batch, Cluster

            with Cluster(workers) as cluster:
                cluster.connect()  # the clock starts once the workers are warm
                warm = Batch(engine, batch, cluster, CONCURRENCY)
                results = warm.run(None)
                wall = time.perf_counter() - warm.started
            calls = sum(r.calls for r in results)
            cpu_note = (f"CPU {warm.cpu / calls * 1000:.1f} ms/call (workers' CPU summed: "
                        f"{warm.cpu:.2f} s over {workers} workers in {wall:.2f} s)")
            errors = sum(1 for r in results if r.status == "error")
        bound = calls * LATENCY / CONCURRENCY
        ratios.append(wall / bound)
        print(f"  workers={workers} run {run + 1}: {calls} calls, wall {wall:.2f} s = "
              f"{wall / bound:.2f}x bound | {cpu_note} | errors {errors} | "
              f"load {os.getloadavg()[0]:.1f}")
    return ratios


def overhead() -> None:
    graph = load_file(GRAPH).graph

    def instant(ask):
        if ask.kind == "task":
            return "Intro\nBody\nConclusion", "found"
        if ask.kind == "binary":
            return True, "yes"
        return "Correct order", "in order"

    engine = Engine(graph, CallbackJudge(instant))
    batch = cases(2000, "o")
    asyncio.run(evaluate_cases(engine, batch[:50], concurrency=20))  # warm
    start = time.perf_counter()
    report = asyncio.run(evaluate_cases(engine, batch, concurrency=20))
    wall = time.perf_counter() - start
    answers = sum(len(r.steps) for r in report.results)
    print(f"overhead: {answers} judge answers in {wall:.2f} s with an instant judge: "
          f"{wall / answers * 1000:.3f} ms per call (target < 1 ms)")
    start = time.perf_counter()
    for case in batch[:500]:
        engine.run_sync(case)
    single = time.perf_counter() - start
    print(f"  one case at a time (asyncio.run each): {single / 1500 * 1000:.3f} ms per call")


def soak() -> None:
    graph = load_file(GRAPH).graph
    faults = ("429", "500", "malformed", "bad_json", "timeout")
    with StubServer(latency=LATENCY, fault_rate=0.2, faults=faults, seed=5, hang=10) as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test",
                             concurrency=CONCURRENCY, cache=None, retries=3, timeout=2.0,
                             backoff=0.2, max_backoff=2.0)
        engine = Engine(graph, judge)
        start = time.perf_counter()
        report = asyncio.run(evaluate_cases(engine, cases(CASES, "s"), concurrency=CONCURRENCY))
        wall = time.perf_counter() - start
        injected = dict(stub.faults_sent)
        calls = stub.calls
    ended = sum(1 for r in report.results if (r.score is None) != (r.error is None))
    max_retries = max((c.retries for r in report.results for s in r.steps for c in s.calls),
                      default=0)
    print(f"soak: {CASES} cases, {calls} requests, {wall:.1f} s; injected {injected}")
    print(f"  ended with a score or a judge error: {ended}/{CASES}; passed "
          f"{len(report.passed)}, failed {len(report.failed)}, judge errors "
          f"{dict(report.error_kinds())}")
    print(f"  retried by kind {dict(report.retried_kinds())}; corrective turns "
          f"{report.corrections()}; max retries on one call {max_retries} (bound 3)")


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    throughput(runs)
    overhead()
    if "--soak" in sys.argv:
        soak()


if __name__ == "__main__":
    main()

"""The OpenAI-compatible route beside the litellm route (run by hand; prints figures,
asserts nothing).

    .venv/bin/python tests/benchmarks/bench_routes.py                   # 3 rounds
    .venv/bin/python tests/benchmarks/bench_routes.py --runs 5 --cases 400
    .venv/bin/python tests/benchmarks/bench_routes.py --deepeval-python /path/to/venv/bin/python

1. Calls per second per process: `--cases` distinct meeting-summary cases, cache off, at
   `--concurrency` calls in flight against the loopback stub at 20 ms per call, in its own
   process (its CPU off the client's GIL). The same batch on `--via auto` (httpx: this
   machine's openai/NAME route) and `--via litellm`, interleaved, each judge warmed before
   the clock. Calls/s, client CPU per call and the ratio auto / litellm.
2. Whole process, six shipped cases, cache off, stub at 200 ms: `dagtui run --via auto`,
   `dagtui run --via litellm`, and DeepEval's DAGMetric on the exported graph when a Python
   with deepeval is given (`--deepeval-python`; deepeval is the `interop` extra, kept in its
   own venv); else the figure from issue #27 (2.68 s, measured there) is printed as a
   reference, not a measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from bench_cached_run import timed  # noqa: E402
from bench_engine import StubProcess  # noqa: E402

from dagtui.graph.loader import load_file  # noqa: E402
from dagtui.judges import LiteLLMJudge  # noqa: E402
from dagtui.run.batch import evaluate_cases  # noqa: E402
from dagtui.run.cases import Case  # noqa: E402
from dagtui.run.engine import Engine  # noqa: E402

GRAPH = ROOT / "graphs" / "meeting_summary.toml"
DEEPEVAL_SIX_CASES_S = 2.68  # issue #27: DeepEval DAGMetric, six cases, whole process

DEEPEVAL_SCRIPT = """
import asyncio, json, os, sys
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
from deepeval.models import LocalModel
from deepeval.test_case import LLMTestCase
spec = {}
exec(open(sys.argv[1]).read(), spec)
cases = [json.loads(line) for line in open(sys.argv[2])]
model = LocalModel(model="gpt-4.1-mini", base_url=sys.argv[3], api_key="test")
async def main():
    async def one(c):
        metric = spec["build_metric"](model)
        await metric.a_measure(LLMTestCase(input=c.get("input", ""),
                                           actual_output=c["actual_output"]),
                               _show_indicator=False)  # as dagtui's -q: no progress drawn
    await asyncio.gather(*(one(c) for c in cases))
asyncio.run(main())
"""


def cases(n: int, tag: str) -> list[Case]:
    return [Case(f"case {tag}{i}", {"actual_output": f"Intro\nBody {tag}{i}\nConclusion"})
            for i in range(n)]


def calls_per_second(base_url: str, via: str, n: int, concurrency: int,
                     tag: str) -> tuple[float, float]:
    """(calls/s, client CPU ms per call) of one batch."""
    graph = load_file(GRAPH).graph
    judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=base_url, api_key="test",
                         concurrency=concurrency, via=via)
    engine = Engine(graph, judge)

    async def go() -> tuple[float, float, int]:
        await judge.warm_up()
        cpu = time.process_time()
        report = await evaluate_cases(engine, cases(n, tag), concurrency=concurrency)
        cpu = time.process_time() - cpu
        await judge.aclose()
        return report.wall_time, cpu, report.calls

    wall, cpu, calls = asyncio.run(go())
    return calls / wall, cpu / max(1, calls) * 1000


def whole_process(cmd: list[str], env: dict[str, str]) -> float:
    return timed(cmd, os.getcwd(), env)  # bench_cached_run's: fails loudly on a bad exit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--deepeval-python", help="a Python with deepeval installed")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    stub = StubProcess("--latency", "0.02")
    rates: dict[str, list[float]] = {"auto": [], "litellm": []}
    cpus: dict[str, list[float]] = {"auto": [], "litellm": []}
    try:
        for k in range(args.runs):
            for via in ("auto", "litellm"):  # interleaved: the machine's load hits both
                rate, cpu = calls_per_second(stub.base_url, via, args.cases,
                                             args.concurrency, f"{via}{k}-")
                rates[via].append(rate)
                cpus[via].append(cpu)
    finally:
        stub.close()
    print(f"1. {args.cases} cases, stub at 20 ms, {args.concurrency} in flight, cache off, "
          f"{args.runs} interleaved rounds (median)")
    peer = statistics.median(rates["litellm"])
    for via in ("auto", "litellm"):
        med = statistics.median(rates[via])
        print(f"   --via {via:8} {med:7.1f} calls/s  ({min(rates[via]):.0f}-"
              f"{max(rates[via]):.0f})  CPU {statistics.median(cpus[via]):5.2f} ms/call  "
              f"{med / peer:4.2f}x litellm")

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(CI="1", PYTHONPATH=str(ROOT), OPENAI_API_KEY="test")
    stub = StubProcess("--latency", "0.2")
    figures: dict[str, list[float]] = {"dagtui --via auto": [], "dagtui --via litellm": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            base = [sys.executable, "-m", "dagtui", "run", str(GRAPH), "-q", "--no-cache",
                    "--model", "openai/gpt-4.1-mini", "--api-base", stub.base_url]
            deepeval = None
            if args.deepeval_python:
                from dagtui.export import export_graph

                script = Path(tmp) / "metric.py"
                script.write_text(export_graph(load_file(GRAPH).graph, "deepeval-python"))
                driver = Path(tmp) / "drive.py"
                driver.write_text(DEEPEVAL_SCRIPT)
                deepeval = [args.deepeval_python, str(driver), str(script),
                            str(ROOT / "graphs" / "meeting_summary.cases.jsonl"),
                            stub.base_url]
                figures["DeepEval DAGMetric"] = []
            whole_process(base + ["--via", "auto"], env)  # bytecode written
            for _ in range(args.runs):
                figures["dagtui --via auto"].append(whole_process(base + ["--via", "auto"], env))
                figures["dagtui --via litellm"].append(
                    whole_process(base + ["--via", "litellm"], env))
                if deepeval is not None:
                    figures["DeepEval DAGMetric"].append(whole_process(deepeval, env))
    finally:
        stub.close()
    print(f"2. six shipped cases, whole process, stub at 200 ms, cache off ({args.runs} "
          "interleaved rounds, median)")
    ref = (statistics.median(figures["DeepEval DAGMetric"]) if "DeepEval DAGMetric" in figures
           else DEEPEVAL_SIX_CASES_S)
    for name, values in figures.items():
        med = statistics.median(values)
        print(f"   {name:22} {med:6.2f} s  ({min(values):.2f}-{max(values):.2f})  "
              f"{med / ref:4.2f}x DeepEval")
    # the machine is shared: the same figures differ several-fold between a quiet and a
    # loaded machine, so the load is printed with them
    print(f"   load average (1 min) {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, "
          f"{os.cpu_count()} CPUs")
    if "DeepEval DAGMetric" not in figures:
        print(f"   DeepEval DAGMetric     {DEEPEVAL_SIX_CASES_S:6.2f} s  (issue #27's figure, "
              "not measured here: pass --deepeval-python)")


if __name__ == "__main__":
    main()

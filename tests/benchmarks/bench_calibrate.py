"""Calibration throughput (run by hand; prints figures, asserts nothing).

    .venv/bin/python tests/benchmarks/bench_calibrate.py             # 200 x 3 x 5, 3 runs
    .venv/bin/python tests/benchmarks/bench_calibrate.py --runs 1 --cases 50

200 labelled cases x 3 nodes (task -> binary gate -> non-binary, every node on the labels'
path) x 5 samples = 3,000 calls through litellm against the loopback stub (its own process)
at 200 ms per call, concurrency 32, no cache. The latency bound is calls x 0.2 s / 32 (perfect
packing); the goal is wall time <= 1.5 x bound. The free run's calls are all shared with
sample 0 (same prompts), so it adds none. The clock is `Calibration.wall_time`: from the first
forced call to the last answer (litellm's one-time import and warm-up excluded, as `dagtui run`
does).

Each run is followed by a baseline: the same number of calls as a plain batch (`dagtui run`'s
loop, `batch.evaluate_cases`, over 200 x 5 distinct cases), so the cost calibration adds
(forcing, shared answers, two phases) reads apart from the machine's load: litellm spends
~7 ms of CPU per call, so 3,000 calls need ~21 s of one core, above the 18.75 s bound, and a
shared 2-core machine stretches both figures alike.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
sys.path.insert(0, str(ROOT))

from bench_engine import StubProcess  # noqa: E402

import dagtui  # noqa: E402
from dagtui.judges import LiteLLMJudge  # noqa: E402
from dagtui.run.batch import evaluate_cases  # noqa: E402
from dagtui.run.cases import case_from_dict  # noqa: E402
from dagtui.run.engine import Engine  # noqa: E402

GRAPH = """\
[metric]
name = "Bench calibrate"
threshold = 0.5

[nodes.extract]
type = "task"
instructions = "Extract all headings in `actual_output`."
output_label = "Headings"
params = ["actual_output"]
children = ["present", "order"]

[nodes.present]
type = "binary"
criteria = "Do the headings contain Intro, Body and Conclusion?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "order" }]

[nodes.order]
type = "non_binary"
criteria = "Classify the ordering of the headings."
params = ["actual_output"]
verdicts = [{ verdict = "Correct order", score = 10 }, { verdict = "Swapped", score = 4 }]
"""


def labelled_cases(n: int) -> list[dict[str, object]]:
    """Distinct cases (every prompt differs, so nothing is shared between cases), labelled so
    the labels reach all three nodes."""
    return [{"name": f"case {i}", "actual_output": f"Intro\nBody {i}\nConclusion",
             "expected": {"extract": ["Intro", "Body", "Conclusion"], "present": True,
                          "order": "Correct order"}, "expected_score": 1.0}
            for i in range(n)]


def baseline(graph: object, base_url: str, n: int, concurrency: int) -> tuple[int, float]:
    """(calls, wall seconds) of a plain batch of `n` distinct cases through the same graph."""
    judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=base_url, retries=0,
                         concurrency=concurrency)
    engine = Engine(graph, judge)  # type: ignore[arg-type]
    cases = [case_from_dict(c, index=i) for i, c in enumerate(labelled_cases(n))]

    async def go() -> float:
        await judge.warm_up()
        report = await evaluate_cases(engine, cases, concurrency=concurrency)
        return report.wall_time

    wall = asyncio.run(go())
    return judge.calls_sent, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    graph = dagtui.load_text(GRAPH).graph
    cases = labelled_cases(args.cases)
    stub = StubProcess("--latency", str(args.latency))
    ratios = []
    try:
        for run in range(args.runs):
            judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, retries=0,
                                 concurrency=args.concurrency)
            cal = dagtui.calibrate(graph, cases, judge=judge, samples=args.samples,
                                   concurrency=args.concurrency)
            calls = judge.calls_sent
            bound = calls * args.latency / args.concurrency
            ratio = cal.wall_time / bound
            ratios.append(ratio)
            kappas = {n: c.kappa for n, c in cal.nodes.items() if c.kappa is not None}
            print(f"run {run + 1}: {args.cases} cases x 3 nodes x {args.samples} samples: "
                  f"{calls} calls in {cal.wall_time:.2f}s; latency bound {bound:.2f}s "
                  f"-> {ratio:.2f}x (goal <= 1.5x); kappa {kappas}", flush=True)
            b_calls, b_wall = baseline(graph, stub.base_url, args.cases * args.samples,
                                       args.concurrency)
            b_bound = b_calls * args.latency / args.concurrency
            print(f"  baseline, a plain batch of {args.cases * args.samples} cases: {b_calls} "
                  f"calls in {b_wall:.2f}s -> {b_wall / b_bound:.2f}x; calibrate / batch "
                  f"{ratio / (b_wall / b_bound):.2f}", flush=True)
    finally:
        print(f"stub: {stub.close()}")
    if len(ratios) > 1:
        print(f"ratio median {statistics.median(ratios):.2f}x, min {min(ratios):.2f}x, "
              f"max {max(ratios):.2f}x over {len(ratios)} runs")


if __name__ == "__main__":
    main()

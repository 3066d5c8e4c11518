"""Alignment throughput (run by hand; prints figures, asserts nothing).

    .venv/bin/python tests/benchmarks/bench_align.py                 # 60 cases, K=4
    .venv/bin/python tests/benchmarks/bench_align.py --cases 100 --candidates 2

One binary node over 60 labelled cases (42 train, 18 held-out), `--method both` with K=4,
through litellm against the loopback stub (its own process) at 200 ms per call, concurrency
16, no cache. The stub's default answers (true to every question; two generic "steps" for
the proposer) make 4 example sets and 2 rewrites. Candidates are measured one after another
(a judge that halts stops the search early), each over the train cases at full concurrency,
so the latency bound is the sum over the phases of ceil(calls / concurrency) x 0.2 s: the
node as it is and each candidate on train, the one proposer call, the baseline and the
winner on held-out. Train measurements carry no bootstrap interval (only held-out figures
report one). A second run of the same alignment (the cache on) is printed too: it
should make 0 calls.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
sys.path.insert(0, str(ROOT))

from align_helpers import write  # noqa: E402
from bench_engine import StubProcess  # noqa: E402

import dagtui  # noqa: E402
from dagtui.judges import LiteLLMJudge  # noqa: E402
from dagtui.judges.cache import Cache  # noqa: E402

LATENCY = 0.2
CONCURRENCY = 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=60)
    parser.add_argument("--candidates", type=int, default=4)
    args = parser.parse_args()
    stub = StubProcess("--latency", str(LATENCY))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            graph = write(Path(tmp), n=args.cases)
            cache = Cache(Path(tmp) / "cache")
            for label in ("first run", "second run"):
                judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url,
                                     api_key="bench", retries=0, cache=cache,
                                     concurrency=CONCURRENCY)
                result = dagtui.align(str(graph), "polite", judge=judge, method="both",
                                      candidates=args.candidates, concurrency=CONCURRENCY)
                train, held = len(result.split.train), len(result.split.held_out)
                pool = len(result.candidates) - 1
                phases = [train] * (1 + pool) + [1] + ([held, held] if result.winner else [])
                bound = sum(math.ceil(n / CONCURRENCY) for n in phases) * LATENCY
                print(f"{label}: {args.cases} cases ({train} train, {held} held-out), "
                      f"{pool} candidates, {result.calls} calls, {result.cache_hits} cache "
                      f"hits, wall {result.wall_time:.2f}s, latency bound {bound:.2f}s "
                      f"({result.wall_time / bound:.2f}x), winner "
                      f"{result.winner.name if result.winner else 'none'}")
    finally:
        print(stub.close())


if __name__ == "__main__":
    main()

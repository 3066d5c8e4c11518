"""A fully cached rerun, whole process (run by hand; prints figures, asserts nothing).

    .venv/bin/python tests/benchmarks/bench_cached_run.py            # 5 rounds
    .venv/bin/python tests/benchmarks/bench_cached_run.py --runs 9

The six shipped meeting-summary cases against the loopback stub (tests/stub_server.py):
one run fills a fresh cache, then each round runs, interleaved, as separate processes:

- `dagtui run` answered wholly by the cache (0 calls): the figure the cache-first judge is
  about (it never imports litellm: tests/test_cache_first.py);
- the same graph with the labels judge (no model at all): the floor a cached run can reach;
- `python -c "import litellm"`: what a cached rerun paid before, on top of the floor.

Medians and the ratio to the labels run are printed. Bytecode is written (the benchmark
unsets PYTHONDONTWRITEBYTECODE), as in an installed dagtui.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from stub_server import StubServer  # noqa: E402

GRAPH = str(ROOT / "graphs" / "meeting_summary.toml")


def timed(cmd: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if out.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-800:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(CI="1", PYTHONPATH=str(ROOT))
    dagtui = [sys.executable, "-m", "dagtui", "run", GRAPH, "-q"]
    with tempfile.TemporaryDirectory() as tmp, StubServer() as stub:
        cached = dagtui + ["--model", "openai/gpt-4.1-mini", "--api-base", stub.base_url]
        labels = dagtui + ["--model", "labels"]
        # as dagtui imports it: the bundled cost map, no fetch from the network
        litellm = [sys.executable, "-c", "import os; os.environ['LITELLM_LOCAL_MODEL_COST_MAP']"
                   " = 'True'; import litellm"]
        timed(cached, tmp, env)  # fills the cache (and writes bytecode)
        calls = stub.calls
        timed(labels, tmp, env)
        figures: dict[str, list[float]] = {"cached rerun": [], "labels judge": [],
                                           "import litellm": []}
        for _ in range(args.runs):  # interleaved: the machine's load hits all alike
            figures["cached rerun"].append(timed(cached, tmp, env))
            figures["labels judge"].append(timed(labels, tmp, env))
            figures["import litellm"].append(timed(litellm, tmp, env))
        assert stub.calls == calls, "the rerun made calls: the cache did not answer"
    floor = statistics.median(figures["labels judge"])
    print(f"six shipped cases, whole process, {args.runs} interleaved rounds (median, spread)")
    for name, values in figures.items():
        med = statistics.median(values)
        print(f"  {name:15} {med:6.3f} s  ({min(values):.3f}-{max(values):.3f})  "
              f"{med / floor:5.2f}x the labels run")


if __name__ == "__main__":
    main()

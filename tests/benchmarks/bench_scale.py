"""Scale-out figures: in process vs two Dask workers, and peak memory against dataset size.

1. Throughput (default): `--cases` (10,000) meeting-summary cases against the loopback stub in
   its own process at `--latency` (0.2 s) per call, `--concurrency` (64) calls in flight, no
   cache; once in process, once on a Dask `LocalCluster` of two workers (clock started once
   they are warm, as `dagtui run` does). Prints per run the wall time over the latency bound
   (calls x latency / concurrency: 1.00x would be a judge that costs no CPU) and the CPU ms
   per call (in process: this process; Dask: the client plus the workers), then the ratios.

       .venv/bin/python tests/benchmarks/bench_scale.py [--cases 10000] [--latency 0.2]

2. Memory (`--memory`): `dagtui run --json` as a whole command (a fresh process each) over
   generated JSONL datasets of each `--sizes` count (default 1,000 and 100,000 meeting
   summaries); prints the peak RSS of each and the ratio of the largest to the smallest
   (the goal: within 1.5x, i.e. memory flat as the dataset grows). The judge
   (`--memory-judge`) is by default `labels`, in process (each node answered from the case's
   own labels: no litellm, no HTTP), so 100,000 cases take a minute or two and the figure is
   dagtui's own memory; `stub` is litellm against the instant loopback stub (the judge CPU
   makes 100,000 cases take most of an hour).

       .venv/bin/python tests/benchmarks/bench_scale.py --memory [--sizes 1000,100000]

Both need `dagtui[dask]` for the Dask half; the machine is shared, so the load is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))
from bench_engine import StubProcess, cases  # noqa: E402

from dagtui.graph.loader import load_file  # noqa: E402
from dagtui.judges import LiteLLMJudge  # noqa: E402
from dagtui.run.batch import evaluate_cases  # noqa: E402
from dagtui.run.engine import Engine  # noqa: E402

GRAPH = ROOT / "graphs" / "meeting_summary.toml"


def _engine(base_url: str, concurrency: int) -> Engine:
    judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=base_url, api_key="test",
                         concurrency=concurrency, retries=0)
    return Engine(load_file(GRAPH).graph, judge)


def in_process(base_url: str, n: int, concurrency: int) -> tuple[int, float, float]:
    """(calls, wall, CPU seconds) of one in-process batch."""
    engine = _engine(base_url, concurrency)
    asyncio.run(engine.judge.warm_up())
    cpu = time.process_time()
    report = asyncio.run(evaluate_cases(engine, cases(n, "p"), concurrency=concurrency))
    return report.calls, report.wall_time, time.process_time() - cpu


def on_dask(base_url: str, n: int, concurrency: int, workers: int) -> tuple[int, float, float]:
    """(calls, wall, CPU seconds of the client and every worker) of one Dask batch."""
    from dagtui.run.cluster import Batch, Cluster

    engine = _engine(base_url, concurrency)
    with Cluster(workers) as cluster:
        cluster.connect()
        cpu = time.process_time()
        batch = Batch(engine, cases(n, "d"), cluster, concurrency)
        results = batch.run(None)
        wall = time.perf_counter() - batch.started
        client_cpu = time.process_time() - cpu
    return sum(r.calls for r in results), wall, client_cpu + batch.cpu


def throughput(args: argparse.Namespace) -> None:
    stub = StubProcess("--latency", str(args.latency))
    print(f"{args.cases} cases, stub latency {args.latency:g} s, concurrency "
          f"{args.concurrency}, {os.cpu_count()} cores")
    rows = {}
    for label, run in (("in process", lambda: in_process(stub.base_url, args.cases,
                                                          args.concurrency)),
                       (f"{args.workers} Dask workers",
                        lambda: on_dask(stub.base_url, args.cases, args.concurrency,
                                        args.workers))):
        load = os.getloadavg()[0]
        calls, wall, cpu = run()
        bound = calls * args.latency / args.concurrency
        rows[label] = (wall / bound, cpu / calls * 1000)
        print(f"  {label:>16}: {calls} calls, wall {wall:7.2f} s = {wall / bound:5.2f}x bound "
              f"({bound:.2f} s), CPU {cpu / calls * 1000:5.2f} ms/call, {calls / wall:6.1f} "
              f"calls/s | load {load:.1f}")
    (a, ca), (b, cb) = rows.values()
    print(f"  ratio in process / Dask: wall {a / b:.2f}x, CPU per call {ca / cb:.2f}x")
    print("stub:", stub.close())


def _dataset(path: Path, n: int) -> None:
    lines = (ROOT / "graphs" / "meeting_summary.cases.jsonl").read_text().splitlines()
    with path.open("w") as out:
        for i in range(n):
            case = json.loads(lines[i % len(lines)])
            case["name"] = f"c{i}"
            out.write(json.dumps(case) + "\n")


def _peak_rss(argv: list[str]) -> tuple[int, float, int]:
    """(peak RSS in KiB, wall, exit code) of a command run in a fresh child."""
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
             "time.perf_counter() - t, rc)")
    out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), float(out[1]), int(out[2])


def memory(args: argparse.Namespace) -> None:
    stub = StubProcess("--latency", "0") if args.memory_judge == "stub" else None
    judge = ["--model", "openai/gpt-4.1-mini", "--api-base", stub.base_url] if stub else [
        "--model", "labels"]
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"peak RSS of `dagtui run --json` ({args.memory_judge} judge, concurrency "
          f"{args.concurrency}, no cache)")
    peaks = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            data = Path(tmp) / f"{n}.jsonl"
            _dataset(data, n)
            rss, wall, rc = _peak_rss([
                sys.executable, "-m", "dagtui", "run", str(GRAPH), "--cases", str(data),
                *judge, "--no-cache", "-q", "--concurrency", str(args.concurrency), "--json",
                str(Path(tmp) / f"{n}.json")])
            peaks[n] = rss
            print(f"  {n:7d} cases: peak RSS {rss / 1024:7.1f} MiB, wall {wall:7.1f} s, "
                  f"exit {rc} | load {os.getloadavg()[0]:.1f}", flush=True)
    small, large = min(sizes), max(sizes)
    print(f"  ratio {large} / {small} cases: {peaks[large] / peaks[small]:.2f}x "
          "(goal: within 1.5x)")
    if stub is not None:
        print("stub:", stub.close())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory", action="store_true", help="peak RSS against dataset size")
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--memory-judge", choices=("labels", "stub"), default="labels",
                        help="--memory: the in-process labels judge, or litellm on the stub")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "test")
    if args.memory:
        memory(args)
    else:
        throughput(args)


if __name__ == "__main__":
    main()

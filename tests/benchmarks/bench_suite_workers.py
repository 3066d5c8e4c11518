"""Suite runs in process vs `--workers N`: wall time and calls, through `dagtui run`.

The example span suite (without its `max_calls`, so both LLM rules go to worker pools;
budgeted rules always run in process) over its 50 spans repeated `--copies` times, against
the loopback stub in its own process at `--latency` seconds per call, concurrency 32, no
cache. Prints, per worker count, the wall time the user waits (process start of litellm or
of the pools included), the suite's own wall time, the calls and whether every (rule, case)
outcome equals the in-process run's.

    .venv/bin/python tests/benchmarks/bench_suite_workers.py [--copies 8] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))
from bench_engine import StubProcess  # noqa: E402

from dagtui.cli import main as dagtui_main  # noqa: E402


def make_suite(folder: Path, copies: int) -> tuple[Path, Path]:
    src = ROOT / "graphs" / "suites"
    for name in ("correctness.toml", "deep_analysis.toml"):
        shutil.copy(src / name, folder / name)
    text = (src / "spans.toml").read_text()
    suite = folder / "spans.toml"
    suite.write_text("\n".join(line for line in text.splitlines()
                               if not line.startswith(("max_calls", "cases ="))) + "\n")
    lines = (src / "spans.cases.jsonl").read_text().splitlines()
    cases = folder / "cases.jsonl"
    with cases.open("w") as out:
        for copy in range(copies):
            for line in lines:
                case = json.loads(line)
                case["name"] = f"{case['name']}-{copy}"
                out.write(json.dumps(case) + "\n")
    return suite, cases


def run(suite: Path, cases: Path, base_url: str, workers: str, out: Path) -> dict:
    report = out / f"w{workers}.json"
    start = time.perf_counter()
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet), \
            contextlib.redirect_stderr(quiet):  # the summary tables: the figures are below
        rc = dagtui_main(["run", str(suite), "--cases", str(cases), "--api-base", base_url,
                          "--model", "openai/gpt-4.1-mini", "--no-cache", "-q",
                          "--concurrency", "32", "--workers", workers, "--json", str(report)])
    wall = time.perf_counter() - start
    data = json.loads(report.read_text())
    outcomes = [(r["rule"], [(c["case"], c["state"], c.get("score")) for c in r["cases"]])
                for r in data["rules"]]
    return {"rc": rc, "wall": wall, "suite_wall": data["totals"]["wall_time"],
            "calls": data["totals"]["calls"], "outcomes": outcomes}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workers", default="1,2,1,2",
                        help="worker counts to run in turn (the first pays litellm's import)")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "test")
    os.environ["CI"] = "1"
    stub = StubProcess("--latency", str(args.latency))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite, cases = make_suite(folder, args.copies)
        print(f"{50 * args.copies} cases, stub latency {args.latency:g} s, concurrency 32, "
              f"{os.cpu_count()} cores")
        first = None
        for workers in args.workers.split(","):
            got = run(suite, cases, stub.base_url, workers, folder)
            first = first or got
            same = got["outcomes"] == first["outcomes"]
            print(f"  workers={workers:>4}: wall {got['wall']:6.2f} s (suite {got['suite_wall']:6.2f} s), "
                  f"{got['calls']} calls, exit {got['rc']}, outcomes same as first: {same}")
    print("stub:", stub.close())


if __name__ == "__main__":
    main()

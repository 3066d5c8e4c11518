"""`dagtui fmt --check` beside `dagtui validate` on a 1,000-node graph (run by hand; prints
figures, asserts nothing).

    .venv/bin/python tests/benchmarks/bench_fmt.py            # 5 interleaved rounds
    .venv/bin/python tests/benchmarks/bench_fmt.py --runs 9 --nodes 1000

The graph is the validate benchmark's generated one (tests/benchmarks/bench_validate.py),
written twice: as generated (fmt would reformat it) and already formatted (the CI case:
`fmt --check` finds nothing to do). Each round runs, as separate processes, `fmt --check`
on both and `validate` on the formatted one; medians, spread and the ratio to `validate`
are printed. Then the same in process (CPU, no start-up): `format_text` through the direct
reader (`dagtui.graph.tomlio.fastfmt`) and through tomlkit, the position scan
(`dagtui.graph.positions.locate`) and `check_text`. Bytecode is written (PYTHONDONTWRITEBYTECODE
unset), as in an installed dagtui.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_validate import generate  # noqa: E402

from dagtui.graph.positions import locate  # noqa: E402
from dagtui.graph.tomlio import fmt as fmt_module  # noqa: E402
from dagtui.graph.tomlio import format_text  # noqa: E402
from dagtui.graph.validate import check_text  # noqa: E402


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, capture_output=True)
    return time.perf_counter() - start


def cpu(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=1000)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    raw = generate(args.nodes)
    formatted = format_text(raw)
    with tempfile.TemporaryDirectory() as tmp:
        messy, tidy = Path(tmp) / "messy.toml", Path(tmp) / "tidy.toml"
        messy.write_text(raw)
        tidy.write_text(formatted)
        dagtui = [sys.executable, "-m", "dagtui"]
        cmds = {"fmt --check (formatted)": dagtui + ["fmt", "--check", str(tidy)],
                "fmt --check (to reformat)": dagtui + ["fmt", "--check", str(messy)],
                "validate": dagtui + ["validate", str(tidy)]}
        for cmd in cmds.values():  # bytecode written, caches warm
            timed(cmd, env)
        figures: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(args.runs):
            for name, cmd in cmds.items():
                figures[name].append(timed(cmd, env))
    peer = statistics.median(figures["validate"])
    print(f"{args.nodes}-node graph ({raw.count(chr(10))} lines), whole process, "
          f"{args.runs} interleaved rounds (median, spread)")
    for name, values in figures.items():
        med = statistics.median(values)
        print(f"  {name:26} {med:6.3f} s  ({min(values):.3f}-{max(values):.3f})  "
              f"{med / peer:5.2f}x validate")

    def through_tomlkit(text: str) -> str:
        original = fmt_module.flatten
        fmt_module.flatten = lambda *a, **k: None
        try:
            return format_text(text)
        finally:
            fmt_module.flatten = original

    runs = max(3, args.runs)
    inproc = {
        "format_text, formatted": lambda: format_text(formatted),
        "format_text, to reformat": lambda: format_text(raw),
        "format_text via tomlkit, formatted": lambda: through_tomlkit(formatted),
        "positions.locate": lambda: locate(formatted),
        "check_text (validate)": lambda: check_text(formatted),
    }
    results = {name: cpu(fn, runs) for name, fn in inproc.items()}
    base = results["check_text (validate)"]
    print(f"in process, CPU, median of {runs}")
    for name, value in results.items():
        print(f"  {name:36} {value * 1000:7.1f} ms  {value / base:5.2f}x check_text")


if __name__ == "__main__":
    main()

"""`dagtui test` streams its cases as `run` does: memory does not grow with the dataset.

The meeting-summary graph's labelled cases, repeated to 1,000 and to 20,000 (unique names,
a few failing), each tested by `dagtui test` in a child of a fresh interpreter that reports
its children's peak RSS (`resource.getrusage(RUSAGE_CHILDREN)`). The peak at 20,000 must be
within 1.5x the peak at 1,000 (it was 7x when every case and result was held), and the
output must still count and show every case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MEETING = ROOT / "graphs" / "meeting_summary.toml"

WRAPPER = """
import resource, subprocess, sys
out = subprocess.run([sys.executable, "-m", "dagtui", "test", *sys.argv[1:]],
                     capture_output=True, text=True)
sys.stdout.write(out.stdout)
print("PEAK_KIB", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _dataset(path: Path, n: int, failing_every: int) -> Path:
    shipped = [json.loads(line) for line in
               (ROOT / "graphs" / "meeting_summary.cases.jsonl").read_text().splitlines()]
    with path.open("w") as fh:
        for i in range(n):
            case = dict(shipped[i % len(shipped)], name=f"case {i}")
            if i % failing_every == 0:
                case["expected_score"] = 0.5  # no path scores 0.5: a labelled failure
            fh.write(json.dumps(case) + "\n")
    return path


def _peak(tmp_path: Path, n: int) -> tuple[int, str]:
    cases = _dataset(tmp_path / f"cases{n}.jsonl", n, failing_every=500)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", WRAPPER, str(MEETING), "--cases", str(cases)],
                         capture_output=True, text=True, env=env, timeout=600)
    lines = out.stdout.splitlines()
    assert lines and lines[-1].startswith("PEAK_KIB "), out.stdout + out.stderr
    return int(lines[-1].split()[1]), out.stdout


@pytest.mark.slow
def test_memory_of_dagtui_test_is_flat_from_1k_to_20k_cases(tmp_path: Path) -> None:
    small, small_out = _peak(tmp_path, 1_000)
    large, large_out = _peak(tmp_path, 20_000)
    assert "1000 cases, 998 passed, 2 failed" in small_out
    assert "20000 cases, 19960 passed, 40 failed" in large_out
    assert large_out.count("  FAIL ") == 40  # every failure shown, after the counts
    assert large_out.index("20000 cases") < large_out.index("  FAIL ")
    assert large <= 1.5 * small, f"peak RSS {small} KiB at 1k, {large} KiB at 20k cases"

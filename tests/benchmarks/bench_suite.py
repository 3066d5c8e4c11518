"""Scheduler overhead of a suite run: gating, filters, sampling and budgets with a fake
runner (no judge), so the figure is dagtui's own cost per (rule, case) pair.

    .venv/bin/python tests/benchmarks/bench_suite.py
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from dagtui.suite.gating import RuleOutcome, run_suite
from dagtui.suite.model import FilterCond, Rule, Sample, Suite


class Instant:
    def worst_case_calls(self, rule: Rule) -> int:
        return 0 if rule.check is not None else 3

    async def run(self, rule: Rule, case: Any) -> RuleOutcome:
        return RuleOutcome(score=float(hash((rule.id, case["name"])) % 3 > 0), calls=1)


def main() -> None:
    suite = Suite(rules={r.id: r for r in [
        Rule("has_output", check={}), Rule("is_english", check={}),
        Rule("correctness", graph="c.toml", depends_on=["has_output", "is_english"],
             filter=[FilterCond("metadata.kind", "in", ["chat", "qa"])]),
        Rule("deep", graph="d.toml", depends_on=["correctness"], sample=Sample(0.5, 7),
             max_calls=20_000),
        Rule("tone", graph="t.toml", depends_on=["correctness"]),
    ]})
    for n in (1_000, 10_000, 50_000):
        cases = [{"name": f"span-{i}", "metadata": {"kind": ("chat", "qa", "tool")[i % 3]}}
                 for i in range(n)]
        t = time.perf_counter()
        result = asyncio.run(run_suite(suite, cases, Instant(), concurrency=64))
        dt = time.perf_counter() - t
        pairs = n * len(suite.rules)
        print(f"{n:>6} cases x {len(suite.rules)} rules: {dt:6.2f}s "
              f"({1e6 * dt / pairs:5.1f} µs per pair), {result.calls} calls")


if __name__ == "__main__":
    main()

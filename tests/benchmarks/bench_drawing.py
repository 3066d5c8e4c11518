"""How long the box drawing takes (`dagtui.graph.dagdraw` via the editor's `dagtui.graph.layout.draw`
and the suite's `draw_suite`). Run by hand: `.venv/bin/python tests/benchmarks/bench_drawing.py`.

Figures printed: the editor's picture of a 1,000-node graph (a chain of 200 five-node
stages, the editor benchmark's big graph), whole and focused on one node, and a 60-rule suite.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_editor import big_graph_text  # noqa: E402

from dagtui.graph.layout import draw  # noqa: E402
from dagtui.graph.loader import load_text  # noqa: E402
from dagtui.suite.drawing import draw_suite  # noqa: E402
from dagtui.suite.model import Rule, Suite  # noqa: E402


def best_of(n: int, fn) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(best, median) seconds of `n` runs: the machine is shared, the best is the signal."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[0], times[len(times) // 2]


def wide_suite(n: int = 60) -> Suite:
    """`n` rules in levels of ten, each depending on two rules of the level above."""
    rules = []
    for i in range(n):
        deps = [f"r{i - 10}", f"r{i - 10 + (1 if i % 10 < 9 else -1)}"] if i >= 10 else []
        rules.append(Rule(f"r{i}", label=f"Rule {i}", check={}, depends_on=deps))
    return Suite(rules={r.id: r for r in rules})


def main() -> None:
    graph = load_text(big_graph_text(200)).graph
    assert len(graph.nodes) == 1000
    suite = wide_suite()
    for name, fn in [
        ("editor, 1,000 nodes, whole graph", lambda: draw(graph)),
        ("editor, 1,000 nodes, focus task_100", lambda: draw(graph, "task_100")),
        ("suite, 60 rules, whole DAG", lambda: draw_suite(suite)),
    ]:
        best, median = best_of(5, fn)
        print(f"{name:40s} best {best * 1000:8.1f} ms   median {median * 1000:8.1f} ms")


if __name__ == "__main__":
    main()

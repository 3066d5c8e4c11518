"""How long a save and a `dagtui fmt` take (run by hand; prints figures, asserts nothing).

    .venv/bin/python tests/benchmarks/bench_tomlio.py

For graphs of 10, 100 and 1,000 nodes (comment above every node, inline verdicts) it times:
the canonical render, a comment-keeping save of a one-field edit (three-way merge:
reload the original, tomlkit parse, merge, reload to verify), and `format_text`.
The editor saves on ctrl+s, so the merge time is what a user waits for.
"""

from __future__ import annotations

import copy
import statistics
import time

from dagtui.graph.loader import load_text
from dagtui.graph.tomlio import format_text, render


def graph_text(nodes: int) -> str:
    out = ["# generated graph", "[metric]", 'name = "Bench"', "threshold = 0.5",
           'model = "gpt-4.1-mini"  # pinned', ""]
    for i in range(nodes):
        nxt = f'then = "n{i + 1}"' if i + 1 < nodes else "score = 10"
        out += [f"# node {i}: a gate", f"[nodes.n{i}]", 'type = "binary"',
                f'criteria = "Is part {i} of the answer correct?"  # narrow question',
                'params = ["actual_output"]', "verdicts = [",
                "  { verdict = false, score = 0 },  # gate", f"  {{ verdict = true, {nxt} }},",
                "]", ""]
    return "\n".join(out)


def timed(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    print(f"{'nodes':>6} {'KB':>6} {'canonical':>11} {'merge save':>11} {'fmt':>9}")
    for n in (10, 100, 1000):
        text = graph_text(n)
        graph = load_text(text).graph
        edited = copy.deepcopy(graph)
        edited.nodes[f"n{n // 2}"].criteria = "Changed?"
        runs = 5 if n < 1000 else 3
        canon = timed(lambda g=graph: render(g), runs)
        merge = timed(lambda e=edited, t=text: render(e, t), runs)
        fmt = timed(lambda t=text: format_text(t), runs)
        print(f"{n:>6} {len(text) / 1024:>6.0f} {canon:>9.1f}ms {merge:>9.1f}ms {fmt:>7.1f}ms")


if __name__ == "__main__":
    main()

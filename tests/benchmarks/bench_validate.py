"""Benchmark: how long `check_text` (load + validate + path analysis) takes on big graphs.

Run by hand: `.venv/bin/python tests/benchmarks/bench_validate.py`. It prints the median of
several runs for generated graphs of about 10, 100 and 1,000 nodes. The editor calls
`check_text` on every keystroke, so the target is 1,000 nodes in under 50 ms.

The generated graphs are realistic and valid: a task extracts evidence, binary gates decide
whether to go on (the false branch scores 0), non-binary classifiers below the gates pick a
label, and each label either scores or leads to a further classifier. Some nodes are shared:
two verdicts of one classifier lead to the same node, and the task's evidence feeds deeper
nodes directly.
"""

from __future__ import annotations

import statistics
import sys
import time
import tomllib

from dagtui.graph.loader import load_text
from dagtui.graph.validate import check_text, validate


def generate(target_nodes: int, *, seed: int = 7) -> str:
    """TOML text for a valid graph with roughly `target_nodes` nodes."""
    import random

    rng = random.Random(seed)
    lines = [
        "[metric]",
        f'name = "Generated {target_nodes}"',
        "threshold = 0.5",
        'model = "gpt-4.1-mini"',
        "",
    ]
    count = 0
    tasks: list[str] = []

    def new_id(prefix: str) -> str:
        nonlocal count
        count += 1
        return f"{prefix}_{count}"

    # one task per subtree of ~120 nodes; each task heads its own gate chain
    # (several roots would fire several leaves, so the subtrees hang off one root gate)
    budget = max(target_nodes - 2, 1)
    blocks: list[str] = []

    def classifier(depth: int, task: str, remaining: list[int]) -> str:
        nid = new_id("classify")
        remaining[0] -= 1
        labels = rng.randint(2, 4)
        verdicts = []
        shared_child: str | None = None
        for i in range(labels):
            if depth < 2 and remaining[0] > 0 and rng.random() < 0.7:
                if shared_child is not None and rng.random() < 0.3:
                    verdicts.append(f'  {{ verdict = "Label {i}", then = "{shared_child}" }},')
                    continue
                child = classifier(depth + 1, task, remaining)
                shared_child = child
                verdicts.append(f'  {{ verdict = "Label {i}", then = "{child}" }},')
            else:
                verdicts.append(f'  {{ verdict = "Label {i}", score = {rng.randint(0, 10)} }},')
        block = [
            f"[nodes.{nid}]",
            'type = "non_binary"',
            f'criteria = "Classify part {nid} of the answer into one of the labels."',
            'params = ["actual_output"]',
            "verdicts = [",
            *verdicts,
            "]",
            "",
        ]
        blocks.append("\n".join(block))
        return nid

    def gate(next_id: str) -> str:
        nid = new_id("gate")
        blocks.append("\n".join([
            f"[nodes.{nid}]",
            'type = "binary"',
            f'criteria = "Does the answer satisfy hard rule {nid}?"',
            'params = ["input", "actual_output"]',
            "verdicts = [",
            "  { verdict = false, score = 0 },",
            f'  {{ verdict = true, then = "{next_id}" }},',
            "]",
            "",
        ]))
        return nid

    root = new_id("extract")
    tasks.append(root)
    # a root classifier splits into sections; each section is gate -> classifier tree
    remaining = [budget]
    sections: list[str] = []
    while remaining[0] > 0 and len(sections) < 600:
        head = classifier(1, root, remaining)
        if remaining[0] > 0:
            head = gate(head)
            remaining[0] -= 1
        sections.append(head)
    router = new_id("route")
    verdicts = [f'  {{ verdict = "Section {i}", then = "{s}" }},' for i, s in enumerate(sections)]
    if len(verdicts) < 2:
        verdicts.append('  { verdict = "Nothing to grade", score = 0 },')
    blocks.insert(0, "\n".join([
        f"[nodes.{router}]",
        'type = "non_binary"',
        "criteria = \"Which section of the rubric applies to this answer?\"",
        "verdicts = [",
        *verdicts,
        "]",
        "",
    ]))
    blocks.insert(0, "\n".join([
        f"[nodes.{root}]",
        'type = "task"',
        'instructions = "Extract the parts of the answer the rubric talks about."',
        'params = ["actual_output"]',
        'output_label = "Answer parts"',
        f'children = ["{router}"]',
        "",
    ]))
    return "\n".join(lines + blocks)


def median_ms(fn, runs: int) -> tuple[float, object]:
    """Median wall time of `fn()` in milliseconds, and its last result."""
    times = []
    result = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), result


def main() -> int:
    print("check_text = load (TOML parse + key positions + model) + validate (semantic checks"
          " + path analysis)")
    print(f"{'nodes':>6} {'KB':>5} {'paths':>6} {'complete':>8} {'err':>4} {'warn':>4} "
          f"{'tomllib':>8} {'load':>8} {'validate':>9} {'check_text':>11}")
    for size in (10, 100, 1000):
        text = generate(size)
        runs = 15 if size < 1000 else 9
        parse_ms, _ = median_ms(lambda t=text: tomllib.loads(t), runs)
        load_ms, loaded = median_ms(lambda t=text: load_text(t, "bench.toml"), runs)
        graph = loaded.graph
        val_ms, _ = median_ms(
            lambda g=graph, r=loaded: validate(g, r.positions, file="bench.toml", raw=r.raw),
            runs,
        )
        total_ms, report = median_ms(lambda t=text: check_text(t, "bench.toml"), runs)
        paths = len(report.paths.paths) if report.paths else 0
        complete = report.paths.complete if report.paths else False
        print(f"{len(graph.nodes):>6} {len(text) / 1024:>5.0f} {paths:>6} {str(complete):>8} "
              f"{len(report.errors):>4} {len(report.warnings):>4} {parse_ms:>6.1f}ms "
              f"{load_ms:>6.1f}ms {val_ms:>7.1f}ms {total_ms:>9.1f}ms")
        for d in report.diagnostics[:5]:
            print("   ", d.format(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

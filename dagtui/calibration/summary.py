"""Agreement with the labels from a run that already happened: `dagtui run`'s summary.

No call is made: each labelled node is compared on the cases the judge's own path took to
it, and each score with its `expected_score`. That is not teacher forcing — a node the
judge's path skipped is not measured, so a wrong gate hides the nodes below it — and the
lines say so and point at `dagtui calibrate`. Kappa comes from the same `stats` module.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from ..model import BinaryNode, CheckNode, Graph, NonBinaryNode
from . import stats
from .core import TOLERANCE, normalize_label

LIST_MAX = 10


def agreement_lines(graph: Graph, cases: Sequence[Any], results: Sequence[Any]) -> list[str]:
    """Summary lines (empty when no case carries labels)."""
    by_name = {c.name: c for c in cases}
    pairs: dict[str, tuple[list[Hashable], list[Hashable]]] = {}
    for r in results:
        case = by_name.get(r.case)
        expected = (case.expected or {}) if case is not None else {}
        for step in r.steps:
            node = graph.nodes.get(step.node)
            if step.error is not None or step.node not in expected \
                    or not isinstance(node, BinaryNode | NonBinaryNode | CheckNode):
                continue
            labels, verdicts = pairs.setdefault(step.node, ([], []))
            labels.append(normalize_label(node, expected[step.node]))
            verdicts.append(step.answer)
    scored = [r for r in results if r.expected_score is not None and r.score is not None]
    if not pairs and not scored:
        return []
    out = ["", "agreement with the labels (the run's own path: nodes it skipped are not "
           "measured; `dagtui calibrate` judges every labelled node)"]
    if pairs:
        out.append("  node               cases  agree  kappa")
        for nid in graph.nodes:
            if nid in pairs:
                labels, verdicts = pairs[nid]
                kappa = stats.cohen_kappa(labels, verdicts)
                agree = stats.raw_agreement(labels, verdicts)
                out.append(f"  {nid[:18]:18} {len(labels):5d} {agree:6.0%} "
                           f"{'-' if kappa is None else f'{kappa:6.2f}':>6}")
    if scored:
        threshold = graph.metric.effective_threshold
        differ = [r for r in scored if abs(r.score - r.expected_score) > TOLERANCE]
        same_pf = sum((r.score + 1e-9 >= threshold) == (r.expected_score + 1e-9 >= threshold)
                      for r in scored)
        mae = sum(abs(r.score - r.expected_score) for r in scored) / len(scored)
        out.append(f"  score vs expected_score: {len(scored)} cases, exact "
                   f"{1 - len(differ) / len(scored):.0%}, pass/fail {same_pf / len(scored):.0%}, "
                   f"mean absolute error {mae:.3f}")
        for r in differ[:LIST_MAX]:
            out.append(f"    {r.case}: score {r.score:.2f}, expected {r.expected_score:.2f}")
        if len(differ) > LIST_MAX:
            out.append(f"    … and {len(differ) - LIST_MAX} more")
    return out


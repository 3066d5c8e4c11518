"""The `gepa` method of `dagtui align`: GEPA's reflective evolutionary search over one node's
wording, scored by teacher forcing on the train cases.

GEPA (Agrawal et al. 2025, the `gepa` package: optional extra `dagtui[align]`) keeps a pool
of candidate texts, picks one from the Pareto front of per-case scores, runs it on a small
minibatch of train cases with traces, reflects on the failures to propose a mutation, and
keeps the mutation when it does better on the minibatch (then scores it on the whole set).
One node of a decision graph is exactly its "component": the candidate is
`{"criteria": text}` (a task node: its instructions), and `GEPAAdapter.evaluate` is the
teacher-forced measurement `align` uses for every candidate
(`align_measure.AlignContext.measure`: the node's real prompt, the judge's client and cache),
each case scored by the share of its labelled decisions the judge got right. The reflection
is `align`'s own proposer (`proposer.propose`, one wording at a time, on the minibatch's
disagreements), not GEPA's default prompt, so it goes through the judge's client and cache
too.

Why not DSPy's `dspy.GEPA` or MIPROv2: they optimise a `dspy.Module` through DSPy's own LM
client and prompt adapter, so what they score is not the prompt the node sends
(docs/calibration.md, "Why there is no `--method dspy`"). GEPA's search is used here as a
candidate generator only: every text it produced is measured on train like any other
candidate (the answers are already shared or cached: no new call) and the best one, like
any winner, must prove itself on the held-out cases it never saw (valset = train here, so
held-out stays untouched).

`gepa.optimize` is synchronous: it runs in a thread, and its evaluations and proposals are
sent back to the alignment's event loop (`asyncio.run_coroutine_threadsafe`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from dagtui.calibration.align_measure import (
    AlignContext,
    AlignRefused,
    Candidate,
    Measure,
    Row,
    measure_rows,
)
from dagtui.graph.model import Graph, NodeBase

#: GEPA's minibatch of train cases per reflection (its own default is 3)
MINIBATCH = 5
COMPONENT = "criteria"


def require_gepa() -> Any:
    """The `gepa` package, or `AlignRefused` saying how to install it."""
    try:
        import gepa
    except ImportError:
        raise AlignRefused("--method gepa needs the optional extra: pip install "
                           "'dagtui[align]' (the gepa package)") from None
    return gepa


class NodeAdapter:
    """GEPA's adapter for one node (`gepa.core.adapter.GEPAAdapter`): a batch of train case
    names evaluated by teacher forcing, each case's score the share of its decisions that
    agree with the labels; the trajectories are the measured rows."""

    def __init__(self, ctx: AlignContext, loop: asyncio.AbstractEventLoop, propose: Any) -> None:
        self.ctx = ctx
        self.loop = loop
        self._propose = propose
        #: (case, node) -> the evidence the node was shown, for the proposer
        self.evidence: dict[tuple[str, str], dict[str, Any]] = {}
        self.spent = 0
        self.cached = 0

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def evaluate(self, batch: list[str], candidate: dict[str, str],
                 capture_traces: bool = False) -> Any:
        from gepa.core.adapter import EvaluationBatch

        measure, focus = self._run(self.ctx.measure(
            Candidate("gepa", "gepa", text=candidate[COMPONENT]), batch, intervals=False))
        self.evidence.update(focus.evidence)
        self.spent += measure.calls
        self.cached += measure.cache_hits
        per_case: dict[str, list[Row]] = {name: [] for name in batch}
        for row in measure.rows:
            per_case.setdefault(row.case, []).append(row)
        scores = [sum(r.agrees for r in rows) / len(rows) if rows else 0.0
                  for rows in (per_case[name] for name in batch)]
        trajectories = [per_case[name] for name in batch] if capture_traces else None
        return EvaluationBatch(outputs=[per_case[name] for name in batch], scores=scores,
                               trajectories=trajectories)

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch: Any,
                                components_to_update: list[str]
                                ) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        rows = [r for rows in eval_batch.trajectories or [] for r in rows]
        return {COMPONENT: [{"row": r} for r in rows]}

    def propose_new_texts(self, candidate: dict[str, str],
                reflective_dataset: Mapping[str, Sequence[Mapping[str, Any]]],
                components_to_update: list[str]) -> dict[str, str]:
        rows = [item["row"] for item in reflective_dataset.get(COMPONENT, [])]
        texts = self._run(self._propose(candidate[COMPONENT], rows, self.evidence))
        return {COMPONENT: texts[0] if texts else candidate[COMPONENT]}


async def gepa_texts(ctx: AlignContext, graph: Graph, node: NodeBase, train: list[str],
                     candidates: int, proposer: str | None, seed: int) -> tuple[
                         list[str], int, int]:
    """(up to `candidates` distinct wordings GEPA's search found, other than the node's own,
    best first by GEPA's train score; the calls and cache hits it spent). Its budget:
    `candidates` + 1 full passes over train in metric calls (one per case evaluated)."""
    gepa = require_gepa()
    from dagtui.calibration.proposer import propose, text_field

    current = str(getattr(node, text_field(node)) or "")

    async def one(text: str, rows: list[Row], evidence: dict[tuple[str, str], Any]
                  ) -> list[str]:
        shown = node.replace(**{text_field(node): text})
        baseline = Measure(measure_rows(rows, ctx.measured, seed, intervals=False).figures, {},
                           rows)
        texts, spent = await propose(ctx.judge, graph, shown, baseline, ctx.cases, evidence,
                                     1, proposer)
        adapter.spent += spent.calls
        adapter.cached += spent.cache_hits
        return texts

    adapter = NodeAdapter(ctx, asyncio.get_running_loop(), one)
    result = await asyncio.to_thread(
        gepa.optimize, seed_candidate={COMPONENT: current}, trainset=list(train),
        valset=list(train), adapter=adapter,
        reflection_minibatch_size=min(MINIBATCH, len(train)),
        max_metric_calls=len(train) * (candidates + 1), seed=seed,
        display_progress_bar=False, raise_on_exception=True, logger=_Quiet())
    ranked = sorted(range(len(result.candidates)),
                    key=lambda i: -result.val_aggregate_scores[i])
    texts: list[str] = []
    for i in ranked:
        text = result.candidates[i][COMPONENT].strip()
        if text and text != current.strip() and text not in texts:
            texts.append(text)
    return texts[:candidates], adapter.spent, adapter.cached


class _Quiet:
    """GEPA's logger, silenced: the alignment's report says what was found."""

    def log(self, message: str) -> None:
        pass

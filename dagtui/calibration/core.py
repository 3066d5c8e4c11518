"""`dagtui.calibrate(graph, cases, judge=..., samples=N)`: does each node's judge agree with
the human labels, and with itself?

Three passes (and the optional probes) over the labelled cases, all through the one `Engine`:

1. Teacher forcing (`forcing.ForcingJudge`): the labels choose the path, the judge is asked
   at every node the labels reach, so a wrong gate high in the graph does not hide the quality
   of the nodes below it. Check nodes with a label follow the label too (an override). Per
   judgement node: cases, raw agreement, Cohen's kappa with a seeded bootstrap 95 % interval,
   the confusion matrix (label x verdict), the disagreeing cases. Per task node with item
   labels: recall (items found / items labelled) and the cases that dropped items; plain-text
   labels are kept beside the judge's evidence. Sample 0 is what agreement is measured on.
2. Free run: the judge's own path at sample 0 (its answers shared with pass 1 wherever the
   prompt is identical: no call is made twice). Score against `expected_score` (or, without
   one, the score the labels' path gives): exact agreement, pass/fail agreement, mean absolute
   error; for each case whose score differs, blame: the first node on the human path where the
   judge diverged (a verdict other than the label, a task that dropped labelled items, a G-Eval
   score other than its label, a check whose code disagrees with its label). Per node: how many
   outcomes it flipped — the amplification a gate high in the graph causes, measured.
3. Samples 1..N-1 (`samples=N`), teacher-forced like pass 1: per node the flip rate (share of
   cases whose samples disagree), the mean majority margin, Fleiss' kappa across samples, and
   the close calls (samples split with a margin under one half). The sample index is part of
   the cache key, so samples are distinct calls; at temperature 0 they measure only the
   provider's nondeterminism, and the result says so.

4. Bias probes (`probes=["order", "padding"]`, `probes.py`): each labelled judgement node
   asked again, teacher-forced at sample 0, with its options reordered or its case material
   padded by neutral filler; per node the share of verdicts that flipped and agreement with
   the labels normal -> probed.

Samples 1..N-1 run after sample 0 and the free run (which run together): the first time a
question is asked it is sample 0's, whatever the concurrency. The probes run last.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dagtui.calibration import annotators, fingerprint, stats
from dagtui.calibration.forcing import ForcingJudge, ItemAnswers, Observation, SharedAnswers
from dagtui.calibration.items import TaskLabelError, split_items, task_label
from dagtui.graph import mapping
from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.model import Graph, MapNode, NodeBase
from dagtui.graph.unsure import CANNOT_TELL
from dagtui.judges.base import Judge
from dagtui.judges.labels import LabelsJudge
from dagtui.kinds import kind_of
from dagtui.kinds.kind import verdict_values
from dagtui.labels.check import (
    LabelProblem,
    check_cases,
    ignored_summary,
    is_unsure,
    normalize_label,
    warn_ignored,
)
from dagtui.labels.map_labels import NO_LABEL, item_label, person_unsure
from dagtui.report.trace import RunResult
from dagtui.run.cases import Case
from dagtui.run.engine import Engine
from dagtui.text import verdict_text as show

TOLERANCE = 1e-6
#: a split whose majority margin is below this is a close call
CLOSE_MARGIN = 0.5


# --------------------------------------------------------------------------- results


@dataclass
class NodeCalibration:
    """Everything calibration measured about one node."""

    node: str
    type: str
    #: verdict classes in the graph's order (judgement nodes)
    classes: list[Any] = field(default_factory=list)
    #: cases the labels take to this node (forced run, sample 0)
    reached: int = 0
    #: reached and labelled, with a usable verdict: what agreement is measured on
    cases: int = 0
    agreement: float | None = None
    kappa: float | None = None
    kappa_ci: tuple[float, float] | None = None
    confusion: dict[Any, dict[Any, int]] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    unlabelled: list[str] = field(default_factory=list)
    #: cases labelled "unsure" here (`dagtui.labels.check.UNSURE`): kept out of kappa
    unsure: int = 0
    # task nodes
    items_labelled: int = 0
    items_found: int = 0
    dropped: list[dict[str, Any]] = field(default_factory=list)
    texts: list[dict[str, Any]] = field(default_factory=list)
    # geval leaves
    mae: float | None = None
    # free run
    flipped: int = 0
    flipped_pass_fail: int = 0
    # samples
    samples: int = 1
    sampled_cases: int = 0
    flip_rate: float | None = None
    margin: float | None = None
    fleiss: float | None = None
    close_calls: list[dict[str, Any]] = field(default_factory=list)
    # a node declaring `unsure` (`dagtui.graph.unsure`): the judge's "cannot tell" answers
    # (a map node's: items) on the cases measured, and the cases labelled "unsure" where the
    # judge's own run could not tell either (judge and person unsure together)
    judge_unsure: int = 0
    unsure_both: int = 0
    # map nodes: agreement and kappa above are over items; these compare each case's
    # aggregate (the verdict, or a fraction leaf's score) with the one its labels give
    item_cases: int = 0
    case_agreement: float | None = None

    @property
    def recall(self) -> float | None:
        return self.items_found / self.items_labelled if self.items_labelled else None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["classes"] = [show(c) for c in self.classes]
        out["confusion"] = {show(k): {show(v): n for v, n in row.items()}
                            for k, row in self.confusion.items()}
        out["kappa_ci"] = list(self.kappa_ci) if self.kappa_ci else None
        out["recall"] = self.recall
        return out


@dataclass
class CaseOutcome:
    """One case end to end: the human's score and path against the judge's."""

    case: str
    human_score: float | None
    judge_score: float | None
    human_pass: bool | None
    judge_pass: bool | None
    human_path: str
    judge_path: str
    error: str | None = None
    blame: str | None = None
    why: str = ""

    @property
    def differs(self) -> bool:
        if self.human_score is None:
            return False
        return self.judge_score is None or abs(self.judge_score - self.human_score) > TOLERANCE


@dataclass
class Calibration:
    """A calibration run's result (JSON via `to_dict`; text and Markdown in `report`)."""

    graph: str
    graph_path: str | None
    judge: dict[str, Any]
    threshold: float
    samples: int
    temperature: float | None
    cases: int
    nodes: dict[str, NodeCalibration] = field(default_factory=dict)
    outcomes: list[CaseOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    label_problems: list[str] = field(default_factory=list)
    #: the bad labels `lenient` dropped before the run (`dagtui.labels.check`), one line each
    ignored_labels: list[str] = field(default_factory=list)
    calls: int = 0
    cache_hits: int = 0
    cost: float | None = None
    wall_time: float = 0.0
    #: the cases file (the editor's calibration view opens the debugger on it)
    cases_file: str | None = None
    #: why the judge stopped taking calls (`dagtui.judges.health`), and whether it never
    #: worked at all (then nothing was measured)
    halt: str | None = None
    judge_unusable: bool = False
    #: what was measured, for staleness (`fingerprint.provenance`); None when not known
    provenance: dict[str, Any] | None = None
    #: the bias probes' results (`probes.Probes`), when `--probes` asked for them
    probes: Any = None
    #: whose labels the judge is compared with: an annotator's name (`--annotator`), or
    #: None for the adjudicated `expected`
    annotator: str | None = None
    #: per judgement node, how far each pair of annotators agree (`annotators.PairAgreement`)
    human_agreement: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def scored(self) -> list[CaseOutcome]:
        return [o for o in self.outcomes if o.human_score is not None]

    @property
    def exact(self) -> float | None:
        scored = self.scored
        return sum(not o.differs for o in scored) / len(scored) if scored else None

    @property
    def pass_fail(self) -> float | None:
        scored = [o for o in self.scored if o.judge_pass is not None]
        if not scored:
            return None
        return sum(o.judge_pass == o.human_pass for o in scored) / len(scored)

    def outcome_counts(self) -> dict[str, int]:
        """End to end, pass/fail of the judge's own path against the people's (cases with
        both): how many people passed and how many of those the judge passed, how many they
        failed and how many of those the judge failed (sensitivity and specificity, the basis
        of the corrected pass rate, `correction`)."""
        both = [o for o in self.scored if o.judge_pass is not None]
        passed = [o for o in both if o.human_pass]
        failed = [o for o in both if not o.human_pass]
        return {"human_pass": len(passed), "judge_pass": sum(bool(o.judge_pass) for o in passed),
                "human_fail": len(failed), "judge_fail": sum(not o.judge_pass for o in failed)}

    @property
    def mae(self) -> float | None:
        errors = [abs(o.judge_score - o.human_score) for o in self.scored
                  if o.judge_score is not None and o.human_score is not None]
        return sum(errors) / len(errors) if errors else None

    def below(self, min_kappa: float) -> list[str]:
        """Judgement nodes whose kappa is under `min_kappa` (nodes with no cases excluded)."""
        return [n.node for n in self.nodes.values()
                if n.kappa is not None and n.kappa < min_kappa]

    def to_dict(self) -> dict[str, Any]:
        return {
            "graph": self.graph, "graph_path": self.graph_path, "judge": self.judge,
            "threshold": self.threshold, "samples": self.samples,
            "temperature": self.temperature, "cases": self.cases,
            "cases_file": self.cases_file, "halt": self.halt,
            "nodes": {k: v.to_dict() for k, v in self.nodes.items()},
            "end_to_end": {"scored": len(self.scored), "exact": self.exact,
                           "pass_fail": self.pass_fail, "mae": self.mae,
                           **_rates(self.outcome_counts())},
            "outcomes": [asdict(o) | {"differs": o.differs} for o in self.outcomes],
            "notes": self.notes, "label_problems": self.label_problems,
            "ignored_labels": self.ignored_labels,
            "calls": self.calls, "cache_hits": self.cache_hits, "cost": self.cost,
            "wall_time": self.wall_time, "provenance": self.provenance,
            # only when probes ran: a calibration without them is written as before
            **({"probes": self.probes.to_dict()} if self.probes is not None else {}),
            "annotator": self.annotator,
            "human_agreement": {nid: [p.to_dict() for p in pairs]
                                for nid, pairs in self.human_agreement.items()},
        }


def _rates(counts: dict[str, int]) -> dict[str, Any]:
    """The outcome counts with the sensitivity and specificity they give (None: no case)."""
    return {"outcomes": counts,
            "sensitivity": counts["judge_pass"] / counts["human_pass"]
            if counts["human_pass"] else None,
            "specificity": counts["judge_fail"] / counts["human_fail"]
            if counts["human_fail"] else None}


# --------------------------------------------------------------------------- running


def checked_of(graph: Any) -> CheckedGraph:
    """`graph` as a check to trust: a CheckedGraph as given, a loaded graph's own
    (`dagtui.load` checked it), a path loaded and checked here, a bare Graph checked once
    (when the first engine is built)."""
    if isinstance(graph, str | os.PathLike):  # as `dagtui.load` reads it: errors raise
        graph = CheckedGraph.read(graph)
        graph.require()
    if isinstance(graph, CheckedGraph):
        return graph
    checked = getattr(graph, "checked", None)
    return checked if isinstance(checked, CheckedGraph) else CheckedGraph.of_graph(graph)


def check_labels(graph: Graph, case: Case) -> dict[str, Any]:
    """Overrides that make labelled check nodes follow their label (the labels' path); an
    "unsure" label overrides nothing (the code's own verdict is followed)."""
    expected = case.expected or {}
    return {nid: normalize_label(node, expected[nid]) for nid, node in graph.nodes.items()
            if kind_of(node).in_code and nid in expected
            and not is_unsure(node, expected[nid])}


async def run_bounded(jobs: Iterable[Callable[[], Awaitable[RunResult]]], limit: int,
                      done: Callable[[], None] | None = None) -> list[RunResult]:
    """Run the jobs at most `limit` at a time, results in order (cases of several samples in
    one pool: `batch.run_cases` takes one engine and sample 0 only); `done()` after each."""
    sem = asyncio.Semaphore(max(1, limit))

    async def one(job: Callable[[], Awaitable[RunResult]]) -> RunResult:
        async with sem:
            result = await job()
        if done is not None:
            done()
        return result

    return list(await asyncio.gather(*(one(j) for j in jobs)))


async def a_calibrate(graph: Any, cases: Any = None, *, judge: str | Judge | None = None,
                      samples: int = 1, concurrency: int = 16, seed: int = stats.SEED,
                      python: Any = None, allow_python: bool = False,
                      python_path: Iterable[str | os.PathLike[str]] = (),
                      progress: Callable[[int, int], None] | None = None,
                      lenient: bool = False, probes: Sequence[str] = (),
                      annotator: str | None = None, **judge_opts: Any) -> Calibration:
    """Calibrate `graph`'s judge against the labelled `cases` (see the module docstring).

    `judge`: a litellm model string, or any Judge; `judge_opts` go to the litellm judge
    (api_base, cache, temperature, timeout, retries). `cases`: a list, a file, or None for
    the graph's `[metric].cases`. Python check nodes run only with `allow_python=True` (or
    `python`, a `dagtui.graph.checks.PythonConsent`; a graph from `dagtui.load` keeps its own), as in
    `dagtui.evaluate`. `progress(done, total)` is called as each case run (per pass and
    sample) ends. Bad labels (`dagtui.labels.check`) raise `LabelError` before any call;
    `lenient=True` drops them instead, with a `LabelWarning` each, listed in
    `ignored_labels`. `probes` (`order`, `padding`) re-asks every labelled judgement node
    with its options reordered or its case material padded (`dagtui.calibration.probes`),
    after everything else; the results are in `result.probes`. `annotator`: compare the
    judge with that person's labels (a case's `annotations`) instead of the adjudicated
    `expected`; either way `result.human_agreement` holds each pair of annotators' agreement
    (`dagtui.calibration.annotators`), and "unsure" labels are left out of every figure."""
    from dagtui.calibration import probes as bias
    from dagtui.judges.factory import make_judge
    from dagtui.run.batch import preflight_all
    from dagtui.run.cases import cases_for as _cases

    if samples < 1:
        raise ValueError("samples must be >= 1")
    probes = bias.parse_probes(probes if isinstance(probes, str) else ",".join(probes)) \
        if probes else []
    if python is None:
        from dagtui.graph.checks import PythonConsent

        dirs = tuple(python_path)
        python = PythonConsent.from_env(allow_python, dirs)
        if hasattr(graph, "python") and not allow_python and not dirs:
            python = graph.python  # a LoadedGraph: the consent it was loaded with
    checked = checked_of(graph)
    # validated at most once, when the first engine is built: the others trust that check
    g = checked.graph if checked.graph is not None else checked.require()
    checked_cases, ignored = check_cases(g, _cases(cases, g), lenient=lenient)
    warn_ignored(ignored)
    pairs = annotators.human_agreement(g, checked_cases, seed=seed)
    labelled = annotators.compared(checked_cases, annotator)
    unsure = annotators.unsure_cases(g, labelled)
    batch = [annotators.certain(g, c) for c in labelled]
    inner = make_judge(judge, g, concurrency=concurrency, **judge_opts)
    shared = SharedAnswers(inner)
    forcing = ForcingJudge(shared)
    free_engine = Engine(checked, shared, python=python)
    forced_engine = Engine(checked, forcing, python=python)
    human_engine = Engine(checked, LabelsJudge(), python=python)
    preflight_all(free_engine, batch)
    warm_up = getattr(inner, "warm_up", None)
    if warm_up is not None:
        await warm_up()
    human = [await human_engine.run(c, overrides=check_labels(g, c), check=False) for c in batch]
    start = time.perf_counter()

    def forced(case: Case, sample: int) -> Callable[[], Awaitable[RunResult]]:
        return lambda: forced_engine.run(case, sample=sample, overrides=check_labels(g, case),
                                         check=False)

    def free(case: Case) -> Callable[[], Awaitable[RunResult]]:
        return lambda: free_engine.run(case, check=False)

    variants = bias.variants(g, probes)
    probing = [(v, ForcingJudge(bias.ProbeJudge(shared, v))) for v in variants]
    probe_engines = [Engine(checked, judge, python=python) for _, judge in probing]

    def probe(engine: Engine, case: Case) -> Callable[[], Awaitable[RunResult]]:
        return lambda: engine.run(case, overrides=check_labels(g, case), check=False)

    total, finished = len(batch) * (samples + 1 + len(variants)), 0

    def tick() -> None:
        nonlocal finished
        finished += 1
        if progress is not None:
            progress(finished, total)

    # guarded like a batch run: the first uncached call probes alone, a judge that cannot
    # work (or goes down) halts and the calls still to come end at once
    with inner.guarded():
        first = await run_bounded([forced(c, 0) for c in batch] + [free(c) for c in batch],
                               concurrency, tick)
        forced0, free_results = first[:len(batch)], first[len(batch):]
        later = await run_bounded([forced(c, s) for s in range(1, samples) for c in batch],
                               concurrency, tick)
        # after sample 0: the requests a probe leaves as they were are answered from it
        probe_runs = await run_bounded([probe(e, c) for e in probe_engines for c in batch],
                                    concurrency, tick)
    wall = time.perf_counter() - start
    halt = getattr(inner, "halt", None)
    if not isinstance(judge, Judge):  # made here: closed here (a caller's judge stays open)
        await inner.aclose()
    temperature = getattr(inner, "temperature", None)
    result = analyse(g, batch, human, forced0, free_results, forcing.observed,
                     samples=samples, seed=seed, unsure=unsure)
    result.judge = inner.describe()
    result.temperature = temperature
    result.annotator, result.human_agreement = annotator, pairs
    # the labels as written (an "unsure" among them): relabelling one makes the node stale
    result.provenance = fingerprint.provenance(g, labelled, fingerprint.JudgeSetting.of(
        {**result.judge, "temperature": temperature}))
    result.wall_time = wall
    if halt is not None:
        result.halt, result.judge_unusable = halt.line, bool(halt.preflight)
        result.notes.append(f"the judge halted: {halt.line}")
    note_ignored(result, ignored)
    result.cases_file = next((str(Path(c.file).resolve()) for c in batch if c.file), None)
    if probes:
        result.probes = bias.analyse(g, batch, probes, forcing.observed,
                                     [(v, judge.observed) for v, judge in probing])
        result.probes.calls = sum(r.calls for r in probe_runs)
        result.probes.cache_hits = sum(r.cache_hits for r in probe_runs)
    everything = forced0 + free_results + later + probe_runs
    result.calls = sum(r.calls for r in everything)
    result.cache_hits = sum(r.cache_hits for r in everything)
    costs = [r.cost for r in everything if r.cost is not None]
    result.cost = sum(costs) if costs else None
    if samples > 1 and temperature == 0:
        result.notes.append(f"{samples} samples at temperature 0: only the provider's "
                            "nondeterminism is measured (use --temperature to measure the "
                            "judge's own uncertainty)")
    return result


def calibrate(graph: Any, cases: Any = None, *, judge: str | Judge | None = None,
              samples: int = 1, concurrency: int = 16, **opts: Any) -> Calibration:
    """Synchronous `a_calibrate` (not from inside a running event loop)."""
    return asyncio.run(a_calibrate(graph, cases, judge=judge, samples=samples,
                                   concurrency=concurrency, **opts))


def note_ignored(result: Calibration, ignored: Sequence[LabelProblem]) -> None:
    """Record the labels `lenient` dropped: each in `ignored_labels`, their count in a note."""
    if ignored:
        result.ignored_labels = [p.format() for p in ignored]
        result.notes.append(ignored_summary(ignored))


# --------------------------------------------------------------------------- analysis


def analyse(graph: Graph, cases: Sequence[Case], human: Sequence[RunResult],
            forced0: Sequence[RunResult], free: Sequence[RunResult],
            observed: dict[tuple[str, str, int], Observation], *, samples: int = 1,
            seed: int = stats.SEED, unsure: dict[str, list[str]] | None = None) -> Calibration:
    """Turn the three passes into per-node and end-to-end figures (no calls). `unsure`:
    node id -> the cases labelled "unsure" there (`annotators.unsure_cases`; the runs read
    them without it): counted per node, neither unlabelled nor a label problem."""
    unsure = unsure or {}
    metric = graph.metric
    threshold = metric.effective_threshold
    out = Calibration(metric.name, graph.path, {}, threshold, samples, None, len(cases))
    for nid, node in graph.nodes.items():
        classes = [True, False] if kind_of(node).per_item else verdict_values(node)
        out.nodes[nid] = NodeCalibration(nid, node.type, classes=classes, samples=samples)
    for nid, names in unsure.items():
        out.nodes[nid].unsure = len(names)
    for case, run in zip(cases, forced0, strict=True):
        if run.error is not None and run.error_kind in ("label_missing", "out_of_set") \
                and case.name not in unsure.get(run.error_node or "", ()):
            out.label_problems.append(f"{case.name}: {run.error}")
        for step in run.steps:
            nc = out.nodes[step.node]
            nc.reached += 1
            if kind_of(graph.nodes[step.node]).in_code:
                continue
            obs = observed.get((case.name, step.node, 0))
            if obs is None:  # the label was missing or bad: the step failed before the call
                if step.error_kind == "label_missing" \
                        and case.name not in unsure.get(step.node, ()):
                    nc.unlabelled.append(case.name)
                continue
            if not obs.ok:
                nc.errors.append({"case": case.name, "error": obs.error, "kind": obs.error_kind})
    for nid, node in graph.nodes.items():
        nc = out.nodes[nid]
        kind = kind_of(node)
        if kind.per_item:
            _map_items(nc, node, cases, observed, seed)  # type: ignore[arg-type]
        elif kind.chooses:
            _judgement(nc, node, cases, observed, seed)
        elif kind.extracts:
            _task(nc, cases, observed)
        elif node.is_scored_leaf:  # a G-Eval or DeepEval metric leaf: a 0..10 score
            _geval(nc, cases, observed)
        if samples > 1 and not kind.in_code and not kind.per_item:
            _stability(nc, cases, observed, samples)
    for case, h, f in zip(cases, human, free, strict=True):
        out.outcomes.append(_outcome(graph, case, h, f, threshold))
    free_of = {case.name: f for case, f in zip(cases, free, strict=True)}
    for nid, names in unsure.items():  # labelled "unsure": did the judge's run say so too?
        for name in names:
            ran = free_of[name].step(nid) if name in free_of else None
            if ran is not None and ran.unsure:
                out.nodes[nid].unsure_both += 1
    for o in out.outcomes:
        if o.differs and o.blame in out.nodes:
            out.nodes[o.blame].flipped += 1
            if o.judge_pass is not None and o.judge_pass != o.human_pass:
                out.nodes[o.blame].flipped_pass_fail += 1
    return out


def _judgement(nc: NodeCalibration, node: NodeBase, cases: Sequence[Case],
               observed: dict[tuple[str, str, int], Observation], seed: int) -> None:
    labels: list[Hashable] = []
    verdicts: list[Hashable] = []
    for case in cases:
        obs = observed.get((case.name, node.id, 0))
        if obs is None or not obs.ok:
            continue
        label = normalize_label(node, (case.expected or {}).get(node.id))
        labels.append(label)
        verdicts.append(obs.value)
        _count_unsure(nc, obs.value)
        if label != obs.value or type(label) is not type(obs.value):
            nc.disagreements.append({"case": case.name, "label": show(label),
                                     "verdict": show(obs.value), "reason": obs.reason})
    nc.cases = len(labels)
    nc.agreement = stats.raw_agreement(labels, verdicts)
    nc.kappa = stats.cohen_kappa(labels, verdicts)
    nc.kappa_ci = stats.bootstrap_kappa(labels, verdicts, seed=seed)
    nc.confusion = stats.confusion(labels, verdicts)


def _count_unsure(nc: NodeCalibration, answer: Any) -> None:
    """Count the judge's "cannot tell" answers."""
    if answer == CANNOT_TELL:
        nc.judge_unsure += 1


def _map_items(nc: NodeCalibration, node: MapNode, cases: Sequence[Case],
               observed: dict[tuple[str, str, int], Observation], seed: int) -> None:
    """A map node: the judge against the labels item by item (agreement, kappa, confusion
    over every labelled item), and case by case (each case's aggregate against the one
    its item labels give, `case_agreement`)."""
    labels: list[Hashable] = []
    verdicts: list[Hashable] = []
    agree = 0
    for case in cases:
        obs = observed.get((case.name, node.id, 0))
        value = (case.expected or {}).get(node.id)
        if obs is None or not obs.ok or not isinstance(obs.value, ItemAnswers) \
                or value is None or isinstance(value, bool):
            continue
        judged = [obs.value[i] for i in sorted(obs.value)]
        mine: list[Any] = []
        theirs: list[Any] = []
        for i, (text, answer, reason) in enumerate(judged):
            label = item_label(value, i, text)
            if label is NO_LABEL or person_unsure(label):  # left out, as "unsure" labels are
                continue
            mine.append(answer)
            theirs.append(label)
            _count_unsure(nc, answer)
            if label != answer or type(label) is not type(answer):
                nc.disagreements.append({"case": case.name, "label": show(label),
                                         "verdict": show(answer),
                                         "reason": f"item {i + 1} ({text}): {reason}"})
        labels += theirs
        verdicts += mine
        if len(mine) != len(judged):  # an item without a label: the case's aggregate is unknown
            continue
        nc.item_cases += 1
        agree += 1 if _items_outcome(node, mine) == _items_outcome(node, theirs) else 0
    nc.cases = len(labels)
    nc.agreement = stats.raw_agreement(labels, verdicts)
    nc.kappa = stats.cohen_kappa(labels, verdicts)
    nc.kappa_ci = stats.bootstrap_kappa(labels, verdicts, seed=seed)
    nc.confusion = stats.confusion(labels, verdicts)
    nc.case_agreement = agree / nc.item_cases if nc.item_cases else None


def _items_outcome(node: MapNode, answers: list[Any]) -> Any:
    """What a map node's items come to: "cannot tell" when one is, else the aggregate."""
    if any(a == CANNOT_TELL for a in answers):
        return CANNOT_TELL
    outcome = mapping.aggregate(node.aggregate, [a is True for a in answers], node.empty)
    return outcome.score if outcome.score is not None else outcome.verdict


def _task(nc: NodeCalibration, cases: Sequence[Case],
          observed: dict[tuple[str, str, int], Observation]) -> None:
    for case in cases:
        obs = observed.get((case.name, nc.node, 0))
        if obs is None or not obs.ok or nc.node not in (case.expected or {}):
            continue
        try:
            label = task_label(case.expected[nc.node])
        except TaskLabelError:
            continue
        nc.cases += 1
        if label.text is not None:
            nc.texts.append({"case": case.name, "label": label.text, "evidence": obs.value})
        if label.items:
            found, missing = split_items(label.items, obs.value)
            nc.items_labelled += len(label.items)
            nc.items_found += len(found)
            if missing:
                nc.dropped.append({"case": case.name, "missing": missing,
                                   "evidence": obs.value})


def _geval(nc: NodeCalibration, cases: Sequence[Case],
           observed: dict[tuple[str, str, int], Observation]) -> None:
    diffs: list[float] = []
    for case in cases:
        obs = observed.get((case.name, nc.node, 0))
        label = (case.expected or {}).get(nc.node)
        if obs is None or not obs.ok or isinstance(label, bool) \
                or not isinstance(label, int | float):
            continue
        diffs.append(abs(float(obs.value) - float(label)))
        if diffs[-1] > 1:
            nc.disagreements.append({"case": case.name, "label": show(label),
                                     "verdict": show(obs.value), "reason": obs.reason})
    nc.cases = len(diffs)
    nc.mae = sum(diffs) / len(diffs) if diffs else None


def _stability(nc: NodeCalibration, cases: Sequence[Case],
               observed: dict[tuple[str, str, int], Observation], samples: int) -> None:
    items: list[list[Hashable]] = []
    flips = 0
    margins: list[float] = []
    for case in cases:
        got = [observed.get((case.name, nc.node, s)) for s in range(samples)]
        answered = [o for o in got if o is not None and o.ok]
        if len(answered) < len(got):
            continue
        ratings = [_rating(o.value) for o in answered]
        items.append(ratings)
        top, margin = stats.majority(ratings)
        margins.append(margin)
        if len(set(map(stats.class_key, ratings))) > 1:
            flips += 1
            if margin < CLOSE_MARGIN:
                votes = Counter(show(r) for r in ratings)
                nc.close_calls.append({"case": case.name, "majority": show(top),
                                       "margin": margin, "votes": dict(votes)})
    nc.sampled_cases = len(items)
    if items:
        nc.flip_rate = flips / len(items)
        nc.margin = sum(margins) / len(margins)
        nc.fleiss = stats.fleiss_kappa(items)


def _rating(value: Any) -> Hashable:
    """A sample's answer as a class: verdicts as they are, evidence text whitespace-folded,
    G-Eval scores as numbers."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list):
        return tuple(value)
    return value


# --------------------------------------------------------------------------- end to end


def _outcome(graph: Graph, case: Case, human: RunResult, free: RunResult,
             threshold: float) -> CaseOutcome:
    score = case.expected_score if case.expected_score is not None else human.score
    human_pass = None if score is None else score + 1e-9 >= threshold
    out = CaseOutcome(case.name, score, free.score, human_pass,
                      free.success if free.error is None else None,
                      human.describe_path(), free.describe_path(), error=free.error)
    if out.differs:
        out.blame, out.why = blame(graph, case, human, free)
    return out


def blame(graph: Graph, case: Case, human: RunResult, free: RunResult) -> tuple[str | None, str]:
    """The first node on the human path where the judge's free run diverged, and how."""
    expected = case.expected or {}
    judged = {s.node: s for s in free.steps}
    for step in human.steps:
        nid = step.node
        node = graph.nodes[nid]
        mine = judged.get(nid)
        kind = kind_of(node)
        if kind.in_code:
            if nid in expected and mine is not None and mine.error is None \
                    and mine.answer != normalize_label(node, expected[nid]):
                return nid, (f"code says {show(mine.answer)}, the label "
                             f"{show(expected[nid])}")
            continue
        if mine is None:
            break
        if mine.error is not None:
            return nid, f"judge error ({mine.error_kind}): {mine.error}"
        if kind.extracts:
            try:
                label = task_label(expected[nid]) if nid in expected else None
            except TaskLabelError:
                label = None
            if label is not None and label.items:
                _, missing = split_items(label.items, mine.answer)
                if missing:
                    return nid, "dropped " + ", ".join(repr(m) for m in missing)
            continue
        if kind_of(node).per_item:  # a map node: what the items came to, each way
            if step.error is None and mine.answer != step.answer:
                return nid, (f"its items came to {show(mine.answer)}, the item labels to "
                             f"{show(step.answer)}")
            continue
        if node.is_scored_leaf:
            want = expected.get(nid)
            if isinstance(want, int | float) and not isinstance(want, bool) \
                    and abs(float(mine.answer) - float(want)) > TOLERANCE:
                return nid, f"scored {show(mine.answer)}, the label {show(want)}"
            continue
        if nid in expected and step.error is None:
            label = normalize_label(node, expected[nid])
            if mine.answer != label or type(mine.answer) is not type(label):
                return nid, f"said {show(mine.answer)}, the label {show(label)}"
    if free.error is not None:
        return free.error_node, f"judge error ({free.error_kind})"
    return None, "no node diverged on the labelled path: the labels and expected_score disagree"

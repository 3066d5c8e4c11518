"""`dagtui.align(graph, node, cases, judge=...)`: make one node agree better with the people's
labels, and prove it on cases the search never saw.

A decision graph makes the fix local: teacher forcing (`forcing`) judges each node on the cases
its labels reach, so one node can be changed and measured alone. The steps:

1. The cases whose labels reach node N (walked with the labels judge: no call) that carry a
   label N is measured on are split into train and held-out, stratified by label and seeded
   (`split_cases`: the same seed gives the same split). Fewer than `MIN_LABELS` such cases, or
   a class with fewer than `MIN_PER_CLASS`, is refused (`AlignRefused`, with the number
   needed): no alignment on noise.
2. Candidates, each measured on train by teacher forcing where only N (and, for a task node,
   the judgement nodes below it) is asked; every other judgement follows its label with no
   call, and a task node above N gives the judge's own evidence, as calibrate does (asked once
   per case for every candidate: `SharedAnswers`). The candidates: the node as it is (the
   baseline), each `--try` wording, example sets (`examples`: chosen from train, the cases the
   judge got wrong first, balanced across labels) and the proposer's rewrites (`rewrite`:
   `dagtui.calibration.proposer`).
3. The best candidate on train (it must beat the baseline there) is measured once on
   held-out, with the baseline: kappa and raw agreement before -> after with seeded bootstrap
   intervals, and an exact McNemar test of the paired change (`stats.mcnemar_exact`).

For a task node the figures are those of the judgement nodes below it taken together (each
labelled (case, node) decision one item; classes kept apart per node), and each of them is
reported on its own too: `improved` needs the pooled kappa up and no one of them down.
Everything goes through the judge given (its cache included), so a second run of the same
alignment is answered from the cache. `dagtui.commands.align` is the CLI, `align_report` the
text and Markdown.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dagtui.calibration import stats
from dagtui.calibration.align_measure import (  # noqa: F401 (re-exported)
    MIN_LABELS,
    MIN_PER_CLASS,
    AlignContext,
    Alignment,
    AlignRefused,
    Candidate,
    FocusJudge,
    Measure,
    Row,
    Split,
    ancestors,
    measured_nodes,
    refuse_too_few,
    split_cases,
)
from dagtui.calibration.core import check_labels, checked_of, normalize_label
from dagtui.calibration.forcing import SharedAnswers
from dagtui.calibration.items import TaskLabelError, task_label
from dagtui.calibration.proposer import text_field
from dagtui.graph.model import Example, Graph, NodeBase
from dagtui.judges.base import Ask, Judge, Reply
from dagtui.judges.labels import LabelsJudge
from dagtui.judges.prompts import material_parts
from dagtui.kinds import kind_of
from dagtui.run.cases import Case
from dagtui.run.engine import Engine
from dagtui.text import verdict_text as show

METHODS = ("examples", "rewrite", "both", "gepa")
#: example cases per label in one example set
PER_LABEL = 1


def _better(a: Measure, b: Measure) -> bool:
    """Is `a` strictly better than `b`: kappa first, raw agreement on a tie."""

    def rank(m: Measure) -> tuple[float, float]:
        f = m.figures
        return (-2.0 if f.kappa is None else f.kappa,
                -1.0 if f.agreement is None else f.agreement)

    return rank(a) > rank(b)


# --------------------------------------------------------------------------- candidates


def example_sets(graph: Graph, nid: str, baseline: Measure, focus: FocusJudge,
                 cases: dict[str, Case], count: int, seed: int) -> list[list[Example]]:
    """`count` example sets from the train cases: per label, the cases the judge got wrong
    first (then those it got right), each set taking the next `PER_LABEL` of every label, so
    the sets are balanced and none repeats a case. The material is the case as N saw it."""
    node = graph.nodes[nid]
    rows = [r for r in baseline.rows if r.node == measured_nodes(graph, nid)[0]]
    rng = random.Random(seed)
    by_label: dict[str, list[Row]] = {}
    for r in rows:
        by_label.setdefault(show(r.label), []).append(r)
    for label in sorted(by_label):
        group = by_label[label]
        rng.shuffle(group)
        group.sort(key=lambda r: r.agrees)  # wrong first; stable: the shuffle breaks ties
    sets: list[list[Example]] = []
    for i in range(count):
        chosen: list[Example] = []
        for label in sorted(by_label):
            for r in by_label[label][i * PER_LABEL:(i + 1) * PER_LABEL]:
                example = _example(graph, node, r, focus, cases[r.case])
                if example is not None:
                    chosen.append(example)
        if not chosen:
            break
        sets.append(chosen)
    return sets


def _example(graph: Graph, node: NodeBase, row: Row, focus: FocusJudge,
             case: Case) -> Example | None:
    evidence = focus.evidence.get((row.case, node.id), {})
    material = "\n\n".join(material_parts(graph, node, case.fields, evidence))
    if kind_of(node).extracts:
        try:
            text = task_label(case.expected.get(node.id)).evidence
        except TaskLabelError:
            return None
        if text is None:
            return None
        return Example(material=material, evidence=text, reason="the evidence a person wrote")
    why = ("the judge agreed with the person" if row.agrees
           else f"a person's label; {show(row.verdict)} was wrong here")
    return Example(material=material, verdict=row.label, reason=why)


# --------------------------------------------------------------------------- the search


#: progress(done, total, what): a measurement finished (`done` of about `total`)
Progress = Callable[[int, int, str], None]


async def a_align(graph: Any, node: str, cases: Any = None, *, judge: str | Judge | None = None,
                  holdout: float = 0.3, seed: int = stats.SEED, method: str | None = None,
                  candidates: int = 4, proposer: str | None = None,
                  tries: Iterable[str] = (), concurrency: int = 8, python: Any = None,
                  allow_python: bool = False, budget: int | None = None,
                  progress: Progress | None = None, **judge_opts: Any) -> Alignment:
    """Align node `node` of `graph` with the labels of `cases` (see the module docstring).

    `judge`: a litellm model string or any Judge (`judge_opts` go to the litellm judge, as in
    `dagtui.calibrate`). `method`: `examples`, `rewrite` or `both` (default: `both`, or only
    the `tries` when some are given). `candidates`: K example sets and K rewrites.
    `proposer`: the rewriting model (default the judge's), asked through the same client.
    `budget`: the most requests to send (`BudgetJudge`: cache hits are free); when it is
    spent the search stops with `result.budget_spent` and a note, and the same call again
    resumes from the cache. `progress(done, total, what)` is called after each measurement.
    Raises `AlignRefused` before any call when the node or its labels do not allow it."""
    from dagtui.calibration.proposer import propose
    from dagtui.judges.factory import make_judge
    from dagtui.run.cases import cases_for as _cases

    tries = list(tries)
    if method is not None and method not in METHODS:
        raise AlignRefused(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    if not 0 < holdout < 1:
        raise AlignRefused(f"--holdout must be between 0 and 1 (got {holdout:g})")
    methods = resolve_methods(method, tries)
    if "gepa" in methods:
        from dagtui.calibration.gepa_search import require_gepa

        require_gepa()  # before any call: the extra is missing
    checked = checked_of(graph)
    g = checked.graph if checked.graph is not None else checked.require()
    if python is None:
        from dagtui.graph.checks import PythonConsent

        python = getattr(graph, "python", None) or PythonConsent.from_env(allow_python)
    plan = plan_alignment(g, node, _cases(cases, g), holdout=holdout, seed=seed,
                          python=python)
    inner = make_judge(judge, g, concurrency=concurrency, **judge_opts)
    capped = BudgetJudge(inner, budget) if budget is not None else None
    shared = SharedAnswers(capped if capped is not None else inner)
    ctx = AlignContext(g, node, plan.cases, shared, plan.measured, ancestors(g, node), python,
                   concurrency, seed)
    target = g.nodes[node]
    result = Alignment(g.metric.name, g.path, node, target.type, text_field(target),
                       inner.describe(), plan.split, [], node_before=target.to_toml())
    start = time.perf_counter()
    measures: list[Measure] = []
    total = 1 + len(tries) + candidates * len(methods) + 2

    def spent() -> bool:
        return capped is not None and capped.refused > 0

    def done(what: str) -> None:
        if progress is not None:
            progress(len(measures), max(total, len(measures)), what)

    with inner.guarded():
        baseline = Candidate("current", "baseline")
        baseline.train, focus = await ctx.measure(baseline, plan.split.train, intervals=False)
        measures.append(baseline.train)
        done("the node as it is, on train")
        pool = [Candidate(f"try {i}", "try", text=t) for i, t in enumerate(tries, start=1)]
        if "examples" in methods and not spent():
            sets = example_sets(g, node, baseline.train, focus, plan.cases, candidates, seed)
            pool += [Candidate(f"examples {i}", "examples", examples=s)
                     for i, s in enumerate(sets, start=1)]
        if "rewrite" in methods and not spent():
            texts, calls = await propose(shared, g, target, baseline.train, plan.cases,
                                         focus.evidence, candidates, proposer)
            result.calls += calls.calls
            result.cache_hits += calls.cache_hits
            pool += [Candidate(f"rewrite {i}", "rewrite", text=t)
                     for i, t in enumerate(texts, start=1)]
        if "gepa" in methods and not spent():
            from dagtui.calibration.gepa_search import gepa_texts

            texts, sent, hits = await gepa_texts(ctx, g, target, plan.split.train, candidates,
                                                 proposer, seed)
            result.calls += sent
            result.cache_hits += hits
            pool += [Candidate(f"gepa {i}", "gepa", text=t)
                     for i, t in enumerate(texts, start=1)]
        total = 1 + len(pool) + 2
        for cand in pool:  # one at a time: a judge halting stops the search early
            if spent():
                break
            cand.train, _ = await ctx.measure(cand, plan.split.train, intervals=False)
            measures.append(cand.train)
            done(f"{cand.name}, on train")
        result.candidates = [baseline, *[c for c in pool if c.train is not None]]
        best = baseline
        for cand in pool:
            if cand.train is not None and best.train is not None \
                    and _better(cand.train, best.train):
                best = cand
        if best is not baseline and not spent():
            result.winner = best
            result.before, _ = await ctx.measure(baseline, plan.split.held_out)
            measures.append(result.before)
            done("the node as it is, on held-out")
            result.after, _ = await ctx.measure(best, plan.split.held_out)
            measures.append(result.after)
            done(f"{best.name}, on held-out")
    result.wall_time = time.perf_counter() - start
    halt = getattr(inner, "halt", None)
    if halt is not None:
        result.halt, result.judge_unusable = halt.line, bool(halt.preflight)
        result.notes.append(f"the judge halted: {halt.line}")
    if not isinstance(judge, Judge):
        await inner.aclose()
    result.calls += sum(m.calls for m in measures)
    result.cache_hits += sum(m.cache_hits for m in measures)
    if spent():
        assert capped is not None
        result.budget_spent = True
        result.winner = None
        result.notes.append(
            f"stopped: the budget of {capped.budget} calls is spent ({capped.sent} sent; "
            "cache hits are free) — run the same alignment again to resume from the cache")
        return result
    _conclude(result, g)
    return result


async def a_remeasure(graph: Any, node: str, cases: Any = None, *,
                      judge: str | Judge | None = None, seed: int = stats.SEED,
                      concurrency: int = 8, python: Any = None,
                      **judge_opts: Any) -> Measure:
    """Node `node` as it is now measured alone on all its labelled cases, by teacher forcing
    as `a_align` measures a candidate (no split, no refusal of few labels: the editor's
    criteria loop re-measures after each edit). Through the judge given and its cache: an
    unchanged node costs nothing."""
    from dagtui.judges.factory import make_judge
    from dagtui.run.cases import cases_for as _cases

    checked = checked_of(graph)
    g = checked.graph if checked.graph is not None else checked.require()
    labelled, by_name, *_ = _labelled(g, node, _cases(cases, g), python)
    inner = make_judge(judge, g, concurrency=concurrency, **judge_opts)
    ctx = AlignContext(g, node, by_name, SharedAnswers(inner), measured_nodes(g, node),
                   ancestors(g, node), python, concurrency, seed)
    try:
        with inner.guarded():
            measure, _ = await ctx.measure(Candidate("current", "baseline"),
                                           [name for name, _ in labelled])
    finally:
        if not isinstance(judge, Judge):
            await inner.aclose()
    return measure


class BudgetJudge(Judge):
    """At most `budget` requests sent: a cached answer costs nothing (a litellm judge's
    `from_cache` answers it without a place in the budget). Any other question holds a
    place while it is asked (it may be a request) and gives it back when the answer came
    from the cache after all; once `budget` requests were sent, further questions are refused
    (`refused` counts them) with a `JudgeError`, so a measurement in flight ends at once and
    the caller stops the search."""

    name = "budget"

    def __init__(self, inner: Judge, budget: int) -> None:
        self.inner = inner
        self.llm = inner.llm
        self.needs_params = inner.needs_params
        self.budget = budget
        self.sent = 0
        self.refused = 0
        self._asking = 0
        self._turn = asyncio.Condition()

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    async def answer(self, ask: Ask) -> Reply:
        from dagtui.judges.base import JudgeError

        cached = getattr(self.inner, "from_cache", None)  # a litellm judge's: free
        reply = cached(ask) if cached is not None else None
        if reply is not None:
            return reply
        async with self._turn:
            while self.sent + self._asking >= self.budget:
                if self.sent >= self.budget:
                    self.refused += 1
                    raise JudgeError("other", f"--budget {self.budget} calls spent")
                await self._turn.wait()
            self._asking += 1
        sent = 1
        try:
            reply = await self.inner.answer(ask)
            sent = sum(1 for c in reply.calls if not c.cache_hit)
            return reply
        except Exception as exc:
            sent = sum(1 for c in getattr(exc, "calls", []) if not c.cache_hit)
            raise
        finally:
            async with self._turn:
                self._asking -= 1
                self.sent += sent
                self._turn.notify_all()


def _conclude(result: Alignment, graph: Graph) -> None:
    """The held-out verdict: paired test, improved or not, the node after."""
    if result.winner is None:
        result.notes.append("no candidate beat the node as it is on the train cases")
        return
    result.aligned_graph = graph.replace(nodes={
        **graph.nodes, result.node: result.winner.apply(graph.nodes[result.node])})
    result.node_after = result.aligned_graph.nodes[result.node].to_toml()
    result.worse_items = len(result.now_disagree())
    result.better_items = len(result.now_agree())
    result.p_value = stats.mcnemar_exact(result.worse_items, result.better_items)
    before, after = result.before, result.after
    assert before is not None and after is not None
    kb, ka = before.figures.kappa, after.figures.kappa
    up = ka is not None and (kb is None or ka > kb)
    if len(after.nodes) > 1:
        for n, f in after.nodes.items():
            was = before.nodes[n].kappa
            if f.kappa is not None and was is not None and f.kappa < was:
                result.worse_nodes.append(n)
    result.improved = up and not result.worse_nodes


# --------------------------------------------------------------------------- the plan


@dataclass
class Plan:
    """Who is measured on what, worked out from the labels alone (no call)."""

    cases: dict[str, Case]
    measured: list[str]
    split: Split
    #: calls per case at N (and the nodes below it), from the labels' path
    calls_per_case: dict[str, int]
    #: the judge's prompts at N on the train cases (for the cost estimate)
    prompts: list[list[dict[str, str]]]
    #: task nodes above N the labels' path asks, per case (asked once for every candidate)
    upstream_calls: int


def plan_alignment(graph: Graph, nid: str, cases: Sequence[Case], *, holdout: float,
                   seed: int, python: Any = None) -> Plan:
    """Walk the labels' path of every case (no call), find N's labelled cases, refuse too
    few, split them."""
    labelled, by_name, calls, prompts, upstream = _labelled(graph, nid, cases, python)
    refuse_too_few(labelled, nid)
    split = split_cases(labelled, holdout, seed)
    train = set(split.train)
    return Plan(by_name, measured_nodes(graph, nid), split, calls,
                [p for (name, _), p in zip(labelled, prompts, strict=False) if name in train],
                upstream)


def _labelled(graph: Graph, nid: str, cases: Sequence[Case], python: Any = None) -> tuple[
        list[tuple[str, Hashable]], dict[str, Case], dict[str, int],
        list[list[dict[str, str]]], int]:
    """The labels' walk (no call): N's labelled cases as (name, first label), by name, the
    calls each costs at N and below, N's prompts, and the task calls above N. Refuses a node
    align cannot change, or that nothing labelled measures."""
    if nid not in graph.nodes:
        from dagtui.text import suggest

        raise AlignRefused(f"no node {nid!r} in the graph{suggest(nid, list(graph.nodes))}")
    node = graph.nodes[nid]
    if not (kind_of(node).chooses or kind_of(node).extracts):
        raise AlignRefused(f"node {nid!r} is a {node.type} node: align changes the criteria "
                           "of a binary or non_binary node or the instructions of a task node")
    measured = measured_nodes(graph, nid)
    if not measured:
        raise AlignRefused(f"task node {nid!r} feeds no binary or non_binary node: nothing "
                           "labelled measures its evidence")
    engine = Engine(graph, LabelsJudge(), python=python)
    up = ancestors(graph, nid)
    asked = set(measured) | {nid}

    async def walk() -> list[Any]:
        return [await engine.run(c, overrides=check_labels(graph, c), check=False)
                for c in cases]

    runs = asyncio.run(walk()) if not _in_loop() else _walk_in_thread(walk)
    labelled: list[tuple[str, Hashable]] = []
    by_name: dict[str, Case] = {}
    calls: dict[str, int] = {}
    prompts: list[list[dict[str, str]]] = []
    upstream = 0
    for case, run in zip(cases, runs, strict=True):
        reached = {s.node: s for s in run.steps}
        labels = [normalize_label(graph.nodes[m], case.expected[m]) for m in measured
                  if m in reached and m in (case.expected or {})]
        if nid not in reached or not labels:
            continue
        if case.name in by_name:
            raise AlignRefused(f"two cases are named {case.name!r}: alignment reports cases "
                               "by name")
        labelled.append((case.name, labels[0]))
        by_name[case.name] = case
        calls[case.name] = sum(1 for n in reached if n in asked)
        upstream += sum(1 for n in reached if n in up and kind_of(graph.nodes[n]).extracts)
        if reached[nid].prompt:
            prompts.append(reached[nid].prompt)
    return labelled, by_name, calls, prompts, upstream


def _in_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _walk_in_thread(walk: Callable[[], Any]) -> Any:
    """The labels walk from inside a running loop (`a_align` awaited): on its own loop in a
    thread, so the caller's loop is not re-entered."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(walk())).result()


def resolve_methods(method: str | None, tries: Sequence[str]) -> set[str]:
    """The candidate methods to use: `both` means examples and rewrite; none named means
    both, or only the `--try` wordings when some are given (an A/B test needs no proposer);
    `gepa` is GEPA's search (`gepa_search`)."""
    if method == "both" or (method is None and not tries):
        return {"examples", "rewrite"}
    return {method} if method else set()


def planned_calls(plan: Plan, *, tries: int, methods: set[str], candidates: int) -> int:
    """The most calls an alignment makes (cache hits make fewer): the baseline and every
    candidate on train, one proposer call, the baseline and the winner on held-out, and the
    task nodes above N once per case."""
    train = sum(plan.calls_per_case[n] for n in plan.split.train)
    held = sum(plan.calls_per_case[n] for n in plan.split.held_out)
    pool = tries + (candidates if "examples" in methods else 0) \
        + (candidates if "rewrite" in methods else 0)
    # GEPA: its budget of K + 1 passes over train, and at most one proposal per minibatch
    # pair (its found wordings are measured again on train from the shared answers)
    gepa = train * (candidates + 1) + len(plan.split.train) * (candidates + 1) // 2 \
        if "gepa" in methods else 0
    return train * (1 + pool) + (1 if "rewrite" in methods else 0) + 2 * held \
        + plan.upstream_calls + gepa


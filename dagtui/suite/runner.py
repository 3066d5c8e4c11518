"""The real `RuleRunner`: graph rules through the engine, inline checks in code.

Graph rules go through `dagtui.run.engine.Engine`, the same executor `dagtui run` and the
debugger use, so a rule in a suite scores a case exactly as its graph would on its own.
Inline checks call `dagtui.graph.checks.run_check` directly: no engine, no judge, no call. A check
that answers a label (a `python` check may) is a categorical output, which never opens a gate.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dagtui.graph.checks import PythonConsent
from dagtui.graph.model import CheckNode, Graph
from dagtui.suite.gating import RuleOutcome
from dagtui.suite.loader import SuiteLoad
from dagtui.suite.model import Rule

if TYPE_CHECKING:
    from dagtui.judges.base import Judge
    from dagtui.run.cluster import Cluster
    from dagtui.run.engine import Engine
    from dagtui.run.sinks import Done

#: builds the judge for a graph rule (model, cache and endpoint are the caller's choice)
JudgeFactory = Callable[[Rule, Graph], "Judge"]
#: what a rule sees of a case (the labels test hands each rule only its own labels)
CaseView = Callable[[Rule, Any], Any]


def case_fields(case: Any) -> dict[str, Any]:
    """The data a check reads: a `Case`'s fields, or a plain dict case."""
    fields = getattr(case, "fields", None)
    if isinstance(fields, dict):
        return fields
    return dict(case) if isinstance(case, dict) else {}


def run_inline_check(graph: Graph, case: Any,
                     python: PythonConsent | None = None) -> RuleOutcome:
    """Score 1 when the check holds, 0 when not; a label is categorical; problems are errors.
    `python`: the user's consent for a python check (never asked for here)."""
    from dagtui.graph.checks import CheckError, run_check

    node = next(iter(graph.nodes.values()))
    assert isinstance(node, CheckNode)
    try:
        result = run_check(node, graph, case_fields(case), {}, python=python)
    except CheckError as exc:
        return RuleOutcome(error=str(exc), error_kind="check")
    if isinstance(result.value, bool):
        return RuleOutcome(score=1.0 if result.value else 0.0, success=result.value, calls=0,
                           cost=0.0, detail={"verdict": result.value, "reason": result.reason})
    return RuleOutcome(categorical=str(result.value), calls=0, cost=0.0,
                       detail={"verdict": result.value, "reason": result.reason})


class EngineRuleRunner:
    """Runs a loaded suite's rules. One engine (and one judge) per graph rule, made on first
    use so a suite whose LLM rules are all gated away never builds a judge.

    `emit` gets every evaluated pair as a `dagtui.run.sinks.Done` (its rule, the dataset's
    case and the case as the rule saw it, the judge and the result) the moment it ends:
    `dagtui.run.execute` hands it to the run's sinks (results stream, traces), which may
    then drop the result's heavy text. `case_view` rewrites the case a rule is given (the
    suite labels test narrows `expected` to the rule's own labels).

    `workers` (an int or "auto", as `dagtui run --workers`) hands each graph rule's admitted
    cases to Dask workers as one batch (`dagtui.run.cluster.resolve_workers` decides, so
    "auto" and non-litellm judges stay in process; with a `scheduler` every litellm rule goes
    to that cluster). Every batch goes to one `dagtui.run.cluster.Cluster`, one batch at a time
    (a batch already uses every core it is given): `pool` when the caller owns one
    (`dagtui.run.execute` shares one between the gated and the baseline run and closes
    it), else one made at the first batch and closed by `aclose`. Its workers start once
    and stay warm, so each further rule costs no start. `concurrency` is the cluster's share.
    `python` is the user's consent for python checks, given to every engine and inline check.
    """

    def __init__(self, load: SuiteLoad, judge_for: JudgeFactory, *,
                 emit: Callable[[Done], None] | None = None,
                 case_view: CaseView | None = None, workers: int | str = 1,
                 concurrency: int = 8, pool: Cluster | None = None,
                 python: PythonConsent | None = None, scheduler: str | None = None
                 ) -> None:
        self.load = load
        self.emit = emit
        self.python = python if python is not None else PythonConsent.from_env()
        self.judge_for = judge_for
        self.case_view = case_view
        self.workers = workers
        self.concurrency = concurrency
        self.pool = pool
        self.scheduler = scheduler
        self._owns_pool = pool is None
        self._pool_turn: asyncio.Lock | None = None
        #: rule id -> worker processes asked for its last batch (for reports and tests)
        self.pools: dict[str, int] = {}
        self._engines: dict[str, Engine] = {}
        self.judges: list[Judge] = []
        #: each judge is guarded for the whole run (`Judge.guarded`): probed at its first
        #: call, halted when it cannot work or goes down; released by `aclose`
        self._guards = contextlib.ExitStack()

    def worst_case_calls(self, rule: Rule) -> int:
        facts = self.load.facts.get(rule.id)
        return facts.worst_calls if facts is not None else 0

    def engine(self, rule: Rule) -> Engine:
        if rule.id not in self._engines:
            from dagtui.run.engine import Engine

            graph = self.load.graphs[rule.id]
            judge = self.judge_for(rule, graph)
            if judge not in self.judges:
                self._guards.enter_context(judge.guarded())
            self.judges.append(judge)
            # the suite loader keeps only graphs its validation passed: not checked again
            self._engines[rule.id] = Engine(graph, judge, validate=False, python=self.python)
        return self._engines[rule.id]

    async def run(self, rule: Rule, case: Any) -> RuleOutcome:
        graph = self.load.graphs.get(rule.id)
        if graph is None:
            return RuleOutcome(error=f"rule '{rule.id}' has no usable graph")
        original = case
        if self.case_view is not None:
            case = self.case_view(rule, case)
        if rule.check is not None and rule.graph is None:
            outcome = run_inline_check(graph, case, self.python)
            if self.emit is not None:
                from dagtui.suite.traces import CodeCheck, check_rule_result

                self._done(rule, graph, original, case, CodeCheck(),
                           check_rule_result(rule, graph, case, outcome))
            return outcome
        try:
            engine = self.engine(rule)
            result = await engine.run(case)
        except Exception as exc:  # a case the graph cannot run (missing param, ...)
            return RuleOutcome(error=str(exc))
        self._done(rule, graph, original, case, engine.judge, result)
        return self.outcome_of(result)

    def _done(self, rule: Rule, graph: Graph, case: Any, seen: Any, judge: Any,
              result: Any) -> None:
        """The evaluated pair, to `emit`."""
        if self.emit is not None:
            from dagtui.run.sinks import Done

            self.emit(Done(None, case, result, judge, graph, rule=rule, seen=seen))

    # -- worker processes (see `gating.BatchRuleRunner`) -----------------------------------
    def _workers_for(self, rule: Rule, n_cases: int) -> int:
        if rule.graph is None or rule.id not in self.load.graphs:
            return 1
        if self.workers in (None, 1) and self.scheduler is None:
            return 1
        from dagtui.run.cluster import workers_for

        return workers_for(self.workers, n_cases, self.engine(rule).judge, self.scheduler)

    def batches(self, rule: Rule, n_cases: int) -> bool:
        return self._workers_for(rule, n_cases) > 1

    async def run_batch(self, rule: Rule, cases: list[Any]) -> list[RuleOutcome]:
        """Run `cases` of a graph rule on Dask workers. Cases the graph cannot run
        (a missing field) get the same error outcome an in-process run gives them; the
        others go to one cluster. Each pair is emitted here, from the results sent back."""
        from dagtui.run.cases import CaseError
        from dagtui.run.cluster import WORKER_ERROR, Cluster, ClusterError, evaluate_in_workers

        engine = self.engine(rule)
        graph = self.load.graphs[rule.id]
        seen = [self.case_view(rule, c) if self.case_view else c for c in cases]
        outcomes: list[RuleOutcome | None] = [None] * len(cases)
        runnable: list[int] = []
        for i, case in enumerate(seen):
            try:
                engine.preflight(case)
            except CaseError as exc:
                outcomes[i] = RuleOutcome(error=str(exc))
                continue
            runnable.append(i)
        if runnable:
            workers = self._workers_for(rule, len(runnable))
            if self._pool_turn is None:
                self._pool_turn = asyncio.Lock()
            async with self._pool_turn:  # rules of one level: one batch after another
                if self.pool is None:
                    self.pool = Cluster(workers, scheduler=self.scheduler)
                try:
                    report = await asyncio.to_thread(
                        evaluate_in_workers, engine, [seen[i] for i in runnable],
                        workers=workers, concurrency=self.concurrency, cluster=self.pool)
                except ClusterError as exc:  # said for every pair, as a judge error
                    for i in runnable:
                        outcomes[i] = RuleOutcome(error=str(exc), error_kind=WORKER_ERROR)
                    return [o or RuleOutcome(error="no result") for o in outcomes]
            self.pools[rule.id] = workers
            for i, result in zip(runnable, report.results, strict=True):
                self._done(rule, graph, cases[i], seen[i], engine.judge, result)
                outcomes[i] = self.outcome_of(result)
        return [o if o is not None else RuleOutcome(error="no result") for o in outcomes]

    @staticmethod
    def outcome_of(result: Any) -> RuleOutcome:
        """A rule's outcome from an engine `RunResult`."""
        return RuleOutcome(
            score=result.score,
            success=result.success,
            calls=result.calls,
            cost=result.cost,
            error=result.error,
            detail=result,
            error_kind=result.error_kind,
            not_run=result.status == "not_run",
        )

    async def aclose(self) -> None:
        """Close the judges, and the cluster when this runner made it (in a thread: a
        batch still running there ends with its unfinished cases as `worker` errors)."""
        self._guards.close()
        if self._owns_pool and self.pool is not None:
            await asyncio.to_thread(self.pool.close)
        for judge in self.judges:
            await judge.aclose()

"""Run a suite over cases: levels, the AND > 0 gate, then each rule's filter, sample, budget.

This is the pure scheduling half of a suite run. It decides *which* (rule, case) pairs are
evaluated and keeps the books on why the others were not; *how* a pair is evaluated is a
`RuleRunner`'s job (`dagtui.suite.runner` runs graphs through the engine and inline checks in
code; tests pass a fake). Keeping the two apart lets the gating rules be proven with no judge.

The rules, in the order they apply to each case of a rule:
1. dependencies: every rule in `depends_on` produced a numeric score > 0 for the case
   (a categorical output, an error, a paused or not-evaluated dependency: no pass);
2. the rule's own `filter` (every condition must hold);
3. `sample`: a seeded hash of (seed, case name) keeps a `rate` fraction, the same set on
   every run;
4. `max_calls`: a case is admitted only while the calls spent plus those reserved by cases in
   flight plus this case's worst case fit the budget, so the budget is never overrun by
   concurrency.
Levels run one after another; inside a level every rule and case runs concurrently under
one limit.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, cast

from dagtui import saferegex
from dagtui.report.outcome import Counts, Status
from dagtui.suite.model import FilterCond, Rule, Suite

# per-(rule, case) states, in the order the gates apply
SKIPPED_DEPS = "skipped_deps"
FILTERED = "filtered"
SAMPLED_OUT = "sampled_out"
OVER_BUDGET = "over_budget"
PAUSED = "paused"
EVALUATED = "evaluated"
#: admitted, but its judge had halted (could not be used, or went down): never judged
NOT_RUN = "not_run"


@dataclass
class RuleOutcome:
    """What one rule said about one case.

    `score` is numeric (0..1 for graphs, 1/0 for checks) or None; `categorical` holds a label
    output (which never counts as a pass); `calls`/`cost` are the judge calls really made
    (cache hits excluded) and their cost; `error` says why no verdict came back; `detail` is
    the runner's full record (an engine result) for JSON output.
    """

    score: float | None = None
    categorical: str | None = None
    calls: int = 0
    cost: float | None = None
    error: str | None = None
    success: bool | None = None
    detail: Any = None
    #: the judge error's kind (429, 5xx, auth, ...) when the runner knows it
    error_kind: str | None = None
    #: the judge had halted before this pair could be judged (`dagtui.judges.health`)
    not_run: bool = False

    @property
    def succeeded(self) -> bool:
        """Met its graph's threshold (a check: held). Without a threshold, the gate decides."""
        if self.error is not None:
            return False
        return self.success if self.success is not None else self.passed

    @property
    def passed(self) -> bool:
        """The gate: a numeric score above 0. Booleans and labels are not scores."""
        return (
            self.error is None
            and isinstance(self.score, int | float)
            and not isinstance(self.score, bool)
            and self.score > 0
        )


class RuleRunner(Protocol):
    """Evaluates one rule on one case. `worst_case_calls` bounds the judge calls one case
    can take (0 for code rules); the budget reserves it before a case starts."""

    def worst_case_calls(self, rule: Rule) -> int: ...

    async def run(self, rule: Rule, case: Any) -> RuleOutcome: ...


class BatchRuleRunner(RuleRunner, Protocol):
    """A runner that may take a rule's admitted cases all at once (worker processes).

    `batches(rule, n)` says whether `n` admitted cases of `rule` go to `run_batch` (one
    outcome per case, in order) instead of one `run` each. Only rules without a budget are
    batched: `max_calls` admits case by case on the calls really spent, which a batch
    cannot honour, so those rules always run case by case.
    """

    def batches(self, rule: Rule, n_cases: int) -> bool: ...

    async def run_batch(self, rule: Rule, cases: list[Any]) -> list[RuleOutcome]: ...


@dataclass
class CaseRecord:
    """One (rule, case) pair: the gate that stopped it, or its outcome."""

    case: str
    state: str
    reason: str = ""
    outcome: RuleOutcome | None = None

    @property
    def passed(self) -> bool:
        return self.state == EVALUATED and self.outcome is not None and self.outcome.passed

    @property
    def status(self) -> Status:
        """How the pair ended, in the terms a graph run's case uses (`dagtui.report.outcome`):
        stopped by a gate is `skipped`; judged, it is pass or fail by its graph's threshold
        (a check: whether it held), or a judge error."""
        o = self.outcome
        if self.state == NOT_RUN:
            return "not_run"
        if self.state != EVALUATED or o is None:
            return "skipped"
        if o.error is not None:
            return "error"
        return "pass" if o.succeeded else "fail"


@dataclass
class RuleStats:
    """Per-rule books. `candidates` is every case of the dataset; each lands in exactly one
    of paused / skipped_deps / filtered / sampled_out / over_budget / not_run / evaluated."""

    #: the counts the JSON report writes per rule (and `dagtui merge` adds up)
    COUNTED: ClassVar[tuple[str, ...]] = (
        "candidates", "paused", "skipped_deps", "filtered", "sampled_out", "over_budget",
        "evaluated", "passed", "failed", "below_threshold", "errors", "not_run",
        "categorical", "calls")

    rule: str
    level: int
    status: str
    kind: str = "?"
    candidates: int = 0
    paused: int = 0
    not_run: int = 0
    skipped_deps: int = 0
    filtered: int = 0
    sampled_out: int = 0
    over_budget: int = 0
    evaluated: int = 0
    passed: int = 0
    failed: int = 0  # evaluated, no error, did not pass the gate (score 0 or a label)
    #: evaluated, no error, below its graph's threshold (what fails a CI run, as for graphs)
    below_threshold: int = 0
    errors: int = 0
    categorical: int = 0
    calls: int = 0
    cost: float = 0.0
    cost_known: bool = True
    records: list[CaseRecord] = field(default_factory=list)
    #: calls this rule takes on every case with no gate (see `attach_baseline`)
    ungated_calls: int | None = None
    #: gate state -> calls the pairs stopped by that gate would have taken
    saved_by: dict[str, int] = field(default_factory=dict)

    def count(self, state: str) -> None:
        setattr(self, state, getattr(self, state) + 1)

    def counts(self) -> Counts:
        """This rule's pairs by how they ended."""
        counts = Counts()
        for rec in self.records:
            counts.add(rec.status)
        return counts

    def as_dict(self) -> dict[str, Any]:
        keys = ("rule", "level", "status", "kind", *self.COUNTED)
        d: dict[str, Any] = {k: getattr(self, k) for k in keys}
        d["cost"] = self.cost if self.cost_known else None
        d["ungated_calls"] = self.ungated_calls
        d["saved_by"] = dict(self.saved_by)
        return d


@dataclass
class SuiteResult:
    """A whole suite run: per-rule stats in level order and totals."""

    suite: str
    levels: list[list[str]]
    rules: dict[str, RuleStats]
    cases: list[str]
    wall_time: float = 0.0
    #: every active rule on every case, without gates: measured by a second run, or None
    ungated_calls: int | None = None
    ungated_method: str | None = None  # "measured" | "estimated"

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.rules.values())

    @property
    def cost(self) -> float | None:
        if not all(s.cost_known for s in self.rules.values()):
            return None
        return sum(s.cost for s in self.rules.values())

    @property
    def calls_saved(self) -> int | None:
        return None if self.ungated_calls is None else self.ungated_calls - self.calls

    @property
    def not_run(self) -> int:
        """(rule, case) pairs admitted but never judged: their judge had halted."""
        return sum(s.not_run for s in self.rules.values())

    def halts(self) -> list[str]:
        """Why judges halted, one line each (`dagtui.judges.health`)."""
        from dagtui.judges.health import halt_line

        lines = (halt_line(r.reason) for st in self.rules.values() for r in st.records
                 if r.state == NOT_RUN)
        return list(dict.fromkeys(line for line in lines if line))

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.rules.values())

    @property
    def failures(self) -> int:
        return sum(s.below_threshold for s in self.rules.values())

    def exit_code(self) -> int:
        """0, 1 or 3 by the rule graph runs follow (`dagtui.report.outcome.Counts`): an
        incomplete run is 3 whatever it found so far."""
        return self.counts().exit_code()

    def counts(self) -> Counts:
        """Every (rule, case) pair by how it ended (`dagtui.report.outcome`); the report
        writers read the run through `dagtui.suite.report.SuiteOutcome`."""
        counts = Counts()
        for st in self.rules.values():
            for rec in st.records:
                counts.add(rec.status)
        return counts

    def passes(self, rule: str) -> set[str]:
        return {r.case for r in self.rules[rule].records if r.passed}

    @property
    def saved_by(self) -> dict[str, int]:
        """Calls saved, by the gate that stopped them (dependencies, filters, ...)."""
        out: dict[str, int] = {}
        for st in self.rules.values():
            for state, n in st.saved_by.items():
                out[state] = out.get(state, 0) + n
        return out


def attach_baseline(result: SuiteResult, baseline: SuiteResult) -> None:
    """Record, from an ungated run of the same suite over the same cases, what every rule
    would have cost on every case, and which gate saved which calls.

    Each (rule, case) pair the gated run did not evaluate is charged the calls the ungated
    run really made for it, under the gate that stopped it; so `saved_by["skipped_deps"]`
    is exactly the calls the dependency gating saved on this dataset.
    """
    for rid, st in result.rules.items():
        base = baseline.rules.get(rid)
        if base is None:
            continue
        calls_of = {r.case: (r.outcome.calls if r.outcome else 0) for r in base.records}
        st.ungated_calls = base.calls
        st.saved_by = {}
        for rec in st.records:
            if rec.state not in (EVALUATED, PAUSED, NOT_RUN):  # a halt saved nothing
                st.saved_by[rec.state] = st.saved_by.get(rec.state, 0) + calls_of.get(rec.case, 0)
    result.ungated_calls = baseline.calls
    result.ungated_method = "measured"


def estimate_baseline(result: SuiteResult) -> None:
    """Without an ungated run: charge each pair a gate stopped the mean calls of the pairs
    this rule did evaluate (nothing known when it evaluated none). Labelled "estimated"."""
    total = 0
    for st in result.rules.values():
        if st.status != "active":
            st.ungated_calls = 0
            continue
        mean = st.calls / st.evaluated if st.evaluated else 0.0
        stopped: dict[str, int] = {}
        for rec in st.records:
            if rec.state not in (EVALUATED, NOT_RUN):  # a halted judge is no gate
                stopped[rec.state] = stopped.get(rec.state, 0) + 1
        st.saved_by = {state: round(n * mean) for state, n in stopped.items()}
        st.ungated_calls = st.calls + sum(st.saved_by.values())
        total += st.ungated_calls
    result.ungated_calls = total
    result.ungated_method = "estimated"


# -- case access ---------------------------------------------------------------------------
_MISSING = object()


def case_name(case: Any, index: int) -> str:
    """A case's `name`, or `#<n>` (1-based) when it has none: the key sampling hashes."""
    name = case.get("name") if isinstance(case, dict) else getattr(case, "name", None)
    return str(name) if name not in (None, "") else f"#{index + 1}"


def case_field(case: Any, dotted: str) -> Any:
    """Value at a dotted path (`metadata.kind`, `tags.0`) in a dict or an object; `_MISSING`
    when absent, so `exists` can tell a missing field from a null one."""
    cur: Any = case
    for part in dotted.split("."):
        if isinstance(cur, dict):
            cur = cur.get(part, _MISSING)
        elif isinstance(cur, list | tuple):
            try:
                cur = cur[int(part)]
            except (ValueError, IndexError):
                return _MISSING
        elif isinstance(getattr(cur, "fields", None), dict) and part in cur.fields:
            cur = cur.fields[part]  # a dagtui.run.cases.Case keeps its data in `fields`
        else:
            cur = getattr(cur, part, _MISSING)
        if cur is _MISSING:
            return _MISSING
    return cur


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def condition_holds(cond: FilterCond, case: Any) -> bool:
    """Evaluate one filter condition; a missing field fails every op but `exists = false`."""
    op = cond.canonical_op
    got = case_field(case, cond.field)
    if op == "exists":
        want = True if cond.value is None else bool(cond.value)
        return (got is not _MISSING and got is not None) == want
    if got is _MISSING:
        return False
    want = cond.value
    if op == "eq":
        return got == want
    if op == "ne":
        return got != want
    if op == "in":
        return isinstance(want, list) and got in want
    if op == "not_in":
        return isinstance(want, list) and got not in want
    if op == "contains":
        if isinstance(got, str):
            return isinstance(want, str) and want in got
        return isinstance(got, list | tuple | dict) and want in got
    if op == "regex":  # bounded (dagtui.saferegex): a backtracking pattern raises RegexError
        text = got if isinstance(got, str) else str(got)
        return saferegex.search(str(want), text) is not None
    a, b = _number(got), _number(want)
    if a is None or b is None:
        return False
    return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}.get(op, False)


def sample_keeps(rate: float, seed: int, name: str) -> bool:
    """Seeded, reproducible sampling: the same (seed, case name) is always kept or dropped,
    whatever the order or size of the dataset. A stable hash, not `random`, so no state."""
    if rate >= 1:
        return True
    if rate <= 0:
        return False
    digest = hashlib.sha256(f"{seed}\x00{name}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


# -- the run ---------------------------------------------------------------------------------
ProgressFn = Callable[[str, str, CaseRecord], None]


async def run_suite(
    suite: Suite,
    cases: Sequence[Any],
    runner: RuleRunner,
    *,
    concurrency: int = 8,
    gated: bool = True,
    kinds: dict[str, str] | None = None,
    progress: ProgressFn | None = None,
    on_rule_done: Callable[[RuleStats], None] | None = None,
) -> SuiteResult:
    """Run every active rule, level by level, over `cases`.

    `gated=False` runs every active rule on every case with no dependency, filter, sample or
    budget: the baseline that "calls saved by gating" is measured against.
    """
    levels = suite.levels()  # raises CycleError: the loader reports it before we get here
    names = _unique_names(cases)
    limit = asyncio.Semaphore(max(1, concurrency))
    stats: dict[str, RuleStats] = {}
    passes: dict[str, set[str]] = {}
    started = time.perf_counter()
    for n, level in enumerate(levels):
        jobs = []
        for rid in level:
            rule = suite.rules[rid]
            st = RuleStats(rid, n, rule.status, (kinds or {}).get(rid, "?"))
            stats[rid] = st
            jobs.append(_run_rule(rule, st, cases, names, passes, runner, limit, gated,
                                  progress, on_rule_done))
        await asyncio.gather(*jobs)
        for rid in level:
            passes[rid] = {r.case for r in stats[rid].records if r.passed}
    ordered = {rid: stats[rid] for level in levels for rid in level}
    return SuiteResult(
        suite.meta.name, levels, ordered, names, wall_time=time.perf_counter() - started
    )


def _unique_names(cases: Sequence[Any]) -> list[str]:
    """Case names, made unique (`name`, `name (2)`) so per-case books never collide."""
    seen: dict[str, int] = {}
    out = []
    for i, case in enumerate(cases):
        name = case_name(case, i)
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def gate_reason(rule: Rule, name: str, case: Any, passes: dict[str, set[str]]) -> tuple[str, str]:
    """The first gate that stops this case for this rule (state, why), or (EVALUATED, "")
    when only the budget is left to decide."""
    failed = [d for d in rule.depends_on if name not in passes.get(d, set())]
    if failed:
        return SKIPPED_DEPS, "no pass from " + ", ".join(failed)
    for cond in rule.filter:
        try:
            holds = condition_holds(cond, case)
        except saferegex.RegexError as exc:  # the case is kept out, and the reason says why
            return FILTERED, f"filter: {cond.describe()}: {exc}"
        if not holds:
            return FILTERED, "filter: " + cond.describe()
    if rule.sample is not None and not sample_keeps(rule.sample.rate, rule.sample.seed, name):
        return SAMPLED_OUT, f"sampled out (rate {rule.sample.rate:g}, seed {rule.sample.seed})"
    return EVALUATED, ""


async def _run_rule(
    rule: Rule,
    st: RuleStats,
    cases: Sequence[Any],
    names: list[str],
    passes: dict[str, set[str]],
    runner: RuleRunner,
    limit: asyncio.Semaphore,
    gated: bool,
    progress: ProgressFn | None,
    on_done: Callable[[RuleStats], None] | None = None,
) -> None:
    records: list[CaseRecord | None] = [None] * len(cases)

    def settle(i: int, rec: CaseRecord) -> None:
        records[i] = rec
        st.count(rec.state)
        if progress is not None:
            progress(rule.id, names[i], rec)

    st.candidates = len(cases)
    budget = rule.max_calls if gated else None
    worst = runner.worst_case_calls(rule) if budget is not None else 0
    spent = 0
    reserved = 0
    budget_changed = asyncio.Condition()
    tasks: list[asyncio.Task[None]] = []
    out_of_budget = False

    async def evaluate(i: int, hold: int) -> None:
        nonlocal spent, reserved
        try:
            try:
                outcome = await runner.run(rule, cases[i])
            except Exception as exc:  # a runner bug must not take the suite down
                outcome = RuleOutcome(error=f"{type(exc).__name__}: {exc}")
        finally:
            limit.release()
        async with budget_changed:
            spent += outcome.calls
            reserved -= hold
            budget_changed.notify_all()
        account(i, outcome)

    def account(i: int, outcome: RuleOutcome) -> None:
        st.calls += outcome.calls
        if outcome.cost is None:
            if outcome.calls:
                st.cost_known = False
        else:
            st.cost += outcome.cost
        if outcome.not_run:
            settle(i, CaseRecord(names[i], NOT_RUN, outcome.error or "judge halted", outcome))
            return
        rec = CaseRecord(names[i], EVALUATED, outcome=outcome)
        if outcome.error is not None:
            st.errors += 1
        else:
            if outcome.passed:
                st.passed += 1
            else:
                st.failed += 1
                if outcome.score is None and outcome.categorical is not None:
                    st.categorical += 1
            if not outcome.succeeded:
                st.below_threshold += 1
        settle(i, rec)

    admitted: list[int] = []  # cases for a batch runner, when this rule is batched
    may_batch = budget is None and callable(getattr(runner, "batches", None))
    for i, case in enumerate(cases):
        if not rule.active:
            settle(i, CaseRecord(names[i], PAUSED, "rule is paused"))
            continue
        state, why = gate_reason(rule, names[i], case, passes) if gated else (EVALUATED, "")
        if state != EVALUATED:
            settle(i, CaseRecord(names[i], state, why))
            continue
        if may_batch:
            admitted.append(i)
            continue
        if budget is not None:
            if out_of_budget:
                settle(i, CaseRecord(names[i], OVER_BUDGET, f"max_calls {budget} reached"))
                continue
            async with budget_changed:
                # wait for cases in flight while their reservations are what blocks us
                while spent + reserved + worst > budget and reserved > 0:
                    await budget_changed.wait()
                if spent + reserved + worst > budget:
                    out_of_budget = True
                else:
                    reserved += worst
            if out_of_budget:
                settle(i, CaseRecord(names[i], OVER_BUDGET, f"max_calls {budget} reached"))
                continue
        await limit.acquire()
        tasks.append(asyncio.create_task(evaluate(i, worst if budget is not None else 0)))
    if admitted:
        batch = cast(BatchRuleRunner, runner)  # may_batch saw its `batches`
        if batch.batches(rule, len(admitted)):
            try:
                outcomes = await batch.run_batch(rule, [cases[i] for i in admitted])
            except Exception as exc:  # a runner bug must not take the suite down
                outcomes = [RuleOutcome(error=f"{type(exc).__name__}: {exc}")] * len(admitted)
            for i, outcome in zip(admitted, outcomes, strict=True):
                account(i, outcome)
        else:
            for i in admitted:
                await limit.acquire()
                tasks.append(asyncio.create_task(evaluate(i, 0)))
    if tasks:
        await asyncio.gather(*tasks)
    st.records = [r for r in records if r is not None]
    if on_done is not None:
        on_done(st)

"""Gating semantics with a fake runner: AND, the > 0 rule, order, sampling, budget."""

from __future__ import annotations

import asyncio
from typing import Any

from dagtui.suite.gating import (
    EVALUATED,
    FILTERED,
    OVER_BUDGET,
    PAUSED,
    SAMPLED_OUT,
    SKIPPED_DEPS,
    RuleOutcome,
    condition_holds,
    run_suite,
    sample_keeps,
)
from dagtui.suite.model import FilterCond, Rule, Sample, Suite


class FakeRunner:
    """Scores from a table (rule -> case -> score or label); records the order of calls."""

    def __init__(self, table: dict[str, dict[str, Any]], calls: int = 1,
                 delay: float = 0.0) -> None:
        self.table = table
        self.calls = calls
        self.delay = delay
        self.log: list[tuple[str, str]] = []

    def worst_case_calls(self, rule: Rule) -> int:
        return self.calls

    async def run(self, rule: Rule, case: Any) -> RuleOutcome:
        self.log.append((rule.id, case["name"]))
        if self.delay:
            await asyncio.sleep(self.delay)
        value = self.table.get(rule.id, {}).get(case["name"], 1.0)
        if isinstance(value, str):
            return RuleOutcome(categorical=value, calls=self.calls, cost=0.01)
        return RuleOutcome(score=value, calls=self.calls, cost=0.01)


def _cases(n: int, **extra: Any) -> list[dict[str, Any]]:
    return [{"name": f"c{i}", "actual_output": "x", **extra} for i in range(n)]


def _suite(*rules: Rule) -> Suite:
    return Suite(rules={r.id: r for r in rules})


def _run(suite: Suite, cases: list[dict[str, Any]], runner: FakeRunner, **kw: Any):
    return asyncio.run(run_suite(suite, cases, runner, **kw))


def test_and_gating_needs_every_dependency_to_pass() -> None:
    suite = _suite(Rule("a", check={}), Rule("b", check={}),
                   Rule("c", graph="c.toml", depends_on=["a", "b"]))
    runner = FakeRunner({"a": {"c0": 1, "c1": 1, "c2": 0, "c3": 0},
                         "b": {"c0": 1, "c1": 0, "c2": 1, "c3": 0}})
    result = _run(suite, _cases(4), runner)
    c = result.rules["c"]
    assert [r.case for r in c.records if r.state == EVALUATED] == ["c0"]
    assert c.skipped_deps == 3 and c.evaluated == 1
    skipped = {r.case: r.reason for r in c.records if r.state == SKIPPED_DEPS}
    assert skipped == {"c1": "no pass from b", "c2": "no pass from a", "c3": "no pass from a, b"}


def test_only_numeric_scores_above_zero_pass() -> None:
    suite = _suite(Rule("gate", graph="g.toml"), Rule("next", graph="n.toml", depends_on=["gate"]))
    runner = FakeRunner({"gate": {"c0": 0, "c1": 0.0001, "c2": "good", "c3": -1, "c4": 0.5}})
    result = _run(suite, _cases(5), runner)
    gate = result.rules["gate"]
    assert gate.passed == 2 and gate.failed == 3 and gate.categorical == 1
    assert result.passes("next") == {"c1", "c4"}
    assert {r.case for r in result.rules["next"].records if r.state == EVALUATED} == {"c1", "c4"}
    assert RuleOutcome(score=True).passed is False  # a boolean is not a score
    assert RuleOutcome(score=1.0, error="boom").passed is False


def test_levels_run_in_order_and_a_level_waits_for_the_previous() -> None:
    suite = _suite(Rule("deep", graph="d.toml", depends_on=["mid"]),
                   Rule("mid", graph="m.toml", depends_on=["base"]),
                   Rule("base", check={}))
    runner = FakeRunner({}, delay=0.001)
    result = _run(suite, _cases(3), runner, concurrency=4)
    assert result.levels == [["base"], ["mid"], ["deep"]]
    order = [rid for rid, _ in runner.log]
    assert order == ["base"] * 3 + ["mid"] * 3 + ["deep"] * 3
    assert list(result.rules) == ["base", "mid", "deep"]


def test_sampling_is_reproducible_per_seed_and_case_name() -> None:
    names = [f"span-{i}" for i in range(200)]
    keep7 = {n for n in names if sample_keeps(0.5, 7, n)}
    assert keep7 == {n for n in reversed(names) if sample_keeps(0.5, 7, n)}
    assert 70 < len(keep7) < 130
    keep8 = {n for n in names if sample_keeps(0.5, 8, n)}
    assert keep8 != keep7

    def sampled(seed: int) -> set[str]:
        suite = _suite(Rule("r", graph="r.toml", sample=Sample(0.5, seed)))
        result = _run(suite, _cases(40), FakeRunner({}))
        st = result.rules["r"]
        assert st.sampled_out + st.evaluated == 40
        return {r.case for r in st.records if r.state == EVALUATED}

    assert sampled(7) == sampled(7)
    assert sampled(7) != sampled(8)
    # the same case keeps its fate when the dataset is shuffled or cut
    suite = _suite(Rule("r", graph="r.toml", sample=Sample(0.5, 7)))
    cases = list(reversed(_cases(40)))[:25]
    part = _run(suite, cases, FakeRunner({})).rules["r"]
    assert {r.case for r in part.records if r.state == EVALUATED} == sampled(7) & {
        c["name"] for c in cases}


def test_budget_stops_exactly_at_max_calls_even_with_concurrency() -> None:
    suite = _suite(Rule("r", graph="r.toml", max_calls=7))
    runner = FakeRunner({}, calls=1, delay=0.001)
    st = _run(suite, _cases(20), runner, concurrency=8).rules["r"]
    assert st.calls == 7 and st.evaluated == 7 and st.over_budget == 13
    assert len(runner.log) == 7
    # two calls per case: 7 // 2 cases fit, never an overrun
    runner2 = FakeRunner({}, calls=2, delay=0.001)
    st2 = _run(suite, _cases(20), runner2, concurrency=8).rules["r"]
    assert st2.calls == 6 and st2.evaluated == 3 and st2.over_budget == 17


def test_gates_apply_in_order_deps_filter_sample_budget() -> None:
    cases = [{"name": f"c{i}", "metadata": {"kind": "chat" if i % 2 else "tool"}}
             for i in range(30)]
    suite = _suite(
        Rule("gate", check={}),
        Rule("r", graph="r.toml", depends_on=["gate"],
             filter=[FilterCond("metadata.kind", "eq", "chat")],
             sample=Sample(0.6, 3), max_calls=4),
    )
    gate_scores = {f"c{i}": (0 if i < 10 else 1) for i in range(30)}
    result = _run(suite, cases, FakeRunner({"gate": gate_scores}))
    st = result.rules["r"]
    assert st.skipped_deps == 10
    assert st.filtered == 10  # c10..c29, the even ones are "tool"
    kept = [n for n in (f"c{i}" for i in range(11, 30, 2)) if sample_keeps(0.6, 3, n)]
    assert st.sampled_out == 10 - len(kept)
    assert st.evaluated == min(4, len(kept))
    assert st.over_budget == len(kept) - st.evaluated
    assert (st.skipped_deps + st.filtered + st.sampled_out + st.over_budget + st.evaluated
            == st.candidates == 30)
    states = {r.case: r.state for r in st.records}
    assert states["c0"] == SKIPPED_DEPS and states["c10"] == FILTERED
    assert OVER_BUDGET in states.values() or len(kept) <= 4
    assert all(states[n] != SAMPLED_OUT for n in kept)


def test_paused_rule_does_not_run_and_its_dependents_see_no_pass() -> None:
    suite = _suite(Rule("a", check={}, status="paused"), Rule("b", graph="b.toml",
                                                               depends_on=["a"]))
    runner = FakeRunner({})
    result = _run(suite, _cases(3), runner)
    assert runner.log == []
    assert result.rules["a"].paused == 3 and result.rules["a"].records[0].state == PAUSED
    assert result.rules["b"].skipped_deps == 3


def test_ungated_run_evaluates_every_rule_on_every_case() -> None:
    suite = _suite(Rule("a", check={}), Rule("b", graph="b.toml", depends_on=["a"],
                                             sample=Sample(0.1, 1), max_calls=1))
    runner = FakeRunner({"a": {"c0": 0, "c1": 0}})
    result = _run(suite, _cases(5), runner, gated=False)
    assert result.rules["b"].evaluated == 5 and result.calls == 10


def test_runner_exceptions_become_errors_not_passes() -> None:
    class Broken(FakeRunner):
        async def run(self, rule: Rule, case: Any) -> RuleOutcome:
            raise RuntimeError("judge down")

    suite = _suite(Rule("a", check={}), Rule("b", graph="b.toml", depends_on=["a"]))
    result = _run(suite, _cases(2), Broken({}))
    assert result.rules["a"].errors == 2 and result.rules["b"].skipped_deps == 2
    assert "judge down" in (result.rules["a"].records[0].outcome.error or "")


def test_filter_operators() -> None:
    case = {"name": "x", "metadata": {"kind": "chat", "tokens": 120, "lang": "en"},
            "tags": ["prod"], "actual_output": "Hello world"}

    def holds(field: str, op: str, value: Any = None) -> bool:
        return condition_holds(FilterCond(field, op, value), case)

    assert holds("metadata.kind", "eq", "chat") and not holds("metadata.kind", "ne", "chat")
    assert holds("metadata.kind", "in", ["chat", "qa"]) and holds("metadata.kind", "not_in", ["qa"])
    assert holds("metadata.tokens", ">=", 120) and not holds("metadata.tokens", "lt", 100)
    assert holds("actual_output", "regex", r"^Hello\b") and holds("tags", "contains", "prod")
    assert holds("metadata.lang", "exists") and holds("metadata.missing", "exists", False)
    assert not holds("metadata.missing", "eq", None)  # a missing field fails comparisons
    assert holds("tags.0", "eq", "prod")


def test_baselines_measured_and_estimated() -> None:
    from dagtui.suite.gating import attach_baseline, estimate_baseline

    suite = _suite(Rule("a", check={}), Rule("b", graph="b.toml", depends_on=["a"]))
    table = {"a": {"c0": 1, "c1": 0, "c2": 0, "c3": 1}}
    gated = _run(suite, _cases(4), FakeRunner(table, calls=2))
    assert gated.calls == 8 + 4  # a: 4 cases x 2 calls, b: the 2 that passed a, x 2
    baseline = _run(suite, _cases(4), FakeRunner(table, calls=2), gated=False)
    attach_baseline(gated, baseline)
    assert (gated.ungated_calls, gated.calls_saved, gated.ungated_method) == (16, 4, "measured")
    assert gated.saved_by == {"skipped_deps": 4}
    again = _run(suite, _cases(4), FakeRunner(table, calls=2))
    estimate_baseline(again)
    assert (again.ungated_calls, again.ungated_method) == (16, "estimated")


def test_a_low_score_opens_the_gate_but_counts_below_threshold() -> None:
    class Scored(FakeRunner):
        async def run(self, rule: Rule, case: Any) -> RuleOutcome:
            return RuleOutcome(score=0.3, success=False, calls=1)

    suite = _suite(Rule("a", graph="a.toml"), Rule("b", graph="b.toml", depends_on=["a"]))
    result = _run(suite, _cases(2), Scored({}))
    a = result.rules["a"]
    assert (a.passed, a.failed, a.below_threshold) == (2, 0, 2)
    assert result.rules["b"].evaluated == 2  # 0.3 > 0: the gate is open
    assert result.failures == 4

"""A suite's logic test against human labels (`dagtui test SUITE.toml`), zero LLM calls.

The suite counterpart of `dagtui test GRAPH`: every judgement node of every rule answers
with the label the case gives it (the labels judge), checks run in code, the gates decide
which rules run, exactly as in `dagtui run`. A case fails when

- a rule the suite ran has a node the path reached but no label for it, or a label outside
  the node's verdicts (the labels judge's error, named by rule and node);
- a check (an inline check rule, or a check node inside a rule's graph) answered in code
  differently from its label;
- a rule's `expected_score` differs from the score its labels lead to;
- the labels say a rule is `"skipped"` but the suite ran it, or label a rule the suite did
  not run (a gate stopped it: the message says which). A paused rule's labels are unused,
  never a failure;
- a label names no rule, or the case has a top-level `expected_score` (a graph's field: a
  suite has one score per rule).

Before anything runs, each rule's labels are checked against its graph as a graph's are
(`dagtui.labels.check`: a node the rule's graph lacks, with a "did you mean"; a verdict not
among the node's; a label of the wrong shape or range; a label off the path the rule's own
labels take): those are `LabelError`s (exit 2), or with `lenient` dropped and listed.

Labels live in the case's `expected`, keyed by rule id (a nested table) — the natural shape
in both JSONL and TOML:

    {"name": "span-006", ..., "expected": {
        "has_output": true,                           # an inline check rule: its verdict
        "is_english": true,
        "correctness": {"addresses": true, "agrees": false, "expected_score": 0},
        "deep_analysis": "skipped"}}                  # the suite must not run this rule

    [cases.expected.correctness]                      # the same in a TOML cases file
    addresses = true
    agrees = false

A graph rule's table maps its node ids to verdicts (task nodes: evidence text, optional;
geval leaves: a 0..10 score) plus an optional `expected_score` (0..1) for the rule; the
dotted form `"correctness.agrees": false` is accepted too. Budgets (`max_calls`) never bind
here, since the labels judge spends no calls. This module is the test itself;
`dagtui.commands.test.test_suite` loads the files, prints the report and gives the exit code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from dagtui.graph.checks import PythonConsent
from dagtui.labels.check import LabelChecker, LabelError, LabelProblem, check_agrees, nearest
from dagtui.run.labeltest import TOLERANCE
from dagtui.suite.gating import EVALUATED, PAUSED, SuiteResult, run_suite
from dagtui.suite.loader import SuiteLoad
from dagtui.suite.model import Rule, Suite
from dagtui.text import verdict_text

#: a rule's label meaning "the suite must not run this rule on this case"
SKIP_WORDS = ("skipped", "skip")
#: the key, inside a rule's table, for the score the rule should give the case
SCORE_KEY = "expected_score"


@dataclass
class RuleLabels:
    """One case's labels for one rule."""

    nodes: dict[str, Any] = field(default_factory=dict)
    skipped: bool = False
    score: float | None = None

    @property
    def any(self) -> bool:
        return bool(self.nodes) or self.score is not None


@dataclass
class CaseLabels:
    """One case's labels split by rule, and what could not be placed."""

    rules: dict[str, RuleLabels] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def of(self, rule: str) -> RuleLabels:
        return self.rules.get(rule) or RuleLabels()


def _split_key(key: str, rules: dict[str, Rule]) -> tuple[str, str] | None:
    """`"rule.node"` -> (rule, node), trying the longest rule id first (ids may hold dots)."""
    for rid in sorted(rules, key=len, reverse=True):
        if key.startswith(rid + ".") and len(key) > len(rid) + 1:
            return rid, key[len(rid) + 1:]
    return None


def split_labels(suite: Suite, graphs: dict[str, Any], expected: dict[str, Any]) -> CaseLabels:
    """Read a case's `expected` into per-rule labels (see the module docstring); whether
    each label fits its rule's graph is `rule_label_problems`'s question."""
    out = CaseLabels()

    def put(rid: str, node: str, value: Any) -> None:
        labels = out.rules.setdefault(rid, RuleLabels())
        if node == SCORE_KEY:
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                out.problems.append(f"rule '{rid}': {SCORE_KEY} must be a number from 0 to 1, "
                                    f"got {verdict_text(value, quote=True)}")
            else:
                labels.score = float(value)
            return
        labels.nodes[node] = value  # an unknown node id: `rule_label_problems` says so

    for key, value in expected.items():
        if key in suite.rules:
            if isinstance(value, dict):
                for node, label in value.items():
                    put(key, str(node), label)
            elif isinstance(value, str) and value.strip().lower() in SKIP_WORDS:
                out.rules.setdefault(key, RuleLabels()).skipped = True
            elif graphs.get(key) is not None and key in graphs[key].nodes:
                put(key, key, value)  # an inline check rule: its one node has the rule's id
            else:
                out.problems.append(
                    f"rule '{key}' is a graph: label its nodes with a table, e.g. "
                    f"\"{key}\": {{\"<node id>\": ...}}, or write \"{key}\": \"skipped\"")
            continue
        dotted = _split_key(str(key), suite.rules)
        if dotted is None:
            hint = nearest(str(key).split(".")[0], list(suite.rules))  # "rule.node": the rule
            out.problems.append(f"label '{key}' names no rule of the suite " + (
                f"(did you mean '{hint}'?)" if hint else f"(rules: {', '.join(suite.rules)})"))
            continue
        put(dotted[0], dotted[1], value)
    for rid, labels in out.rules.items():
        if labels.skipped and labels.any:
            out.problems.append(f"rule '{rid}' is labelled both \"skipped\" and with verdicts")
    return out


def rule_label_problems(checkers: dict[str, LabelChecker], case: Any, labels: CaseLabels
                        ) -> list[LabelProblem]:
    """The bad labels of one case, rule by rule: each rule's labels checked against its
    graph as a graph's labels are (`dagtui.labels.check`: unknown node, shape, verdict, range,
    off the labelled path), keyed `rule.node` and worded with the rule. `checkers`: rule id
    -> the `LabelChecker` of its graph."""
    found: list[LabelProblem] = []
    for rid, rule_labels in labels.rules.items():
        checker = checkers.get(rid)
        if checker is None or not rule_labels.nodes:
            continue
        view = rule_view(case, RuleLabels(dict(rule_labels.nodes)))
        found += [dataclasses.replace(p, key=f"{rid}.{p.key}", message=f"rule {rid!r}: "
                                      f"{p.message}") for p in checker.check(view)]
    return found


def drop_labels(labels: CaseLabels, problems: list[LabelProblem]) -> None:
    """`--lenient`: forget the rule labels `problems` name (keys `rule.node`)."""
    for p in problems:
        for rid, rule_labels in labels.rules.items():
            if p.key.startswith(rid + ".") and p.key[len(rid) + 1:] in rule_labels.nodes:
                del rule_labels.nodes[p.key[len(rid) + 1:]]
                break


def rule_view(case: Any, labels: RuleLabels) -> Any:
    """The case as one rule sees it: `expected` narrowed to that rule's node labels, so the
    labels judge finds them under plain node ids, and `expected_score` the rule's own."""
    if dataclasses.is_dataclass(case) and not isinstance(case, type) and hasattr(case, "expected"):
        return dataclasses.replace(case, expected=dict(labels.nodes), expected_score=labels.score)
    return case


@dataclass
class RuleTally:
    """Per-rule agreement across the dataset (the table printed after the cases)."""

    ran: int = 0
    gated: int = 0
    labelled: int = 0
    check_agree: int = 0
    check_disagree: int = 0
    unused: int = 0


@dataclass
class SuiteLabelTestResult:
    """A whole suite labels test: per-case problems (empty list: the case passed)."""

    suite: str
    cases: list[str]
    problems: dict[str, list[str]]
    paths: dict[str, list[str]]
    tallies: dict[str, RuleTally]
    result: SuiteResult
    calls: int = 0
    #: the bad labels `lenient` dropped before the test (`dagtui.labels.check`)
    ignored: list[LabelProblem] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return sum(1 for p in self.problems.values() if p)

    @property
    def passed(self) -> bool:
        return self.failures == 0


async def check_labels(load: SuiteLoad, cases: list[Any], *, concurrency: int = 8,
                       python: PythonConsent | None = None, lenient: bool = False
                       ) -> SuiteLabelTestResult:
    """Run the suite over `cases` with the labels judge and compare with the labels;
    `python`: the user's consent for python checks (see `dagtui.graph.checks.PythonConsent`).
    Labels that do not fit their rule's graph raise `LabelError` before anything runs;
    `lenient` drops them instead (listed in the report's `ignored`)."""
    from dagtui.judges.labels import LabelsJudge
    from dagtui.suite.runner import EngineRuleRunner

    suite = load.suite
    assert suite is not None
    split = {id(c): split_labels(suite, load.graphs, getattr(c, "expected", None) or {})
             for c in cases}
    ignored: list[LabelProblem] = []
    checkers = {rid: LabelChecker(g) for rid, g in load.graphs.items() if g is not None}
    for c in cases:
        bad = rule_label_problems(checkers, c, split[id(c)])
        drop_labels(split[id(c)], bad)
        ignored += bad
    if ignored and not lenient:
        raise LabelError(ignored)
    for c in cases:  # a graph's case-level score has no meaning for a suite: say so
        if getattr(c, "expected_score", None) is not None:
            split[id(c)].problems.append(
                f"expected_score {c.expected_score:g} at the top of the case means nothing "
                f"for a suite: put it in a rule's table, e.g. \"<rule>\": "
                f"{{\"{SCORE_KEY}\": {c.expected_score:g}}}")
    judge = LabelsJudge()

    def view(rule: Rule, case: Any) -> Any:
        return rule_view(case, split[id(case)].of(rule.id))

    runner = EngineRuleRunner(load, lambda _rule, _graph: judge, case_view=view,
                              python=python)
    try:
        result = await run_suite(suite, cases, runner, concurrency=concurrency, kinds=load.kinds)
    finally:
        await runner.aclose()
    tallies = {rid: RuleTally() for rid in result.rules}
    problems: dict[str, list[str]] = {}
    paths: dict[str, list[str]] = {}
    for i, (name, case) in enumerate(zip(result.cases, cases, strict=True)):
        labels = split[id(case)]
        found = list(labels.problems)
        shown: list[str] = []
        for rid, st in result.rules.items():
            rec = st.records[i]
            found += _rule_problems(rid, rec, labels.of(rid), tallies[rid], shown)
        problems[name] = found
        paths[name] = shown
    return SuiteLabelTestResult(suite.meta.name, list(result.cases), problems, paths, tallies, result,
                        calls=result.calls, ignored=ignored)


def _rule_problems(rid: str, rec: Any, labels: RuleLabels, tally: RuleTally,
                   shown: list[str]) -> list[str]:
    """What is wrong with one (case, rule) pair; appends the path taken to `shown`."""
    if labels.any:
        tally.labelled += 1
    if rec.state != EVALUATED or rec.outcome is None:
        tally.gated += 1
        shown.append(f"{rid}: not run ({rec.reason or rec.state})")
        if rec.state == PAUSED:
            tally.unused += 1 if labels.any else 0
            return []
        if labels.any:
            tally.unused += 1
            what = ", ".join(f"{n}={verdict_text(v, quote=True)}"
                             for n, v in labels.nodes.items()) or (
                f"{SCORE_KEY}={labels.score:g}")
            return [f"rule '{rid}' is labelled ({what}) but the suite did not run it: "
                    f"{rec.reason or rec.state}"]
        return []
    tally.ran += 1
    outcome = rec.outcome
    found: list[str] = []
    if labels.skipped:
        found.append(f"rule '{rid}' ran, but the labels say the suite should skip it")
    detail = outcome.detail
    steps = list(getattr(detail, "steps", []) or [])
    if isinstance(detail, dict):  # an inline check: the verdict code gave
        shown.append(f"{rid}: {verdict_text(detail.get('verdict'), quote=True)}")
        _compare_check(rid, rid, detail.get("verdict"), str(detail.get("reason", "")),
                       labels, tally, found)
    else:
        describe = getattr(detail, "describe_path", None)
        shown.append(f"{rid}: {describe() if callable(describe) else '?'}")
        for step in steps:
            if step.source == "check" and step.error is None:
                _compare_check(rid, step.node, step.answer, step.reason, labels, tally, found)
    if outcome.error is not None:
        node = getattr(detail, "error_node", None)
        if getattr(detail, "error_kind", None) == "label_missing" and node:
            found.insert(0, f"rule '{rid}', node '{node}': no label, and the suite's path "
                            f"reaches it; add \"{rid}\": {{\"{node}\": ...}} to the case's "
                            "\"expected\"")
        else:
            found.insert(0, f"rule '{rid}': {outcome.error}")
        return found
    reached = {s.node for s in steps} if steps else {rid}
    if labels.score is not None and outcome.score is not None \
            and abs(outcome.score - labels.score) > TOLERANCE:
        found.insert(0, f"rule '{rid}': score {outcome.score:.2f} but its {SCORE_KEY} is "
                        f"{labels.score:.2f}")
        unused = [n for n in labels.nodes if n not in reached]
        if unused:
            found.append(f"rule '{rid}': labels for nodes this path never reached: "
                         + ", ".join(f"{n}={verdict_text(labels.nodes[n], quote=True)}"
                                     for n in unused))
    return found


def _compare_check(rid: str, node: str, answer: Any, reason: str, labels: RuleLabels,
                   tally: RuleTally, found: list[str]) -> None:
    if node not in labels.nodes:
        return
    want = labels.nodes[node]
    if check_agrees(answer, want):
        tally.check_agree += 1
        return
    if isinstance(want, str) and want.lower() in ("true", "false"):
        want = want.lower() == "true"  # shown as the verdict it means
    tally.check_disagree += 1
    found.append(f"rule '{rid}', node '{node}': the check answered "
                 f"{verdict_text(answer, quote=True)} in code ({reason}); the label says "
                 f"{verdict_text(want, quote=True)}")

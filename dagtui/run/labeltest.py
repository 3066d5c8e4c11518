"""A graph's logic test against human labels, with zero LLM calls (`dagtui test GRAPH`).

Every judgement node answers with the label the case gives it (the labels judge), check
nodes run in code, and the score the labels lead to is compared with the case's
`expected_score`. A case fails on a score mismatch (with the labels its path never used, a
hint at where the graph and the human part), on an error, or when a check node's code
verdict disagrees with its label. The per-node agreement is counted on the way. This is the
logic alone; `dagtui.commands.test` prints it, and `dagtui.suite.labels` is the suite's
counterpart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.checks import PythonConsent
from dagtui.graph.model import Graph
from dagtui.labels.check import check_agrees
from dagtui.text import verdict_text

#: how far a score may be from `expected_score` and still match (float noise, not judgement)
TOLERANCE = 1e-6


@dataclass
class GraphLabelTestResult:
    """A graph's labels test: how many cases ran and failed, and per node the agreement
    counts (`reached`, `labelled`, `agree`, `disagree`, `unused`). The cases' results are
    not kept: each goes to `check_graph_labels`'s `on_case` as it ends, so a test of any
    number of cases runs in flat memory."""

    cases: int
    failures: int
    agree: dict[str, Counter]


#: what `check_graph_labels` tells the caller about each case: (case, result, problems);
#: empty problems: the case passed
CaseOutcome = Callable[[Any, Any, list[str]], None]


async def check_graph_labels(graph: Graph | CheckedGraph, cases: Iterable[Any], *,
                             python: PythonConsent | None = None,
                             on_case: CaseOutcome | None = None) -> GraphLabelTestResult:
    """Run every case through `graph` with the labels judge and compare with the labels;
    raises `dagtui.run.cases.CaseError` (before any case runs) when cases lack the graph's
    fields. `cases` may be read lazily (`dagtui.run.case_stream.CaseStream`: one pass checks
    the fields, one runs), and only the case running is in memory. `python`: the user's
    consent for python checks. A `CheckedGraph` (as `dagtui test` read it) is trusted, a
    bare Graph validated first (see `dagtui.run.engine.Engine`)."""
    from dagtui.judges.labels import LabelsJudge
    from dagtui.run.batch import preflight_all
    from dagtui.run.engine import Engine

    if iter(cases) is cases:  # a one-pass iterator: the preflight would use it up
        cases = list(cases)
    engine = Engine(graph, LabelsJudge(), python=python)
    preflight_all(engine, cases)
    agree: dict[str, Counter] = {nid: Counter() for nid in engine.graph.nodes}
    total = failures = 0
    for case in cases:
        result = await engine.run(case, check=False)
        problems = case_problems(case, result, agree)
        total += 1
        failures += bool(problems)
        if on_case is not None:
            on_case(case, result, problems)
    return GraphLabelTestResult(total, failures, agree)


def case_problems(case: Any, result: Any, agree: dict[str, Counter]) -> list[str]:
    """Why a case fails its logic test (empty when it passes); updates `agree`."""
    problems: list[str] = []
    expected = case.expected or {}
    reached = {s.node for s in result.steps}
    for step in result.steps:
        tally = agree.setdefault(step.node, Counter())
        tally["reached"] += 1
        if step.node in expected:
            tally["labelled"] += 1
            if step.source == "check" and step.error is None:
                if check_agrees(step.answer, expected[step.node]):
                    tally["agree"] += 1
                else:
                    tally["disagree"] += 1
                    problems.append(
                        f"check '{step.node}' answered {verdict_text(step.answer, quote=True)} "
                        f"in code ({step.reason}); the label says "
                        f"{verdict_text(expected[step.node], quote=True)}")
    for nid in expected:
        if nid not in reached:
            agree.setdefault(nid, Counter())["unused"] += 1
    if result.error is not None:
        problems.insert(0, f"error: {result.error}")
        return problems
    want = case.expected_score
    if want is not None and abs(result.score - want) > TOLERANCE:
        problems.insert(0, f"score {result.score:.2f} but expected_score is {want:.2f}")
        unused = [nid for nid in expected if nid not in reached]
        if unused:
            problems.append("labels for nodes this path never reached: " + ", ".join(
                f"{n}={verdict_text(expected[n], quote=True)}" for n in unused))
        return problems
    # a passing score with disagreeing checks still fails: the path is not the one labelled
    return problems

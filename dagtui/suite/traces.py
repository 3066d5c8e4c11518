"""`--trace-dir` for suite runs: one trace file per (case, rule) that was evaluated.

Each file is an ordinary `dagtui.report.trace.Trace` (the format `dagtui run --trace-dir` and the
debugger's save key write), so `dagtui step RULE_GRAPH.toml --trace FILE` opens the run of a
graph rule as it opens any graph's trace. Names say which case and which rule:
`<case number>_<case name>__<rule id>.json`, the case number being its 1-based place in the
dataset, so a directory listing groups a case's rules together in dataset order.

Pairs a gate stopped (dependencies, filter, sample, budget, paused) write nothing: they were
not evaluated, and the report already says which gate stopped them. An inline check rule
has no graph file of its own, so its trace holds the one-node graph the loader built (one
`check` step, score 1 or 0; `graph_path` is the suite file): it loads like any trace, for
reading and diffing, but there is no rule graph for `dagtui step` to open it against.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dagtui.graph.model import Graph
from dagtui.report.trace import PathStep, RunResult, StepRecord, save_trace
from dagtui.suite.gating import RuleOutcome, case_name
from dagtui.suite.model import Rule


class TraceWriter:
    """Writes the trace of each evaluated (case, rule) pair into `directory`.

    Built with the run's case list so a case object can be told back to its place in the
    dataset (the runner is handed case objects, not indices); cases are matched by identity.
    """

    def __init__(self, directory: str | Path, cases: Sequence[Any]) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._index = {id(case): i for i, case in enumerate(cases)}
        self.cases = cases
        self.written: list[Path] = []

    def write(self, rule: Rule, graph: Graph, case: Any, judge: Any, result: RunResult, *,
              seen: Any = None) -> Path:
        """Save one pair's trace. `case` is the dataset's case (it names the file); `seen`,
        when given, is the case as the rule saw it (its own labels only), which the trace
        keeps so its `expected` matches the graph's node ids."""
        index = self._index.get(id(case), len(self._index))
        path = save_trace(self.directory, index, graph, case if seen is None else seen, judge,
                          result, case_name(case, index), rule.id)
        self.written.append(path)
        return path


class CodeCheck:
    """Stands in for the judge in an inline check's trace: code answered, no model."""

    name = "check"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "llm": False}


def check_rule_result(rule: Rule, graph: Graph, case: Any, outcome: RuleOutcome) -> RunResult:
    """The `RunResult` an inline check rule would have had from the engine: one check step
    scoring 10 (holds) or 0 (does not), or the check's error."""
    node = graph.nodes[rule.id]
    name = case_name(case, 0)
    detail = outcome.detail if isinstance(outcome.detail, dict) else {}
    verdict = detail.get("verdict")
    step = StepRecord(node=node.id, node_type="check", source="check",
                      answer=verdict, reason=str(detail.get("reason", "")))
    result = RunResult(name, threshold=graph.metric.effective_threshold, steps=[step])
    if outcome.error is not None:
        step.error, step.error_kind = outcome.error, "check"
        result.error, result.error_kind = f"node '{node.id}': {outcome.error}", "check"
        result.error_node = node.id
        return result
    leaf = 10.0 if verdict is True else 0.0 if verdict is False else None
    step.leaf_score = leaf
    result.path = [PathStep(node.id, verdict, None, leaf)]
    if outcome.score is not None:
        result.score = outcome.score
        result.success = bool(outcome.success)
        result.leaf = node.id
        result.reason = step.reason
    else:  # a label from a python check: categorical, no score (as the suite reports it)
        result.error = f"check '{node.id}' answered the label {verdict!r}, not true/false"
        result.error_kind = "check"
    return result

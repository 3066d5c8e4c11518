"""The replay judge: answers from a saved trace, so a run can be reproduced offline.

Each node is answered with the value its step had in the trace. When the graph changed so
that the prompt differs from the recorded one, the replayed answer may no longer mean the
same thing: `strict=True` refuses such nodes, otherwise the reply says it was replayed
against a different prompt.
"""

from __future__ import annotations

from typing import Any

from dagtui.judges.base import Ask, Judge, JudgeError, Reply, check_value, scored_method


class ReplayJudge(Judge):
    name = "replay"
    llm = False
    needs_params = False

    def __init__(self, trace: Any, *, strict: bool = False) -> None:
        from dagtui.report.trace import Trace

        if not isinstance(trace, Trace):
            trace = Trace.load(trace)
        self.trace = trace
        self.strict = strict
        self.by_node = {s.node: s for s in trace.steps if s.error is None}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "trace_case": self.trace.case.get("name")}

    async def answer(self, ask: Ask) -> Reply:
        step = self.by_node.get(ask.node.id)
        if step is None:
            raise JudgeError("label_missing", f"the trace has no answer for node {ask.node.id!r}")
        same = step.prompt == ask.prompt.messages
        if self.strict and not same:
            raise JudgeError("other", f"node {ask.node.id!r}: the prompt differs from the "
                             "recorded one (graph or case changed)")
        reason = step.reason if same else f"[replayed against a different prompt] {step.reason}"
        value = check_value(ask, step.answer, step.raw)
        return Reply(value, reason, raw=step.raw, method=scored_method(ask, "replay"))

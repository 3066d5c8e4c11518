"""The labels judge: answers every node from the case's human labels (`expected`).

A logic test (`dagtui test`) asks "given these verdicts, does the graph route and score the
way I meant?" and needs no model at all: each judgement node answers with the label the human
wrote for it. A reached node without a label is an error naming the case and the node, so a
missing label is never mistaken for a verdict. Task nodes without a label produce a visible
placeholder (their children are answered from labels too, so evidence text is optional).
"""

from __future__ import annotations

from typing import Any

from dagtui.judges.base import Ask, Judge, JudgeError, Reply, check_value, scored_method
from dagtui.labels.check import is_unsure

NO_EVIDENCE = "(no evidence label for this task node)"


class LabelsJudge(Judge):
    name = "labels"
    llm = False
    needs_params = False

    async def answer(self, ask: Ask) -> Reply:
        expected: dict[str, Any] = ask.case.expected or {}
        nid = ask.node.id
        if ask.prompt.answer.evidence:  # a task: its label is the evidence text, optional
            text = expected.get(nid, NO_EVIDENCE)
            if is_unsure(ask.node, text):
                text = NO_EVIDENCE
            if isinstance(text, dict):  # {contains = [...], text = "..."}: see calibration.items
                from dagtui.calibration.items import TaskLabelError, task_label

                try:
                    text = task_label(text).evidence or NO_EVIDENCE
                except TaskLabelError as exc:
                    raise JudgeError("out_of_set", f"case {ask.case.name!r} ({ask.case.where}): "
                                     f"the label for task node {nid!r}: {exc}") from None
            return Reply(check_value(ask, text), "from the case's labels")
        if nid not in expected or is_unsure(ask.node, expected[nid]):
            unsure = nid in expected  # "unsure" (dagtui.labels.check): no verdict to follow
            raise JudgeError(
                "label_missing",
                f"case {ask.case.name!r} ({ask.case.where}) "
                + (f"is labelled unsure at node {nid!r}, so its path below is unknown"
                   if unsure else f"has no label for node {nid!r}")
                + f", which this path reaches; add \"{nid}\" to its \"expected\""
                + (f" (one of {ask.prompt.labels})" if ask.prompt.labels else ""),
            )
        value = check_value(ask, ask.prompt.answer.coerce(expected[nid]))  # "true": true
        return Reply(value, "from the case's labels", method=scored_method(ask, "label"))

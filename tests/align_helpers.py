"""Shared by tests/test_align.py and tests/benchmarks/bench_align.py: a graph with one
binary node (and one with a task node above it), labelled cases, and the stub judge's
scripted answers: the judge agrees with the labels only when the criteria (or a task's
instructions) hold `PHRASE`, or when it is shown worked examples (`follow_examples`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from stub_server import first_user, prompt_kind

from dagtui.judges.prompts import EXAMPLES_HEAD

PHRASE = "counting a thank-you as polite"
GRAPH = """\
[metric]
name = "Align"
threshold = 0.5
cases = "align.cases.jsonl"

# the one question
[nodes.polite]
type = "binary"
criteria = "Is the reply polite?"  # the wording under test
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, score = 10 }]
"""
TASK_GRAPH = """\
[metric]
name = "AlignTask"
threshold = 0.5
cases = "align.cases.jsonl"

[nodes.extract]
type = "task"
instructions = "Quote the reply."
output_label = "Quote"
params = ["actual_output"]
children = ["polite"]

# the question below the task
[nodes.polite]
type = "binary"
criteria = "Is the quoted reply polite?"
verdicts = [{ verdict = false, score = 0 }, { verdict = true, score = 10 }]
"""


def labels(n: int) -> dict[str, bool]:
    """Case name -> its label: alternately true and false."""
    return {f"c{i:02d}": i % 2 == 0 for i in range(n)}


def write(tmp: Path, n: int = 20, graph: str = GRAPH) -> Path:
    path = tmp / "align.toml"
    path.write_text(graph)
    rows = [{"name": name, "actual_output": f"CASE-{name} reply", "expected": {"polite": label}}
            for name, label in labels(n).items()]
    (tmp / "align.cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


class Judge:
    """The stub's responder (see the module docstring); counts proposer calls."""

    def __init__(self, n: int, proposals: list[str] | None = None,
                 follow_examples: bool = False) -> None:
        self.labels = labels(n)
        self.proposals = proposals or []
        self.follow_examples = follow_examples
        self.proposer_calls = 0

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = first_user(body)
        if text.startswith("The step's current"):
            self.proposer_calls += 1
            return {"reason": "scripted proposals", "steps": self.proposals}
        kind = prompt_kind(body)
        if kind == "task":
            good = PHRASE in text.split("\n\n")[0]
            quoted = re.search(r"CASE-c\d+ reply", text)
            assert quoted is not None
            return {"reason": "quoted", "output": ("GOOD " if good else "") + quoted.group(0)}
        case = re.search(r"CASE-(c\d+)", text.rsplit(EXAMPLES_HEAD, 1)[-1].split(
            "End of the worked examples.")[-1])
        assert case is not None
        question = text.split("\n\n")[0]
        right = PHRASE in question or "Quote:\nGOOD" in text \
            or (self.follow_examples and EXAMPLES_HEAD in text)
        verdict = self.labels[case.group(1)] if right else True
        return {"reason": f"scripted {verdict}", "verdict": verdict}

"""Starter graph files for `dagtui edit` when the named file does not exist yet.

A starter is a small, valid, commented graph: it opens with no problems in the editor and
shows by example how the pieces fit (a data edge, a gate, a leaf score). Each one validates
clean (tests/test_tomlio.py checks it), so a new user starts from something that runs.
"""

from __future__ import annotations

__all__ = ["DEFAULT_STARTER", "STARTERS", "starter_text"]

_BLANK = '''\
# A new dagtui graph. A task node extracts evidence; a binary gate judges it.
# Every path through the graph ends in a fixed score (0..10, divided by 10).
[metric]
name = "My metric"
threshold = 0.5           # success when score >= threshold (0..1)
model = "gpt-4.1-mini"    # the judge: any litellm model string

[nodes.extract]
type = "task"
instructions = "List the claims made in `actual_output`, one per line."
params = ["actual_output"]
output_label = "Claims"
children = ["supported"]  # data edge: `supported` reads the extracted claims

[nodes.supported]
type = "binary"
criteria = "Is every claim supported by the question in `input`?"
params = ["input"]
verdicts = [
  { verdict = true, score = 10 },
  { verdict = false, score = 0 },
]
'''

_GATE_GEVAL = '''\
# A hard gate first, a subjective G-Eval leaf for whatever passes it.
# Anything that is "wrong, full stop" belongs in the gate; only survivors get the
# fuzzier (and dearer) quality judgement.
[metric]
name = "Gate then quality"
threshold = 0.5
model = "gpt-4.1-mini"    # pin the judge: a silent model swap is a silent rubric change

[nodes.policy]
type = "binary"
label = "Policy violation"
criteria = "Does the response in `actual_output` break the rules stated in `context`?"
params = ["input", "actual_output", "context"]
verdicts = [
  { verdict = true, score = 0 },          # a violation ends it: no second opinion
  { verdict = false, then = "quality" },
]

[nodes.quality]
type = "geval"
name = "Helpfulness"
params = ["input", "actual_output"]
# explicit steps: no extra call to invent them, and the same steps on every run
evaluation_steps = [
  "Check whether the response answers what was asked in `input`.",
  "Check whether the tone is clear and polite.",
]
'''

STARTERS: dict[str, str] = {
    "blank": _BLANK,
    "gate-geval": _GATE_GEVAL,
}

DEFAULT_STARTER = "blank"


def starter_text(name: str = DEFAULT_STARTER) -> str:
    """The text of starter `name`; raises KeyError listing the known names."""
    try:
        return STARTERS[name]
    except KeyError:
        known = ", ".join(sorted(STARTERS))
        raise KeyError(f"unknown starter {name!r}; known starters: {known}") from None

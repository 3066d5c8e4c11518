"""Starter graph files for `dagtui edit` when the named file does not exist yet.

A starter is a small, valid, commented graph: it opens with no problems in the editor and
shows by example how the pieces fit (a data edge, a gate, a leaf score). Each one validates
clean (tests/test_tomlio.py checks it), so a new user starts from something that runs.
`blank` is the least that validates: one judgement, no structure to delete first.
"""

from __future__ import annotations

__all__ = ["DEFAULT_STARTER", "STARTERS", "starter_description", "starter_text"]

_BLANK = '''\
# The smallest graph that runs: one yes/no judgement scoring 10 or 0.
# Write its criteria, then add nodes with `a` (a task extracts evidence for a judgement;
# a verdict's `then` continues the path at another node).
[metric]
name = "My metric"
threshold = 0.5           # success when score >= threshold (0..1)
model = "gpt-4.1-mini"    # the judge: any litellm model string

[nodes.judge]
type = "binary"
criteria = "Does `actual_output` do what the request in `input` asks?"
params = ["input", "actual_output"]
verdicts = [
  { verdict = true, score = 10 },
  { verdict = false, score = 0 },
]
'''

_EXTRACT_JUDGE = '''\
# Extract, then judge: a task node lists the claims, a binary node judges them.
# Every path through the graph ends in a fixed score (0..10, divided by 10).
[metric]
name = "My metric"
threshold = 0.5           # success when score >= threshold (0..1)
model = "gpt-4.1-mini"    # the judge: any litellm model string

[nodes.extract]
type = "task"
instructions = "List the claims made in `actual_output`, one per line."
output_label = "Claims"
params = ["actual_output"]
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

_EXTRACT_CLASSIFY = '''\
# Extract, gate, classify: one task pulls out the evidence, a binary gate rejects what is
# missing outright, a non-binary node grades the rest. Every label has a fixed score.
[metric]
name = "Structure"
threshold = 0.5
model = "gpt-4.1-mini"

[nodes.extract]
type = "task"
instructions = "List the section headings in `actual_output`, one per line, in order."
output_label = "Headings"
params = ["actual_output"]
children = ["complete", "order"]   # both judgements read the headings

[nodes.complete]
type = "binary"
criteria = "Do the headings include every section the request in `input` asks for?"
params = ["input"]
verdicts = [
  { verdict = false, score = 0 },     # a missing section ends it here
  { verdict = true, then = "order" },
]

[nodes.order]
type = "non_binary"
criteria = "Classify the order of the headings against the order the request asks for."
params = ["input"]
verdicts = [
  { verdict = "Same order", score = 10 },
  { verdict = "One section out of place", score = 5 },
  { verdict = "Mostly out of order", score = 2 },
]
'''

_CHECK_FIRST = '''\
# Code check first, judge second: a free, exact check in code rejects the obvious
# failures, so the judge is only paid for answers worth judging.
[metric]
name = "Checked answer"
threshold = 0.5
model = "gpt-4.1-mini"

[nodes.not_empty]
type = "check"
check = "regex"
param = "actual_output"
pattern = '\\S'                     # at least one non-space character
verdicts = [
  { verdict = false, score = 0 },
  { verdict = true, then = "correct" },
]

[nodes.correct]
type = "binary"
criteria = "Does `actual_output` answer the question in `input` correctly?"
params = ["input", "actual_output"]
verdicts = [
  { verdict = true, score = 10 },
  { verdict = false, score = 0 },
]
'''

_CLAIMS = '''\
# Judge every claim on its own: a task lists the claims, a map node asks of each claim
# alone whether the context supports it, and scores the share supported (3 of 5: 6/10).
[metric]
name = "Supported claims"
threshold = 0.8
model = "gpt-4.1-mini"

[nodes.extract]
type = "task"
instructions = "List every factual claim made in `actual_output`, one claim per line."
output_label = "Claim"
params = ["actual_output"]
children = ["supported"]   # data edge: `supported` judges each extracted line

[nodes.supported]
type = "map"
criteria = "Is this claim supported by the `context`?"
params = ["context"]
aggregate = "fraction"     # a leaf: passing claims / claims x 10, exactly
empty = true               # no claim made: nothing unsupported
max_items = 20             # at most 20 calls; the rest are reported as not judged
unsure = "unscored"        # context that cannot settle a claim: the case is unscored
'''

#: in the order the editor offers them: the first is what `enter` picks in the chooser
STARTERS: dict[str, str] = {
    "extract-judge": _EXTRACT_JUDGE,
    "blank": _BLANK,
    "gate-geval": _GATE_GEVAL,
    "extract-classify": _EXTRACT_CLASSIFY,
    "check-first": _CHECK_FIRST,
    "claims": _CLAIMS,
}

DEFAULT_STARTER = "blank"


def starter_text(name: str = DEFAULT_STARTER) -> str:
    """The text of starter `name`; raises KeyError listing the known names."""
    try:
        return STARTERS[name]
    except KeyError:
        known = ", ".join(sorted(STARTERS))
        raise KeyError(f"unknown starter {name!r}; known starters: {known}") from None


def starter_description(name: str) -> str:
    """The first sentence of the starter's opening comment (what it is for), whole: the
    comment wraps at the file's line length, so its first line alone can stop mid-sentence.
    The editor's chooser and `dagtui edit --list-starters` show it beside the name."""
    words: list[str] = []
    for line in STARTERS.get(name, "").splitlines():
        if not line.startswith("#"):
            break
        words.append(line.lstrip("# ").strip())
    comment = " ".join(w for w in words if w)
    if not comment:
        return name
    end = comment.find(". ")
    return comment if end < 0 else comment[:end + 1]

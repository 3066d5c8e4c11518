"""A map node's list and its aggregate: which items it judges, and how their verdicts make
one.

A map node (`dagtui.graph.model.MapNode`) is a child of a task that lists items (one per
line, or a JSON list); it asks its `criteria` of each item with a call of its own and
aggregates the answers (`aggregate`):

- `"all"`, `"any"`, `{ at_least = 0.8 }` (the share of items): a true/false verdict, followed
  like a binary node's;
- `"fraction"`: a leaf scoring the share of passing items times 10, kept exactly (3 of 5 is
  6.0).

An empty list gives the node's `empty` (true: passes, fraction 10; false: fails, fraction 0);
`max_items` caps the items judged, the rest reported as not judged. Pure functions, shared by
the engine (`dagtui.run.map_run`), the label check and the validator.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import Any

from dagtui.record import FrozenRecord, frozen

#: the aggregates a map node may name as a string
AGGREGATE_WORDS = ("all", "any", "fraction")
#: a list marker before an item (`- `, `* `, `• `, `1. `, `2) `), taken off
_MARKER = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")


def split_items(output: Any) -> list[str]:
    """A task's output as a map node's items: a JSON list (also as text), else one item
    per non-empty line, list markers taken off."""
    if isinstance(output, list):
        return [_item_text(x) for x in output]
    if output is None:
        return []
    text = str(output).strip()
    if text.startswith("["):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, list):
            return [_item_text(x) for x in data]
    items = []
    for line in text.splitlines():
        line = _MARKER.sub("", line).strip()
        if line:
            items.append(line)
    return items


def _item_text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def aggregate_problem(value: Any) -> str | None:
    """Why `value` is not a usable `aggregate` (None when it is)."""
    if isinstance(value, str):
        if value in AGGREGATE_WORDS:
            return None
        return f'aggregate "{value}" is not "all", "any", "fraction" or {{ at_least = 0.8 }}'
    if isinstance(value, dict) and set(value) == {"at_least"}:
        share = value["at_least"]
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
            return f"aggregate's at_least is a share of the items, 0..1; got {share!r}"
        return None
    return 'aggregate must be "all", "any", "fraction" or { at_least = 0.8 }'


def is_fraction(aggregate: Any) -> bool:
    """True for `aggregate = "fraction"`: the node is a scored leaf."""
    return aggregate == "fraction"


@frozen
class Outcome(FrozenRecord):
    """What a map node's items came to: `verdict` (true/false) for a verdict aggregate,
    `score` (0..10) for a fraction leaf."""

    passed: int
    judged: int
    verdict: bool | None = None
    score: float | None = None


def aggregate(aggregate: Any, answers: list[bool], empty: bool) -> Outcome:
    """The node's outcome from its judged items' answers (true: the item passes)."""
    passed = sum(1 for a in answers if a is True)
    n = len(answers)
    if is_fraction(aggregate):
        score = (10.0 if empty else 0.0) if n == 0 else float(Fraction(10 * passed, n))
        return Outcome(passed, n, score=score)
    if n == 0:
        return Outcome(0, 0, verdict=empty)
    if aggregate == "any":
        verdict = passed >= 1
    elif isinstance(aggregate, dict):
        # exact: 4 of 5 passes at_least = 0.8 (no 0.8 * 5 = 4.000000000000001)
        verdict = Fraction(passed, n) >= Fraction(str(aggregate["at_least"]))
    else:
        verdict = passed == n
    return Outcome(passed, n, verdict=verdict)

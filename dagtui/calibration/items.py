"""Task-node labels: the evidence text a person expects, and the items it must contain.

A case's `expected` gives a task node one of:

- a string: the evidence as a person would write it. `dagtui test` feeds it to the children;
  calibrate shows it beside the judge's evidence (no recall: free text cannot be scored);
- a list of strings: items the evidence must contain, e.g. `"extract": ["Intro", "Body"]`;
  `dagtui test` feeds them, one per line, as the evidence;
- a table `{"contains": [...], "text": "..."}`: both at once (either may be left out); the
  text, else the items one per line, is what `dagtui test` feeds.

An item counts as found when it occurs in the evidence ignoring case and runs of whitespace:
extraction rewrites spacing and capitals freely, and a heading is still the heading. Recall per
task node is items found / items labelled over every case the labels reach it on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TaskLabel:
    """What a task label says: the expected text (or None) and the required items (or None)."""

    text: str | None = None
    items: tuple[str, ...] | None = None

    @property
    def evidence(self) -> str | None:
        """The evidence a labels-only run feeds to the children."""
        if self.text is not None:
            return self.text
        return "\n".join(self.items) if self.items is not None else None


class TaskLabelError(ValueError):
    """A task label of a shape none of the forms above allows."""


def task_label(value: Any) -> TaskLabel:
    """Read a task node's label (see the module docstring); TaskLabelError if malformed."""
    if isinstance(value, str):
        return TaskLabel(text=value)
    if isinstance(value, list):
        return TaskLabel(items=_items(value))
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"contains", "text"})
        if unknown:
            raise TaskLabelError(f"a task label table takes 'contains' and 'text', not "
                                 f"{', '.join(map(repr, unknown))}")
        text = value.get("text")
        if text is not None and not isinstance(text, str):
            raise TaskLabelError("a task label's 'text' must be a string")
        contains = value.get("contains")
        return TaskLabel(text=text, items=None if contains is None else _items(contains))
    raise TaskLabelError(f"a task label is a string, a list of items or a table with "
                         f"'contains' / 'text', not {type(value).__name__}")


def _items(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskLabelError("a task label's items must be a list of strings")
    return tuple(value)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def split_items(items: tuple[str, ...] | list[str], evidence: Any) -> tuple[list[str], list[str]]:
    """(found, missing): which labelled items occur in the evidence (see the docstring)."""
    hay = _norm(evidence if isinstance(evidence, str) else str(evidence or ""))
    found = [i for i in items if _norm(i) in hay]
    return found, [i for i in items if i not in found]

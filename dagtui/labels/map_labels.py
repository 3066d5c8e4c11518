"""Labels of a map node: one per item, as a list in the items' order
(`"claims": [true, false, true]`) or a table keyed by item text
(`"claims": {"The sky is blue" = true}`); an item may be labelled `"unsure"` (the person
could not tell, `dagtui.labels.check.UNSURE`): it is left out of agreement, and on a node
declaring `unsure` the labels judge answers it "cannot tell".

The label check (`dagtui.labels.check`) asks `map_label_problem` of each; the labels judge
answers each item's call from `item_label`; the check's labelled walk follows the verdict the
labels aggregate to (`labelled_outcome`). A plain `true`/`false` labels the node's verdict
alone (no item is labelled).
"""

from __future__ import annotations

from typing import Any

from dagtui.graph.mapping import aggregate
from dagtui.graph.model import MapNode, Verdict
from dagtui.graph.unsure import CANNOT_TELL, UNSURE
from dagtui.text import verdict_text

#: what `item_label` returns for an item the label does not cover
NO_LABEL = object()


def _item_value(value: Any) -> Any:
    """An item's label as the engine compares it ("true" is true)."""
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def person_unsure(value: Any) -> bool:
    """An item labelled "unsure" (`dagtui.graph.unsure.UNSURE`)."""
    return value == UNSURE


def map_label_problem(node: MapNode, value: Any) -> tuple[str, str] | None:
    """(class, message) when `value` cannot label map node `node`, else None."""
    nid = node.id
    if isinstance(value, bool):
        if node.is_scored_leaf:
            return "wrong_shape", (f"map node {nid!r} is a fraction leaf; label its items "
                                   "(a list of true/false, or a table keyed by item text)")
        return None
    if isinstance(value, list):
        entries = list(enumerate(value, start=1))
    elif isinstance(value, dict):
        entries = list(value.items())
    else:
        return "wrong_shape", (f"map node {nid!r} is labelled {verdict_text(value, quote=True)};"
                               " its label is one per item: a list of true/false in the items' "
                               "order, or a table keyed by item text")
    for where, item in entries:
        got = _item_value(item)
        if got is True or got is False or person_unsure(got):
            continue
        which = f"item {where}" if isinstance(where, int) else f"item {where!r}"
        return "not_a_verdict", (f"map node {nid!r}: the label of {which} is "
                                 f"{verdict_text(item, quote=True)}, not true, false or \"unsure\"")
    return None


def item_label(value: Any, index: int, text: str) -> Any:
    """The label of the item at `index` (0-based) with text `text`; `NO_LABEL` when the
    label does not cover it (a shorter list, a table without that text, a plain verdict)."""
    if isinstance(value, list):
        return _item_value(value[index]) if index < len(value) else NO_LABEL
    if isinstance(value, dict):
        return _item_value(value[text]) if text in value else NO_LABEL
    return NO_LABEL


def item_values(value: Any) -> list[Any]:
    """The item labels in order (a table's in its order); empty for a plain verdict."""
    if isinstance(value, list):
        return [_item_value(v) for v in value]
    if isinstance(value, dict):
        return [_item_value(v) for v in value.values()]
    return []


def labelled_outcome(node: MapNode, value: Any) -> Verdict | None:
    """The branch a map node's labels lead to: the verdict their aggregate picks (the first
    `max_items` item labels), the unsure branch when one says "cannot tell", or the plain
    verdict given; None for a fraction leaf (it ends the path) or no such verdict."""
    if node.is_scored_leaf:
        return None
    if isinstance(value, bool):
        return node.verdict_for(value)
    values = item_values(value)
    if node.max_items is not None:
        values = values[:node.max_items]
    if any(person_unsure(v) for v in values):  # the routed branch, else no known path
        return node.verdict_for(CANNOT_TELL)
    outcome = aggregate(node.aggregate, [v is True for v in values], node.empty)
    return node.verdict_for(outcome.verdict)

"""The text fields of the node form: one-line (`FieldInput`) and multi-line (`LongText`).

Both take `ctrl+a` as select-all (`field.select_all`, one binding id for both, so one remap
moves it in every field): before, it selected all in a long field but went to the start
of the line in a one-line one, Textual's default for an Input (`home` still does that).
"""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input, TextArea

#: select the field's whole text
SELECT_ALL = Binding("ctrl+a", "select_all", "select all", show=False, id="field.select_all")


class LongText(TextArea):
    """A TextArea where `ctrl+a` selects the whole text.

    Single-line fields select their text when tabbed into, so typing replaces it; a long
    text keeps its caret (one usually edits inside it) and offers select-all instead, in
    place of TextArea's second key for "start of line" (`home` still does that).
    """

    BINDINGS = [SELECT_ALL]


class FieldInput(Input):
    """A one-line field of the form (a node's label, a verdict's score, ...): `ctrl+a`
    selects the whole value, as in a long field."""

    BINDINGS = [SELECT_ALL]

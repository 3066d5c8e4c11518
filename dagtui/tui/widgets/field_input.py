"""The one-line text field of the node form (`FieldInput`) and the select-all key it shares
with the multi-line one (`long_text.LongText`).

Kept apart from `long_text` so the form (and the editor's start) imports no TextArea: only
a page with a long field needs one, and no page is built before the first frame.

Both take `ctrl+a` as select-all (`field.select_all`, one binding id for both, so one remap
moves it in every field): before, it selected all in a long field but went to the start
of the line in a one-line one, Textual's default for an Input (`home` still does that).
"""

from __future__ import annotations

from textual.widgets import Input

from dagtui.tui.keys import FIELD_KEYS

#: select the field's whole text
SELECT_ALL = FIELD_KEYS[0].binding()


class FieldInput(Input):
    """A one-line field of the form (a node's label, a verdict's score, ...): `ctrl+a`
    selects the whole value, as in a long field."""

    BINDINGS = [SELECT_ALL]

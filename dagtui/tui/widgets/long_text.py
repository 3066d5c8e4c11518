"""The multi-line text field of the node form (`LongText`), imported where a page first
needs one (TextArea is among the costlier widgets to import; see `field_input` for the
one-line field and the select-all key both share)."""

from __future__ import annotations

from textual.widgets import TextArea

from dagtui.tui.widgets.field_input import SELECT_ALL


class LongText(TextArea):
    """A TextArea where `ctrl+a` selects the whole text.

    Single-line fields select their text when tabbed into, so typing replaces it; a long
    text keeps its caret (one usually edits inside it) and offers select-all instead, in
    place of TextArea's second key for "start of line" (`home` still does that).
    """

    BINDINGS = [SELECT_ALL]

"""The multi-line field of the node form (criteria, instructions, evaluation steps)."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import TextArea


class LongText(TextArea):
    """A TextArea where `ctrl+a` selects the whole text.

    Single-line fields select their text when tabbed into, so typing replaces it; a long
    text keeps its caret (one usually edits inside it) and offers select-all instead, in
    place of TextArea's second key for "start of line" (`home` still does that).
    """

    BINDINGS = [
        Binding("ctrl+a", "select_all", "select all", show=False, id="field.select_all"),
    ]

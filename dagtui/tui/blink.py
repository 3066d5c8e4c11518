"""Blinking cursors off when the app asks for none (tests, snapshots, screenshots: the
picture must not depend on timing).

Its own small module, not in `screens.dialogs`: the editor settles its main screen at start,
and importing the dialogs (and what they import) then cost the first frame ~30 ms.
"""

from __future__ import annotations

from textual.dom import DOMNode

#: the widgets with a cursor that blinks, by type name: a type selector also matches
#: subclasses, and naming them spares importing TextArea before a page needs one
BLINKING = "Input, TextArea"


def settle_blink(root: DOMNode) -> None:
    """No blinking cursors under `root` when `root.app.cursor_blink` is False."""
    if getattr(root.app, "cursor_blink", True):
        return
    for widget in root.query(BLINKING):
        widget.cursor_blink = False  # type: ignore[attr-defined]

"""How the screens give way on a small terminal, in one place (the editor, the debugger).

Below `NARROW_COLS` columns the footer packs its keys tighter (`compact`), so the keys a
person needs to find their way (esc, F1/?) are never the ones cut off; below `SHORT_ROWS`
rows the editor's bottom panels shrink (the `short` class in editor.tcss).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the editor mounts its footer after the first frame, and imports it then
    from textual.widgets import Footer

#: below this many rows the editor's bottom panels get fewer rows
SHORT_ROWS = 32
#: below this many columns the footers are compact and the panes narrow
NARROW_COLS = 110


def narrow(width: int) -> bool:
    """True for a terminal too narrow for the roomy layout."""
    return width < NARROW_COLS


def fit_footer(footer: Footer, width: int) -> None:
    """Pack the footer's keys tighter on a narrow terminal."""
    footer.compact = narrow(width)

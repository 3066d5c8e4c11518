"""How the screens give way on a small terminal, in one place (the editor, the debugger).

Below `NARROW_COLS` columns the footer packs its keys tighter (`compact`), so the keys a
person needs to find their way (esc, F1/?) are never the ones cut off; below `SHORT_ROWS`
rows the editor's bottom panels shrink (the `short` class in editor.tcss). A tree row wider
than its panel gives up detail before facts (`fit_row`): a node's type goes, then its label
is cut short, and its id and problem counts stay; a row that still does not fit scrolls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

from rich.text import Text

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


class Piece(NamedTuple):
    """A part of a row, and what it may give up when the row is too wide: `keep` (never),
    `drop` (goes whole, before anything is cut) or `cut` (ends in an ellipsis, down to
    `least` cells of text after its leading spaces; with `least` 0 it goes whole once
    fewer than two would be left)."""

    text: Text
    give: Literal["keep", "drop", "cut"] = "keep"
    least: int = 0


def fit_row(pieces: list[Piece], room: int) -> Text:
    """The row in at most `room` cells where giving up detail can do it: `drop` pieces go
    first, then `cut` pieces shrink, the rightmost first. What is left is never cut, so a row
    of facts wider than `room` comes back wider (the tree scrolls sideways for it)."""
    widths = [p.text.cell_len for p in pieces]
    over = sum(widths) - room
    for give in ("drop", "cut"):
        for i in reversed(range(len(pieces))):
            if over <= 0:
                break
            piece = pieces[i]
            if piece.give != give or widths[i] == 0:
                continue
            keep = 0
            if give == "cut":
                # shown at all, a cut piece keeps its spacing, a character and the ellipsis
                fewest = min(_lead(piece.text) + max(piece.least, 2), widths[i])
                keep = max(widths[i] - over, 0 if piece.least == 0 else fewest)
                if keep < fewest:
                    keep = 0
            over -= widths[i] - keep
            widths[i] = keep
    out = Text()
    for piece, width in zip(pieces, widths, strict=True):
        if width == piece.text.cell_len:
            out.append_text(piece.text)
        elif width:
            part = piece.text.copy()
            part.truncate(width, overflow="ellipsis")
            out.append_text(part)
    return out


def narrowest(pieces: list[Piece]) -> int:
    """The cells of `fit_row(pieces, 0)`: the row with all its detail given up."""
    width = 0
    for piece in pieces:
        if piece.give == "keep":
            width += piece.text.cell_len
        elif piece.give == "cut" and piece.least:
            width += min(piece.text.cell_len, _lead(piece.text) + max(piece.least, 2))
    return width


def _lead(text: Text) -> int:
    """The spaces a piece starts with (its gap from the piece before)."""
    plain = text.plain
    return len(plain) - len(plain.lstrip(" "))

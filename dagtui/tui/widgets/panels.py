"""Bottom panels: the live problems list and the path analysis table."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.markup import escape
from rich.style import Style
from rich.text import Text
from textual.coordinate import Coordinate
from textual.message import Message
from textual.strip import Strip
from textual.widgets import DataTable

from dagtui.diagnostics import Diagnostic, Severity
from dagtui.text import verdict_text
from dagtui.tui.keys import PROBLEMS_KEYS, bindings

SEVERITY_MARK = {
    Severity.ERROR: ("✖", "bold red"),
    Severity.WARNING: ("⚠", "yellow"),
    Severity.INFO: ("ℹ", "cyan"),
}


class ProblemsTable(DataTable):
    """Every diagnostic of the graph as it is now; enter jumps to the node and field, `v`
    shows the whole message (a long one is cut at the panel's edge)."""

    class ProblemChosen(Message):
        """Enter on a problem: jump to its node and field."""

        def __init__(self, diagnostic: Diagnostic) -> None:
            super().__init__()
            self.diagnostic = diagnostic

    BINDINGS = bindings(PROBLEMS_KEYS)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self.diagnostics: list[Diagnostic] = []
        self._shown: list[tuple[object, ...]] | None = None
        #: (text, style) of every cell of the rows on screen, to rewrite only what changed
        self._signatures: list[tuple[tuple[str, str], ...]] = []

    def on_mount(self) -> None:
        self.add_column("", key="sev", width=1)
        self.add_column("code", key="code", width=6)
        self.add_column("line", key="line", width=5)
        self.add_column("where", key="where", width=22)
        self.add_column("message", key="message")

    def show(self, diagnostics: list[Diagnostic], *, checking: bool = False) -> None:
        """Show `diagnostics`. `checking`: the graph is not validated yet (just opened), so
        an empty list means "not known yet", not "valid".

        Only rows whose text changed are rewritten, in place: a keystroke that adds or
        fixes one problem costs one row, and a same-sized list never relayouts the screen.
        """
        shown: list[tuple[object, ...]] = [(d.code, d.line, d.node, d.field, d.message)
                                           for d in diagnostics]
        shown.append(("checking",) if checking else ())
        if shown == self._shown:
            return
        self._shown = shown
        self.diagnostics = list(diagnostics)
        rows = problem_rows(diagnostics, checking)
        signatures = [tuple(_cell_signature(cell) for cell in row) for row in rows]
        old = self._signatures
        self._signatures = signatures
        if not old or self.row_count != len(old):
            row = self.cursor_row
            self.clear()
            self.add_rows(rows)
            self.move_cursor(row=min(row, len(rows) - 1), animate=False)
            return
        keep = min(len(old), len(rows))
        columns = list(self.columns.values())
        for r in range(keep):
            if signatures[r] == old[r]:
                continue
            for c, cell in enumerate(rows[r]):
                if signatures[r][c] != old[r][c]:
                    wider = (columns[c].auto_width
                             and cell_len(signatures[r][c][0]) > columns[c].content_width)
                    self.update_cell_at(Coordinate(r, c), cell, update_width=wider)
        for extra in [row.key for row in self.ordered_rows[keep:]]:
            self.remove_row(extra)
        if len(rows) > keep:
            self.add_rows(rows[keep:])
        if self.cursor_row >= len(rows):
            self.move_cursor(row=len(rows) - 1, animate=False)

    def render_line(self, y: int) -> Strip:
        """A row, or below the last row what is behind the table.

        The table fills its pane (editor.tcss), so a problem added or fixed does not resize
        it (a resize laid the screen out a second time: 1,000 nodes, ~40 ms more per such
        keystroke); the rows it does not fill look as before, when the table ended at its
        last row."""
        header = self.header_height if self.show_header else 0
        row = y if y < header else y + self.scroll_offset.y
        if row < self.virtual_size.height:
            return super().render_line(y)
        behind = self.background_colors[0]
        return Strip.blank(self.size.width, Style(bgcolor=behind.rich_color))

    def action_view_message(self) -> None:
        """The highlighted problem in full, in a dialog that can also jump to it."""
        if not 0 <= self.cursor_row < len(self.diagnostics):
            return
        from dagtui.tui.screens.dialogs import ChoiceScreen

        d = self.diagnostics[self.cursor_row]
        where = problem_rows([d])[0][3].plain
        line = f" (line {d.line})" if d.line else ""

        def done(choice: str | None) -> None:
            if choice == "goto":
                self.post_message(self.ProblemChosen(d))

        # escaped: the dialog reads markup, and a message may quote `[metric]`
        self.app.push_screen(ChoiceScreen(f"{d.code} {where}{line}", escape(d.message),
                                          [("goto", "Go to it", "primary"),
                                           ("cancel", "Close", "default")]), done)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.diagnostics):
            self.post_message(self.ProblemChosen(self.diagnostics[event.cursor_row]))


def problem_rows(diagnostics: list[Diagnostic], checking: bool = False) -> list[tuple[Any, ...]]:
    """The problems table's rows: mark, code, line, where (node.field), message."""
    rows: list[tuple[Any, ...]] = []
    for d in diagnostics:
        mark, style = SEVERITY_MARK.get(d.severity, ("·", ""))
        where = (d.node or "metric" if d.field or d.node else "file")
        if d.field:
            where += f".{d.field}"
        # Text, not str: a DataTable reads a str cell as markup, and a message quoting
        # `[metric]` or a label like "[A] good" would lose its brackets
        rows.append((Text(mark, style=style), Text(d.code, style=style),
                     str(d.line) if d.line else "", Text(where), Text(d.message)))
    if not rows and checking:
        rows.append(("", "", "", "", Text("checking…", style="dim")))
    elif not rows:
        rows.append((Text("✔", style="green"), "", "", "",
                     Text("no problems: the graph is valid", style="green")))
    return rows


def _cell_signature(cell: Any) -> tuple[str, str]:
    if isinstance(cell, Text):
        return cell.plain, str(cell.style)
    return str(cell), ""


class PathsTable(DataTable):
    """`dagtui.graph.paths` as a table: one row per verdict combination: score, pass, calls, leaf,
    verdicts taken. The short columns come first: a narrow terminal cuts the end of a row,
    and there the long verdict chain loses a few words instead of the result column."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", **kwargs)
        self._key: object = None

    def on_mount(self) -> None:
        self.add_column("#", width=3)
        self.add_column("score", width=5)
        self.add_column("result", width=6)
        self.add_column("calls", width=5)
        self.add_column("leaf")
        self.add_column("verdicts taken")

    def show(self, report: Any, threshold: float) -> None:
        if report is self._key:
            return
        self._key = report
        self.clear()
        if report is None:
            return
        rows = []
        for i, info in enumerate(getattr(report, "paths", []) or [], 1):
            score = getattr(info, "score", None)
            passes = getattr(info, "passes", None)
            rows.append((
                str(i),
                _score_text(score, info),
                Text("pass", style="green") if passes else
                Text("fail", style="red") if passes is not None else "",
                str(getattr(info, "calls", "")),
                Text(describe_leaves(getattr(info, "leaves", ()))),
                Text(describe_choices(getattr(info, "choices", ()))),
            ))
        self.add_rows(rows)


def describe_choices(choices: Any) -> str:
    """`present=true → order=Correct order` from whatever shape the analysis gives."""
    parts = []
    items = choices.items() if isinstance(choices, dict) else choices
    for item in items or ():
        if isinstance(item, tuple | list) and len(item) == 2:
            parts.append(f"{item[0]}={verdict_text(item[1])}")
        else:
            parts.append(str(item))
    return " → ".join(parts) if parts else "(none)"


def describe_leaves(leaves: Any) -> str:
    out = []
    for leaf in leaves or ():
        describe = getattr(leaf, "describe", None)
        node = getattr(leaf, "node", None)
        text = describe() if callable(describe) else str(leaf)
        out.append(f"{node}: {text}" if node and not text.startswith(str(node)) else text)
    return ", ".join(out) if out else "no leaf"


def _score_text(score: Any, info: Any) -> str:
    """0..1 score of a fixed leaf; `judge` when a G-Eval leaf scores at run time."""
    if score is None:
        return "judge" if getattr(info, "is_geval", False) else "—"
    if isinstance(score, float):
        return f"{score:.2f}".rstrip("0").rstrip(".") or "0"
    return str(score)

"""The calibration view (`K` in the editor): see `CalibrationScreen`."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from dagtui.tui.calibration import badge, matrix_text, pct, probe_text


class CalibrationScreen(ModalScreen[tuple[str, str] | None]):
    """The calibration view: nodes with their kappa; the selected node's confusion matrix and
    its disagreeing cases (dropped items for a task node, close calls marked). `enter` on a
    case closes the view with (case, node): the editor opens the debugger on that case,
    paused at that node."""

    CSS_PATH = "calibration.tcss"  # beside this module
    BINDINGS = [Binding("escape", "close", "back", id="calibration.close")]

    def __init__(self, data: dict[str, Any], selected: str | None = None,
                 stale: dict[str, list[str]] | None = None, case: str | None = None) -> None:
        """`selected`: the node shown first; `stale`: node -> why its figures no longer hold
        (`dagtui.tui.calibration.stale_nodes`); `case`: its case row highlighted (the view
        reopened after the debugger it opened on that case closes)."""
        super().__init__()
        self.data = data
        self.stale = stale or {}
        self.case = case
        self.node_ids = [n for n, v in data["nodes"].items()
                         if isinstance(v, dict) and v.get("type") != "check"]
        self.selected = selected if selected in self.node_ids else (
            self.node_ids[0] if self.node_ids else None)

    def compose(self) -> ComposeResult:
        with Vertical(id="cal-box"):
            yield Static(self._head(), id="cal-head")
            with Horizontal():
                yield OptionList(*[Option(self._node_row(n), id=n) for n in self.node_ids],
                                 id="cal-nodes")
                with Vertical(id="cal-right"):
                    yield Static("", id="cal-matrix")
                    yield OptionList(id="cal-cases")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#cal-box").border_title = "Calibration"
        nodes = self.query_one("#cal-nodes", OptionList)
        if self.selected is not None:
            nodes.highlighted = self.node_ids.index(self.selected)
        nodes.focus()
        self._show(self.selected)
        if self.case is not None:
            cases = self.query_one("#cal-cases", OptionList)
            for i in range(cases.option_count):
                if (cases.get_option_at_index(i).id or "").split(":", 1)[-1] == self.case:
                    cases.highlighted = i
                    cases.focus()
                    break

    def _head(self) -> Text:
        d = self.data
        judge = d.get("judge") or {}
        e2e = d.get("end_to_end") or {}
        text = Text.assemble((f"{d.get('graph', '')}", "bold"),
                             f" · judge {judge.get('model') or judge.get('name', '?')} · "
                             f"{d.get('cases', 0)} cases · {d.get('samples', 1)} sample(s)")
        if self.stale:
            names = ", ".join(list(self.stale)[:4]) + (" …" if len(self.stale) > 4 else "")
            text.append(f"\nstale: {len(self.stale)} node{'s' if len(self.stale) != 1 else ''}"
                        f" ({names}) changed since this calibration — run dagtui calibrate "
                        "again", style="bold yellow")
        if e2e.get("scored"):
            text.append(f"\nend to end: exact {pct(e2e.get('exact'))}, pass/fail "
                        f"{pct(e2e.get('pass_fail'))} — enter on a case opens the debugger "
                        "there, esc returns", style="dim")
        return text

    def _node_row(self, nid: str) -> Text:
        text = Text(f"{nid[:18]:18} ")
        mark = badge(self.data, nid, self.stale.get(nid))
        if mark is not None:
            text.append_text(mark)
        return text

    def _show(self, nid: str | None) -> None:
        matrix = self.query_one("#cal-matrix", Static)
        cases = self.query_one("#cal-cases", OptionList)
        cases.clear_options()
        if nid is None:
            matrix.update("no calibrated nodes")
            return
        node = self.data["nodes"][nid]
        text = matrix_text(nid, node)
        if self.stale.get(nid):
            text.append(f"\nstale: {', '.join(self.stale[nid])}", style="bold yellow")
        probed = probe_text(self.data, nid)
        if probed is not None:
            text.append("\n\n")
            text.append_text(probed)
        matrix.update(text)
        rows: list[Option] = []
        for d in node.get("disagreements") or []:
            rows.append(Option(f"✖ {d['case']} — label {d['label']}, judge {d['verdict']}",
                               id=f"case:{d['case']}"))
        for d in node.get("dropped") or []:
            rows.append(Option(f"✖ {d['case']} — dropped {', '.join(d['missing'])}",
                               id=f"case:{d['case']}"))
        for c in node.get("close_calls") or []:
            votes = ", ".join(f"{k} {v}" for k, v in (c.get("votes") or {}).items())
            rows.append(Option(f"≈ {c['case']} — close call ({votes})",
                               id=f"close:{c['case']}"))
        if rows:
            cases.add_options(rows)
            cases.highlighted = 0
        else:
            cases.add_option(Option("no disagreeing case", disabled=True))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "cal-nodes" and event.option.id is not None:
            self.selected = event.option.id
            self._show(self.selected)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "cal-nodes":
            self.query_one("#cal-cases", OptionList).focus()
        elif event.option.id and self.selected is not None:
            self.dismiss((event.option.id.split(":", 1)[1], self.selected))

    def action_close(self) -> None:
        self.dismiss(None)

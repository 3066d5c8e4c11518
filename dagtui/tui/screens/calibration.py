"""The calibration view (`K` in the editor): see `CalibrationScreen`; and the editor's
criteria loop (`remeasure`): the selected node re-measured on its labelled cases."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from dagtui.graph.checks import PythonConsent
    from dagtui.tui.screens.editor import EditorScreen
    from dagtui.tui.state import EditorState

from dagtui.tui.calibration import (
    align_text,
    badge,
    matrix_text,
    pct,
    probe_text,
    remeasure_text,
)


def judge_settings(data: dict[str, Any]) -> dict[str, Any] | None:
    """The judge the saved calibration asked (model, endpoint, temperature, retries,
    timeout), so alignment and re-measuring ask the same questions and calibrate's cached
    answers are free; None when it ran no model (a Python judge)."""
    judge = data.get("judge") or {}
    if not judge.get("model"):
        return None
    out = {"judge": judge["model"], "api_base": judge.get("api_base")}
    for key in ("temperature", "retries", "timeout"):
        if judge.get(key) is not None:
            out[key] = judge[key]
    return out


class EditorLink(Protocol):
    """What the calibration view and the criteria loop use of the editor screen they were
    opened from (`dagtui.tui.screens.editor.EditorScreen`; a Protocol, as that module
    imports this one)."""

    state: EditorState
    calibration_file: str | Path | None

    @property
    def python(self) -> PythonConsent: ...

    async def sync(self, *, rebuild_form: bool = False) -> None: ...


def _graph_now(editor: EditorLink | None) -> Any:
    """A snapshot of the editor's graph as it is now (unsaved edits included), safe to
    measure in a thread while editing goes on: a node edit replaces the node object."""
    if editor is None or editor.state.read_only:
        return None
    state = editor.state
    return state.graph.replace(nodes=dict(state.graph.nodes))


class CalibrationScreen(ModalScreen[tuple[str, str] | None]):
    """The calibration view: nodes with their kappa; the selected node's confusion matrix and
    its disagreeing cases (dropped items for a task node, close calls marked). `enter` on a
    case closes the view with (case, node): the editor opens the debugger on that case,
    paused at that node."""

    CSS_PATH = "calibration.tcss"  # beside this module
    BINDINGS = [Binding("escape", "close", "back", id="calibration.close"),
                Binding("a", "align", "align node", id="calibration.align",
                        tooltip="align the selected node with its labels (dagtui align: "
                                "candidates on train, the best proven on held-out); enter "
                                "on 'apply' makes it an undoable edit")]

    def __init__(self, data: dict[str, Any], selected: str | None = None,
                 stale: dict[str, list[str]] | None = None, case: str | None = None,
                 editor: EditorLink | None = None) -> None:
        """`selected`: the node shown first; `stale`: node -> why its figures no longer hold
        (`dagtui.tui.calibration.stale_nodes`); `case`: its case row highlighted (the view
        reopened after the debugger it opened on that case closes)."""
        super().__init__()
        self.editor = editor
        self.data = data
        self.stale = stale or {}
        self.case = case
        self.node_ids = [n for n, v in data["nodes"].items()
                         if isinstance(v, dict) and v.get("type") != "check"]
        self.selected = selected if selected in self.node_ids else (
            self.node_ids[0] if self.node_ids else None)
        #: node -> its finished alignment (`dagtui.calibration.align.Alignment`)
        self.aligned: dict[str, Any] = {}
        #: node -> the running alignment's progress line
        self.aligning: dict[str, str] = {}

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
        rows: list[Option] = []
        if nid in self.aligned or nid in self.aligning:
            result = self.aligned.get(nid)
            text.append("\n\n")
            text.append_text(align_text(result, self.aligning.get(nid, "")))
            if result is not None and result.winner is not None:
                mark = "improved" if result.improved else "not improved on held-out"
                rows.append(Option(f"⏎ apply {result.winner.name} to {nid} ({mark}; "
                                   "ctrl+z in the editor undoes it)", id=f"apply:{nid}"))
        matrix.update(text)
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
        elif event.option.id and event.option.id.startswith("apply:"):
            self.apply_alignment(event.option.id.split(":", 1)[1])
        elif event.option.id and self.selected is not None:
            self.dismiss((event.option.id.split(":", 1)[1], self.selected))

    # -- alignment ---------------------------------------------------------------------
    def action_align(self) -> None:
        """Align the selected node in a worker thread (`dagtui.calibration.align`), on the
        editor's graph as it is now, the calibration's cases and judge (its cache: a second
        alignment is free); progress and the result show in the node's panel."""
        nid = self.selected
        if nid is None:
            return
        if self.aligning:
            self.notify(f"an alignment of {next(iter(self.aligning))} is running",
                        severity="warning")
            return
        settings = judge_settings(self.data)
        graph = _graph_now(self.editor)
        cases = self.data.get("cases_file")
        problem = ("this calibration ran no model: align needs one (dagtui calibrate "
                   "--model M)" if settings is None else
                   "the graph did not parse: fix it first" if graph is None else
                   "the calibration names no cases file" if not cases else "")
        if problem:
            self.notify(f"cannot align {nid}: {problem}", severity="warning")
            return
        self.aligning[nid] = "starting: the labels' walk"
        self.aligned.pop(nid, None)
        self._show(nid)
        self.run_worker(lambda: self._align_thread(nid, graph, str(cases), settings or {}),
                        thread=True, group="align", exclusive=True)

    def _align_thread(self, nid: str, graph: Any, cases: str,
                      settings: dict[str, Any]) -> None:
        from dagtui.calibration.align import a_align

        def progress(done: int, total: int, what: str) -> None:
            self.app.call_from_thread(self._progress, nid, f"{done}/{total} measured: {what}")

        try:
            result = asyncio.run(a_align(graph, nid, cases, progress=progress,
                                         python=self.editor.python if self.editor else None,
                                         **settings))
        except Exception as exc:  # AlignRefused (too few labels), a judge error, ...
            self.app.call_from_thread(self._align_failed, nid, str(exc))
            return
        self.app.call_from_thread(self._align_done, nid, result)

    def _progress(self, nid: str, line: str) -> None:
        if nid in self.aligning:
            self.aligning[nid] = line
            if self.selected == nid:
                self._show(nid)

    def _align_failed(self, nid: str, why: str) -> None:
        self.aligning.pop(nid, None)
        self.notify(f"cannot align {nid}: {why}", severity="error", timeout=8)
        if self.selected == nid:
            self._show(nid)

    def _align_done(self, nid: str, result: Any) -> None:
        self.aligning.pop(nid, None)
        self.aligned[nid] = result
        if self.selected == nid:
            self._show(nid)
            cases = self.query_one("#cal-cases", OptionList)
            if result.winner is not None:
                cases.highlighted = 0
                cases.focus()

    def apply_alignment(self, nid: str) -> None:
        """The winner applied to the node as it is in the editor now, as one undoable
        edit (`EditorState.edit`: ctrl+z takes it back); the view closes on the editor."""
        result = self.aligned.get(nid)
        if result is None or result.winner is None or self.editor is None:
            return
        state = self.editor.state
        winner = result.winner

        def change() -> None:
            node = winner.apply(state.graph.nodes[nid])
            node.id = nid
            state.graph.nodes[nid] = node

        try:
            state.edit(f"align {nid} ({winner.name})", change)
        except Exception as exc:  # EditRefused: the file did not parse meanwhile
            self.notify(f"not applied: {exc}", severity="error")
            return
        self.app.call_later(self.editor.sync, rebuild_form=True)
        self.app.notify(f"aligned {nid} with {winner.name}: ctrl+z undoes it; ctrl+s saves",
                        timeout=4)
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


# --------------------------------------------------------------------------- criteria loop


def remeasure(editor: EditorScreen) -> None:
    """The editor's criteria loop: the selected node, as edited now, measured alone on its
    labelled cases by teacher forcing (`align.a_remeasure`, the saved calibration's cases
    and judge, through its cache: an unchanged wording costs nothing), in a worker thread;
    kappa calibrated → now shows beside the node's criteria (or instructions)."""
    from dagtui.tui.calibration import load_calibration

    state = editor.state
    nid = state.selected
    data = load_calibration(state.path, editor.calibration_file)
    settings = judge_settings(data) if data else None
    graph = _graph_now(editor)
    problem = ("no node selected" if nid is None else
               "no calibration result: run dagtui calibrate first" if data is None else
               "this calibration ran no model (dagtui calibrate --model M)"
               if settings is None else
               "the graph did not parse" if graph is None else
               f"{nid} is not a calibrated node" if nid not in (data.get("nodes") or {})
               else "the calibration names no cases file" if not data.get("cases_file")
               else "")
    if problem:
        editor.notify(f"cannot re-measure: {problem}", severity="warning")
        return
    editor.notify(f"re-measuring {nid} on its labelled cases…", timeout=2)
    assert data is not None and nid is not None
    cases = str(data["cases_file"])

    def work() -> None:
        from dagtui.calibration.align import a_remeasure, text_field

        try:
            measure = asyncio.run(a_remeasure(graph, nid, cases,
                                              python=editor.python,
                                              **(settings or {})))
        except Exception as exc:
            editor.app.call_from_thread(editor.notify, f"cannot re-measure {nid}: {exc}",
                                    severity="error")
            return
        line = remeasure_text(data, nid, measure)
        editor.app.call_from_thread(_remeasured, editor, nid, text_field(graph.nodes[nid]), line)

    editor.run_worker(work, thread=True, group="remeasure", exclusive=True)


def _remeasured(editor: EditorScreen, nid: str, field: str, line: Text) -> None:
    """Put the re-measured kappa beside the node's wording when its form is shown (the next
    check of an edit replaces it: the figure then no longer describes the text)."""
    editor.field_message(nid, field, line)
    editor.notify(f"{nid}: {line.plain}", timeout=6)

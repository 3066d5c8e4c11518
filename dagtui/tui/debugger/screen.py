"""The step debugger: one case through one graph, one node at a time.

Left, the path tree (each node pending / next / running / done with its verdict / skipped /
failed; under each judgement its verdicts, the one taken ticked and the leaf reached marked)
and the result. Right, the selected step in tabs: the exact prompt, the raw response, the
evidence, the verdict and reason, and the usage. Judge work runs in an exclusive Textual
worker, so the screen keeps drawing while a model (or a person) answers; `x` cancels it and
a failing call becomes a failed step, never a crash.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Footer, Static, Tree
from textual.worker import Worker, WorkerState

from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.checks import PythonConsent
from dagtui.graph.loader import GraphError
from dagtui.graph.model import Graph, TaskNode
from dagtui.judges.base import Judge
from dagtui.kinds import decides
from dagtui.report.trace import Trace
from dagtui.run.cases import Case, select_case
from dagtui.tui.blink import settle_blink
from dagtui.tui.calibration import forced_overrides, label_note, load_calibration
from dagtui.tui.debugger.actions import RunActions
from dagtui.tui.debugger.human import TuiHumanJudge
from dagtui.tui.debugger.palette import DebuggerCommands, DebuggerNodes
from dagtui.tui.debugger.panes_text import (
    calls_text,
    evidence_text,
    prompt_text,
    response_text,
    result_lines,
    usage_text,
    verdict_text,
)
from dagtui.tui.debugger.run_model import DebugRun, answer_summary
from dagtui.tui.debugger.widgets import PathTree, StepPanes
from dagtui.tui.fit import fit_footer
from dagtui.tui.keys import (
    DEBUGGER_KEYS,
    DEBUGGER_NOTES,
    DEBUGGER_PANES,
    bindings,
    debugger_groups,
    pane_keys,
)
from dagtui.tui.screens.base import DagtuiScreen

WORKER_GROUP = "debugger-judge"

class DebuggerScreen(RunActions, DagtuiScreen):
    """Step one case through `graph` with `judge`.

    `cases`: the cases to pick from (`case` picks the first shown: name, index or a Case);
    `judge`: a Judge instance (a `TuiHumanJudge` is attached to this app on mount);
    `trace`: open this saved trace read-only instead of running;
    `standalone`: esc quits the app (dagtui step) instead of returning to the editor;
    `on_edit(node_id, field, value)`: told about "edit & re-run" edits (the editor applies
    them to its own graph so they can be saved);
    `python`: the consent for python checks (`--allow-python`); when it does not allow them,
    the screen asks once per function (`human.ask_python`) and the answer holds for as long
    as the consent object lives (the editor keeps one for its whole session).
    """

    #: loaded with the screen, in either app (the dialogs have their own, `dialogs.tcss`)
    CSS_PATH = Path(__file__).with_name("debugger.tcss")
    #: ctrl+p lists every action below by name, and the nodes by id or label (`palette.py`)
    COMMANDS = {DebuggerCommands, DebuggerNodes}
    BINDINGS = bindings(DEBUGGER_KEYS) + bindings(pane_keys(DEBUGGER_PANES))
    #: F1 is the debugger's list of keys: Textual's "Keys" panel is left out of ctrl+p
    SHOW_KEYS_PANEL = False

    #: the judge worker is stepping: most keys wait (hidden or dimmed), `x` stops it;
    #: setting it refreshes the footer's keys (`check_action`)
    busy: reactive[bool] = reactive(False, init=False, bindings=True)
    #: a saved trace shown read-only instead of the live run (esc returns to it); setting it
    #: refreshes the footer's keys, since most of them act on the live run only
    viewing: reactive[DebugRun | None] = reactive(None, init=False, bindings=True)
    #: the path tree's node whose step the right-hand panes show; every assignment redraws
    #: them (`always_update`: a redraw after a step shows the same node's new record)
    selected: reactive[str | None] = reactive(None, init=False, always_update=True)

    def __init__(self, graph: Graph, graph_path: str | Path | None = None, *,
                 cases: list[Case] | None = None, case: Case | str | int | None = None,
                 judge: Judge | None = None, trace: Trace | None = None,
                 cases_source: str | None = None, standalone: bool = False,
                 judge_factory: Callable[[str], Judge] | None = None,
                 on_edit: Callable[[str, str, Any], None] | None = None,
                 python: PythonConsent | None = None, pause_at: str | None = None,
                 calibration: dict[str, Any] | None = None,
                 force_labels: bool = False,
                 on_cases_file: Callable[[str], None] | None = None,
                 checked: CheckedGraph | None = None) -> None:
        """`checked`: `graph`'s check when the caller made one (`dagtui step`), so the
        run does not validate the graph again."""
        super().__init__()
        #: cases written with `i` that no cases file holds yet: esc offers to append them
        self.unsaved_cases: list[Case] = []
        #: `node.field` edited with `e`; with no editor behind (`dagtui step`) they live
        #: only in this run, so esc asks before they go and offers to write them back
        self.unsaved_edits: list[str] = []
        #: the value of each of those edits, (node, field) -> value, to write back
        self.edit_values: dict[tuple[str, str], Any] = {}
        #: told the cases file's name (relative to the graph) when cases are appended to a
        #: new one, so the editor can set `[metric].cases`
        self.on_cases_file = on_cases_file
        #: run on to this node and stop before it (the calibration view's jump); with
        #: `force_labels`, the other labelled nodes answer with their labels on the way
        self.pause_at = pause_at
        self.force_labels = force_labels
        #: a calibration result (else the one `dagtui calibrate` saved for this graph):
        #: close calls are marked beside the verdicts
        self.calibration = calibration if calibration is not None else \
            load_calibration(graph_path or graph.path)
        self.graph = graph
        self.graph_path = str(graph_path or graph.path or "graph.toml")
        self.cases = list(cases or [])
        self.cases_source = cases_source
        self.standalone = standalone
        self.judge_factory = judge_factory
        self.python = python if python is not None else PythonConsent.from_env()
        self.on_edit = on_edit
        self.fatal: str | None = None
        chosen: Case | None = None
        if isinstance(case, Case):
            chosen = case
        elif self.cases:
            try:
                chosen = select_case(self.cases, case if case is not None else 0)
            except Exception as exc:  # noqa: BLE001 - shown in the banner
                self.fatal = str(exc)
                chosen = self.cases[0]
        self.live: DebugRun | None = None
        try:
            self.live = DebugRun(graph, judge, chosen, python=self.python, checked=checked,
                                 person=TuiHumanJudge())
        except GraphError as exc:
            errors = [d.format() for d in exc.diagnostics if d.is_error][:4]
            self.fatal = "the graph cannot run:\n" + "\n".join(errors)
        if trace is not None:  # before mount: nothing to redraw yet
            self.set_reactive(DebuggerScreen.viewing, DebugRun(graph, None, trace=trace))

    # ------------------------------------------------------------------ layout

    @property
    def run(self) -> DebugRun | None:
        """What is shown: a saved trace being viewed, else the live run."""
        return self.viewing or self.live

    def compose(self) -> ComposeResult:
        with Horizontal(id="dbg-header"):
            yield Static("", id="dbg-header-left")
            yield Static("", id="dbg-header-right")
        yield Static("", id="dbg-banner")
        with Horizontal(id="dbg-main"):
            with Vertical(id="dbg-left"):
                yield PathTree(id="dbg-tree")
                yield Static("", id="dbg-result")
            with Vertical(id="dbg-right"):
                yield StepPanes(id="dbg-panes")
        # the footer's room goes to the debugger's own keys; F1 names ctrl+p
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        tree = self.query_one(PathTree)
        tree.border_title = "Path"
        self.query_one("#dbg-result", Static).border_title = "Result"
        self._attach_judge()
        self._attach_python()
        run = self.run
        if run is not None:
            if self.live is not None and self.live.case is not None:
                self.live.restart()
            tree.build(run.graph, run.order, run)  # labelled as built: no relabel pass
        tree.focus()
        settle_blink(self)
        fit_footer(self.query_one(Footer), self.app.size.width)
        self.refresh_view()
        if run is not None and run.order:
            tree.select_node(run.order[0])
        if self.pause_at is not None and self.live is not None and self.viewing is None:
            self._pause_at(self.pause_at)

    def on_resize(self, event: events.Resize) -> None:
        fit_footer(self.query_one(Footer), event.size.width)

    def _pause_at(self, nid: str) -> None:
        """Run on to `nid` and stop before it (a breakpoint there, then continue)."""
        run = self.live
        if run is None or nid not in run.graph.nodes:
            return
        if self.force_labels and run.case is not None:
            run.overrides.update(forced_overrides(run.graph, run.case, nid))
            run.restart()
        run.breakpoints.add(nid)
        if run.next_node() == nid:
            self.query_one(PathTree).select_node(nid)
            self.refresh_view()
        else:
            self._start("continue")

    def _attach_python(self) -> None:
        """Python checks not allowed up front are asked about, in this app."""
        if not self.python.allow and self.python.ask is None:
            from dagtui.tui.debugger.human import ask_python

            self.python.ask = functools.partial(ask_python, self.app)

    def _attach_judge(self) -> None:
        if self.live is not None and isinstance(self.live.person, TuiHumanJudge):
            self.live.person.app = self.app  # asked when a node's unsure is "human"
        judge = self.live.judge if self.live else None
        if judge is not None and getattr(judge, "name", "") == "human" and hasattr(judge, "app"):
            judge.app = self.app

    # ------------------------------------------------------------------ drawing

    def refresh_view(self) -> None:
        run = self.run
        left = self.query_one("#dbg-header-left", Static)
        right = self.query_one("#dbg-header-right", Static)
        name = Path(self.graph_path).name
        if run is None:
            left.update(f"dagtui step — {name}")
            right.update("")
            self._banner(self.fatal or "nothing to run")
            return
        case = run.trace.case.get("name") if run.trace else (run.case.name if run.case else "—")
        judge = self._judge_text(run)
        head = Text.assemble(("dagtui step", "bold"), f" · {name} · case “{case}” · "
                             f"judge {judge}", (" · read-only trace" if run.read_only
                                                else "", "bold magenta"))
        head.no_wrap, head.overflow = True, "ellipsis"
        left.update(head)
        done, most = run.progress()
        calls, _, _ = run.totals()
        # tokens and cost are in the Result box and the Usage tab: the header keeps room
        # for the graph, the case and the judge
        right.update(f"  step {done}/{most} · {calls_text(calls)}")
        notes = []
        if self.fatal:
            notes.append(self.fatal)
        if run.read_only and run.trace is not None and not run.trace.matches(run.graph):
            notes.append("⚠ this trace was recorded on a different version of the graph")
        if run.problem:
            notes.append(f"⚠ {run.problem}")
        self._banner("\n".join(notes))
        tree = self.query_one(PathTree)
        tree.refresh_from(run)
        self._show_result(run)
        self.selected = tree.selected_node

    def _judge_text(self, run: DebugRun) -> str:
        if run.trace is not None:
            info = run.trace.judge
            return str(info.get("model") or info.get("name") or "?")
        judge = run.judge
        if judge is None:
            return "—"
        model = getattr(judge, "model", None)
        return str(model) if model else judge.name

    def _banner(self, text: str) -> None:
        banner = self.query_one("#dbg-banner", Static)
        banner.update(text)
        banner.set_class(bool(text), "shown")

    def _show_result(self, run: DebugRun) -> None:
        box = self.query_one("#dbg-result", Static)
        result = run.result()
        box.remove_class("pass", "fail", "error")
        if result is None:
            nxt = run.next_node()
            if run.running:
                msg = f"asking the judge about {run.running}…  (x stops)"
            elif nxt and not run.started:
                msg = f"ready: n steps into {nxt}, c runs to the end"
            elif nxt:
                bp = " (breakpoint)" if nxt in run.breakpoints else ""
                msg = f"paused before {nxt}{bp}"
            elif run.case is None:
                msg = "no case yet: i writes one" + (", p picks one" if self.cases else "")
            else:
                msg = "no run yet"
            if run.started:
                box.update(Text.assemble(msg, "\n", (running_totals(run), "dim")))
            else:
                box.update(msg)
            return
        head, details = result_lines(result, run.overridden)
        box.add_class(result.status)
        style = "bold green" if result.status == "pass" else "bold red"
        box.update(Text.assemble((head, style), "\n", details))

    def _show_step(self, nid: str | None) -> None:
        run = self.run
        panes = self.query_one(StepPanes)
        right = self.query_one("#dbg-right")
        if run is None or nid is None or nid not in run.graph.nodes:
            panes.show({pid: "" for pid, _ in DEBUGGER_PANES})
            right.border_title = ""
            return
        node = run.graph.nodes[nid]
        rec = run.record(nid)
        received: dict[str, Any] = {}
        for parent in run.topo.parents.get(nid, []):
            if isinstance(run.graph.nodes.get(parent), TaskNode):
                prec = run.record(parent)
                if prec is not None and prec.error is None:
                    received[parent] = prec.answer
        title = f"{nid} · {node.type}"
        # the human label beside the verdict once there is one (never while a person is
        # being asked: the label would answer for them)
        case = run.case if run.trace is None and rec is not None else None
        note = label_note(case.expected, nid, rec.answer if rec.error is None else None,
                          self.calibration, case.name).plain \
            if case is not None and rec is not None else ""
        if rec is not None:
            what = "verdict" if decides(node.type) else "result"
            title += f" ── {what}: {answer_summary(rec)}"
            if note:
                title += f" · {note}"
        elif run.running == nid:
            title += " ── asking…"
        right.border_title = title
        panes.show({
            "prompt": prompt_text(rec, run.preview(nid) if rec is None else None),
            "response": response_text(rec),
            "evidence": evidence_text(rec, received),
            "verdict": (f"human     {note}\n" if note else "") + verdict_text(rec, node.type),
            "usage": usage_text(rec),
        })

    @on(Tree.NodeHighlighted, "#dbg-tree")
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        data = event.node.data
        if data is not None:
            self.selected = data[0]

    def watch_selected(self, nid: str | None) -> None:
        self._show_step(nid)

    # ------------------------------------------------------------------ state of keys

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        run = self.live
        # a saved trace is read-only: its footer shows only what works on it (hidden, not
        # dimmed, so the keys it offers are the ones that do something)
        viewing = self.viewing is not None
        if action == "stop":
            return self.busy
        if action in ("step", "continue_run"):
            if viewing or run is None:
                return False
            if self.busy:
                return None
            return True if not run.finished and run.case is not None else None
        if action == "breakpoint":
            return not (viewing or run is None)  # fine while a step runs
        if action in ("restart", "pick_case", "edit_case", "pick_judge", "override",
                      "edit_node"):
            if viewing or run is None:
                return False
            if self.busy:
                return False  # hidden while a step runs: the footer keeps room for x stop
            if action == "pick_judge" and self.judge_factory is None:
                return None
            if action == "pick_case" and not self.cases:
                return None
            return True
        if action == "save_trace":
            return True if self.run is not None and self.run.started else None
        return True

    # ------------------------------------------------------------------ running

    def action_step(self) -> None:
        self._start("step")

    def action_continue_run(self) -> None:
        self._start("continue")

    def _start(self, mode: str) -> None:
        run = self.live
        if run is None or self.busy or self.viewing is not None:
            return
        if run.session is None and run.restart() is None:
            self.refresh_view()
            self.notify(run.problem or "cannot start", severity="error", title="cannot run")
            return
        self.busy = True
        self._advance(mode)

    @work(exclusive=True, exit_on_error=False, group=WORKER_GROUP)
    async def _advance(self, mode: str) -> None:
        """Run one node (`step`) or on to the end / the next breakpoint (`continue`)."""
        run = self.live
        assert run is not None and run.session is not None
        session = run.session
        tree = self.query_one(PathTree)
        first = True
        try:
            if run.judge is not None:  # said only when a call needs litellm
                run.judge.setup_note = self._loading_note
            while not session.done:
                nid = session.peek()
                if nid is None:
                    break
                if mode == "continue" and not first and nid in run.breakpoints:
                    self.notify(f"breakpoint: stopped before {nid}", title="paused")
                    tree.select_node(nid)
                    break
                run.running = nid
                tree.select_node(nid)
                self.refresh_view()
                try:
                    record = await session.step()
                finally:
                    run.running = None
                first = False
                if record is None:
                    break
                tree.select_node(record.node)
                self.refresh_view()
                if record.error is not None:
                    self.notify(f"{record.node}: {record.error}", severity="error",
                                title="step failed", timeout=8)
                    break
                if mode == "step":
                    break
            if session.done:
                run.keep_records()
        finally:
            self.busy = False
            self.refresh_view()

    def _loading_note(self, what: str) -> None:
        """The judge's first real call loads its client library (in a thread: seconds, and
        the UI keeps drawing); a step the cache answers never gets here."""
        self.query_one("#dbg-result", Static).update(f"{what}…  (x stops)")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != WORKER_GROUP:
            return
        if event.state == WorkerState.CANCELLED:
            if self.live is not None:
                self.live.running = None
            self.busy = False
            self.refresh_view()
            self.notify("stopped: the node can be stepped again", title="cancelled")
        elif event.state == WorkerState.ERROR:
            if self.live is not None:
                self.live.running = None
            self.busy = False
            self.refresh_view()
            self.notify(f"{type(event.worker.error).__name__}: {event.worker.error}",
                        severity="error", title="the run stopped", timeout=10)

    def action_stop(self) -> None:
        self.workers.cancel_group(self, WORKER_GROUP)

    def action_restart(self) -> None:
        run = self.live
        if run is None:
            return
        run.keep_records()
        run.restart()
        self.refresh_view()
        if run.order:
            self.query_one(PathTree).select_node(run.order[0])

    def action_breakpoint(self) -> None:
        run = self.live
        nid = self.query_one(PathTree).selected_node
        if run is None or nid is None:
            return
        on_now = run.toggle_breakpoint(nid)
        self.notify(f"breakpoint {'set on' if on_now else 'cleared from'} {nid}")
        self.refresh_view()

    def action_keys(self) -> None:
        from dagtui.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self, "debugger", debugger_groups(), DEBUGGER_NOTES,
                                        heading="Debugger keys (esc closes)"))

    def action_copy_pane(self) -> None:
        panes = self.query_one(StepPanes)
        pid = panes.active
        text = panes.text_of(pid)
        self.app.copy_to_clipboard(text)
        self.notify(f"copied the {pid} pane ({len(text)} characters)")

    def action_pane(self, pid: str) -> None:
        self.query_one(StepPanes).switch(pid)

    # ------------------------------------------------------------------ leaving

    @property
    def leaving_quits(self) -> bool:
        """esc over a saved trace goes back to the live run, even in `dagtui step`."""
        return super().leaving_quits and not self._closes_trace

    @property
    def _closes_trace(self) -> bool:
        return self.viewing is not None and self.live is not None

    def action_back(self) -> None:
        if self._closes_trace:
            self.viewing = None  # the footer's keys follow
            self.refresh_view()
            self.notify("back to the live run")
            return
        self.leave_asking()

    async def quit_requested(self) -> None:
        """ctrl+q: leave as esc does, asking first when work would be lost."""
        self.leave_asking()

    def leave_asking(self) -> None:
        """Leave (the editor, or quit `dagtui step`); cases written here and edits no editor
        took would vanish, so then ask first (`ask_to_quit`: the three screens' one way)."""
        from dagtui.tui.screens.dialogs import ask_to_quit

        lost_edits = self.unsaved_edits if self.on_edit is None else []
        target = self.cases_file()
        n = len(self.unsaved_cases)
        cases = f"case{'s' if n != 1 else ''}"
        what = []
        if n:
            what.append(f"{n} {cases} written here (not in any cases file)")
        if lost_edits:
            what.append(f"edits to {', '.join(lost_edits)} (only in this run)")
        graph = Path(self.graph_path).name
        writable = bool(lost_edits) and bool(self.edit_values)
        if n and writable:
            save_label = f"Append the {cases} and write the edits to {graph}"
        elif writable:
            save_label = f"Write the edits to {graph} and leave"
        else:
            save_label = f"Append the {cases} to {target} and leave"

        async def save() -> bool:
            if n:
                try:
                    self.append_cases(target)
                except (OSError, ValueError) as exc:  # ChangedOnDisk, a FIFO, too big
                    self.notify(f"could not write {target}: {exc}", severity="error")
                    return False
            return self.write_edits() if writable else True

        ask_to_quit(self.app, unsaved="Unsaved: " + "; ".join(what) + "." if what else None,
                    leave=self._leave, save=save if n or writable else None,
                    title="Leave the debugger?", save_label=save_label,
                    discard_label="Leave without saving", cancel_label="Stay")

    def write_edits(self) -> bool:
        """Write the `e` edits made here into the graph file (`dagtui step`: no editor took
        them) as the editor saves: comments kept, written atomically, and refused when the
        file no longer parses or lacks the node. True once written."""
        from dagtui.tui.backend import ChangedOnDisk, ReadOnlyFile
        from dagtui.tui.state import EditorState, EditRefused

        path = Path(self.graph_path)
        try:
            state = EditorState.open(path)
            if state.read_only:
                raise EditRefused("it does not parse now; fix it and edit there")
            for (nid, name), value in self.edit_values.items():
                if nid not in state.graph.nodes:
                    raise EditRefused(f"it has no node '{nid}' any more")
                state.set_field(nid, name, value)
            state.save()
        except (EditRefused, ChangedOnDisk, ReadOnlyFile, OSError) as exc:
            self.notify(f"could not write the edits to {path}: {exc}", severity="error",
                        title="not written", timeout=10)
            return False
        self.notify(f"wrote {', '.join(self.unsaved_edits)} to {path}")
        self.unsaved_edits, self.edit_values = [], {}
        return True

    def cases_file(self) -> Path:
        """Where written cases go: the cases file in use, else GRAPH.cases.jsonl beside the
        graph."""
        if self.cases_source and Path(self.cases_source).suffix == ".jsonl":
            return Path(self.cases_source)
        graph = Path(self.graph_path)
        return graph.with_name(graph.stem + ".cases.jsonl")

    def append_cases(self, target: Path) -> None:
        """Append the cases written here to `target` (one JSON object a line, each with the
        verdicts given as the human judge as its labels); a graph with no `[metric].cases`
        is told the file's name through `on_cases_file`. The file is rewritten atomically
        (`dagtui.safewrite`), its lines so far byte-identical, and refused (an OSError) when
        it changes between the read and the write (ValueError: not a regular file)."""
        import json

        from dagtui.safewrite import Stamp, atomic_write, read_bytes

        try:
            existing, stamp = read_bytes(target)
        except FileNotFoundError:
            existing, stamp = b"", Stamp.absent()
        lines = "".join(json.dumps(self._labelled(c).to_dict(), ensure_ascii=False) + "\n"
                        for c in self.unsaved_cases).encode("utf-8")
        gap = b"\n" if existing and not existing.endswith(b"\n") else b""
        atomic_write(target, existing + gap + lines, expected=stamp)
        self.notify(f"appended {len(self.unsaved_cases)} case(s) to {target}")
        self.unsaved_cases = []
        if self.graph.metric.cases is None and self.on_cases_file is not None:
            self.on_cases_file(target.name)

    def _labelled(self, case: Case) -> Case:
        """`case` with the verdicts given as the human judge in this run as its labels
        (`dagtui.labels.write.human_labels`), when the run is of that case."""
        import dataclasses

        from dagtui.labels.write import human_labels

        run = self.live
        given = human_labels(run.records) if run is not None and run.case is case else {}
        return dataclasses.replace(case, expected={**case.expected, **given}) if given \
            else case

    def action_save_labels(self) -> None:
        """`L`: the human judge's verdicts written into this case's labels in the cases
        file (`dagtui.labels.write`: only its `expected` changes; a case written here is
        saved, with them, when it is appended)."""
        from dagtui.labels.write import LabelFile, Labels, case_labels, human_labels

        run = self.live
        case = run.case if run is not None else None
        given = human_labels(run.records) if run is not None else {}
        if case is None or not given:
            self.notify("no verdicts given as the human judge in this run", severity="warning")
            return
        if case in self.unsaved_cases or not self.cases_source:
            self.notify("this case is in no cases file yet: its labels go with it when "
                        "it is appended (esc)")
            return
        try:
            file = LabelFile(self.cases_source)
            now = next(c for c in file.cases() if c.name == case.name)
            labels = case_labels(now)
            file.set(case.name, Labels({**labels.expected, **given}, labels.expected_score,
                                       [u for u in labels.unsure or () if u not in given]))
        except (OSError, ValueError, StopIteration) as exc:
            self.notify(f"could not write the labels: {exc or 'no such case'}",
                        severity="error", title="not written", timeout=10)
            return
        case.expected = {**case.expected, **given}
        self.notify(f"wrote {len(given)} label(s) of case {case.name!r} to {self.cases_source}")

    def _leave(self) -> None:
        self.workers.cancel_group(self, WORKER_GROUP)
        if self.standalone:
            self.app.exit()
        else:
            self.dismiss(None)


def running_totals(run: DebugRun) -> str:
    """Calls, tokens and cost of the steps so far (the header has no room for them)."""
    calls, tokens, total_cost = run.totals()  # kept as steps come, not summed per redraw
    cost = f" · ${total_cost:.4f}" if total_cost is not None else ""
    return f"so far: {calls_text(calls)} · {tokens} tokens{cost}"

"""`dagtui edit`: the graph editor, a screen of the one app (`dagtui.tui.app.DagtuiApp`).

The screen is a thin shell over `EditorState` (the graph, history, dirty flag, selection,
file): every action calls one state method, then `sync()` redraws what changed. Widgets talk
upward with typed messages nested in the widget that posts them
(`form_messages.FieldChanged`, `ProblemsTable.ProblemChosen`, ...). F5 pushes the debugger
(`EditorScreen.open_debugger`) with the editor's graph, and its edits come back as
ordinary undoable edits; K pushes the calibration view.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult, SuspendNotSupported, SystemCommand
from textual.command import CommandPalette
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static, Tree

from dagtui.diagnostics import Diagnostic
from dagtui.graph.model import Graph, TaskNode
from dagtui.kinds import kind_of
from dagtui.tui import backend
from dagtui.tui.blink import settle_blink
from dagtui.tui.fields import LONG_TEXT, FieldError, from_text, to_text, value_of
from dagtui.tui.fit import SHORT_ROWS, fit_footer, narrow
from dagtui.tui.keys import EDITOR_KEYS, bindings, describe_key, editor_groups
from dagtui.tui.node_palette import EditorNodes
from dagtui.tui.outline import ItemRef
from dagtui.tui.screens.base import DagtuiScreen
from dagtui.tui.state import CheckJob, EditorState, EditRefused, environment_editor, fallback_editor
from dagtui.tui.widgets.form_messages import (
    FieldChanged,
    FieldFocused,
    MetricChanged,
    VerdictChanged,
)
from dagtui.tui.widgets.graph_tree import GraphTree

if TYPE_CHECKING:
    from textual.widgets import Footer, TabbedContent, TextArea
    from textual.widgets.button import ButtonVariant

    from dagtui.graph.checks import PythonConsent
    from dagtui.tui.widgets.bottom import BottomPanels
    from dagtui.tui.widgets.node_form import NodeForm
    from dagtui.tui.widgets.panels import ProblemsTable

# Not imported here: the bottom panels (`widgets.bottom`: a tabbed panel with two data
# tables, ~20 ms of imports) and the footer are mounted right after the first frame, and the read-only
# source view (a TextArea, ~15 ms) only for a file that does not parse; the node form
# (`widgets.node_form`, its module and widgets) right after the first frame too, so the
# screen names the form's messages from `widgets.form_messages`.

#: actions that need the bottom panels: they wait the instant until those are mounted
BOTTOM_ACTIONS: frozenset[str] = frozenset({"show_tab", "show_graph", "graph_scope", "help"})

#: actions with nothing to act on while the file does not parse (hidden from the footer)
READ_ONLY_HIDDEN: frozenset[str] = frozenset({"goto", "show_graph", "graph_scope", "debug",
                                              "calibration"})

#: the editor's stylesheet (beside the package's other tcss files); the app reads it at
#: start when it starts on the editor, else when the editor is first pushed
CSS_PATH = Path(__file__).parent.parent / "editor.tcss"


class TextLine(Widget):
    """One line of text in a fixed-size slot. Unlike `Static.update`, showing new text
    repaints only this line: no relayout of the screen (the header and status bar change
    on every keystroke)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = Text("")

    def show(self, text: Text) -> None:
        if text.plain != self.text.plain or text.spans != self.text.spans:
            self.text = text
            self.refresh()

    def render(self) -> Text:
        return self.text


class HeaderLine(TextLine):
    """The header: the file at the left (cut with an ellipsis when the line is short), the
    metric at the right, in its whole width. One widget rather than two in a row: the first
    frame lays out and draws fewer, and the metric's width changing moves no layout."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.right = Text("")

    def show_both(self, left: Text, right: Text) -> None:
        """Show `left` and `right` (each a line), repainting only when either changed."""
        shown = (self.text.plain, self.text.spans, self.right.plain, self.right.spans)
        if (left.plain, left.spans, right.plain, right.spans) != shown:
            self.text, self.right = left, right
            self.refresh()

    def render(self) -> Text:
        width = self.content_size.width
        room = max(0, width - self.right.cell_len)
        left = self.text.copy()
        left.truncate(room, overflow="ellipsis", pad=True)
        line = Text.assemble(left, self.right, no_wrap=True, overflow="crop")
        line.truncate(width)
        return line


class EditorScreen(DagtuiScreen):
    """The graph editor. `state` holds everything that is not pixels."""

    CSS_PATH = CSS_PATH
    #: ctrl+p: the editor's actions (`palette_commands`) and its nodes by id or label
    COMMANDS = {EditorNodes}
    #: quit (`editor.quit`, ctrl+q and q) first: the footer lists keys in binding order,
    #: and leads with quit as an app's footer does (F1 and `--list-keys` keep the table's
    #: order); the screen's own ctrl+q, so the app's steps aside (`BINDS_QUIT`)
    BINDINGS = bindings(sorted(EDITOR_KEYS, key=lambda spec: spec.action != "quit"))
    BINDS_QUIT = True

    #: the graph drawing enlarged over the tree and form (`g` on the graph tab; esc back)
    graph_big: reactive[bool] = reactive(False, init=False)
    #: what the header shows of the state (`EditorState.dirty`, `.read_only`), mirrored by
    #: every redraw; a change redraws the header line, and `read_only` the footer's keys
    #: too (a file that does not parse hides the editing keys, ctrl+r can bring them back)
    modified: reactive[bool] = reactive(False, init=False)
    read_only: reactive[bool] = reactive(False, init=False, bindings=True)

    def __init__(self, path: str | Path, *, starter: str | None = None,
                 poll_interval: float = 1.0, state: EditorState | None = None,
                 python: PythonConsent | None = None,
                 calibration: str | Path | None = None) -> None:
        super().__init__()
        #: a calibration result to show (`--calibration`), else the one `dagtui calibrate`
        #: saved for this graph under .dagtui/calibration/
        self.calibration_file = calibration
        self._python = python
        self.state = state or EditorState.open(path, starter=starter, defer_check=True)
        self.state.check_later = self._check_later
        #: set once the first validation has run (right after the first frame)
        self.first_check_done = asyncio.Event()
        self.poll_interval = poll_interval
        #: the bottom panels (problems, paths, graph) and the footer, mounted right after
        #: the first frame
        self._bottom: BottomPanels | None = None
        self._footer: Footer | None = None
        #: the file's text, shown instead of the form while it does not parse (built then)
        self._source: TextArea | None = None
        #: the node form, mounted right after the first frame (`_first_form`)
        self._form: NodeForm | None = None
        self._form_ready = False
        self._form_mounted = asyncio.Event()
        self._asking_disk = False
        self._syncing = False
        #: one redraw at a time: a worker's result arriving while an action called directly
        #: (tests, the benchmark) is rebuilding the form waits for that rebuild
        self._sync_lock = asyncio.Lock()

    @property
    def python(self) -> PythonConsent:
        """Consent for python checks in the F5 debugger: `--allow-python`, else asked once
        per function, the answer kept for this session. Read from the environment when first
        needed: `dagtui.graph.checks` is not imported before the first frame."""
        if self._python is None:
            from dagtui.graph.checks import PythonConsent

            self._python = PythonConsent.from_env()
        return self._python

    @property
    def exiting(self) -> bool:
        """True once the app is on its way out (the disk poll stops asking)."""
        return self.app.return_code is not None

    def settle_blink(self, root: Any) -> None:
        """Apply the blink setting to the text widgets under `root` (just mounted)."""
        settle_blink(root)

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # the terminal's size is known before anything is styled: the classes it sets now
        # cost nothing, while setting them on mount restyled every widget before the first
        # frame (on an 80x24 terminal 37M instructions, 3 % of the start)
        width, height = self.app.size
        self._fit_classes(width, height, update=False)
        yield HeaderLine(id="header")
        with Horizontal(id="main"):
            tree = GraphTree(id="tree")
            tree.border_title = "Graph"
            tree.set_compact(narrow(width))
            yield tree
            # the form comes right after the first frame (`_first_form`)
            yield Vertical(id="right")
        # the bottom panels come right after the first frame (`_mount_bottom`); this empty
        # slot holds their rows meanwhile, so nothing moves when they arrive
        yield Static(id="bottom-slot")
        yield TextLine(id="status")
        # the footer comes right after the first frame too (`_mount_bottom`): its keys are
        # only listed once the screen's bindings are settled, so before that it is an empty
        # bar, which this slot draws meanwhile
        yield Static(id="footer-slot")

    @property
    def form(self) -> NodeForm:
        """The node form (mounted right after the first frame, before `ready`)."""
        if self._form is None:
            raise NoMatches("the node form is not mounted yet")
        return self._form

    @property
    def bottom(self) -> BottomPanels:
        """The bottom panels (mounted right after the first frame; `BOTTOM_ACTIONS` wait
        for them)."""
        if self._bottom is None:
            raise NoMatches("the bottom panels are not mounted yet")
        return self._bottom

    async def _mount_bottom(self) -> None:
        """Put the bottom panels in place of `#bottom-slot` (see `widgets.bottom` for why
        only now), and the footer in place of `#footer-slot`."""
        from textual.widgets import Footer

        from dagtui.tui.widgets.bottom import CSS_PATH, BottomPanels

        self.read_css(CSS_PATH)
        # the palette's key is `editor.palette`, in the footer's row of keys: docked at the
        # right it covered the last key on a narrow terminal
        footer = Footer(show_command_palette=False)
        fit_footer(footer, self.app.size.width)
        footer_slot = self.query_one("#footer-slot")
        await self.mount(footer, after=footer_slot)
        await footer_slot.remove()
        self._footer = footer
        slot = self.query_one("#bottom-slot")
        bottom = BottomPanels()
        await self.mount(bottom, after=slot)
        await slot.remove()
        self._bottom = bottom
        self._sync_bottom(bottom)
        self.refresh_bindings()  # `BOTTOM_ACTIONS` are available from now on (and the
        # footer lists the keys)

    async def _mount_source(self) -> TextArea:
        """The read-only view of a file that does not parse (built the first time one is
        opened: most files parse)."""
        from textual.widgets import TextArea

        source = TextArea("", read_only=True, id="source", show_line_numbers=True,
                          soft_wrap=False)
        source.border_title = "File (read-only: it does not parse)"
        await self.query_one("#right").mount(source)
        settle_blink(self.query_one("#right"))
        return source

    async def on_mount(self) -> None:
        if self.state.new_file and not self.state.graph.nodes and self.state.text is None:
            from dagtui.tui.screens.dialogs import StarterScreen

            self.app.push_screen(StarterScreen(str(self.state.path), [
                (name, backend.starter_description(name)) for name in backend.starter_names()
            ]), self._starter_chosen)
        from dagtui.tui.calibration import load_calibration

        self.query_one(GraphTree).set_calibration(
            load_calibration(self.state.path, self.calibration_file))
        await self.sync()
        self.settle_blink(self)
        self._fit(self.app.size.width, self.app.size.height)
        tree = self.query_one(GraphTree)
        tree.focus()
        if self.state.selected:
            self.call_after_refresh(tree.select_node_id, self.state.selected)
        # the bottom panels and the form (the most widgets) are built right after the first
        # frame is on screen, and the file is validated then too: the tree paints first,
        # problems follow
        self.call_after_refresh(self._mount_bottom)
        self.call_after_refresh(self._first_form)
        self.call_after_refresh(self._first_check)
        if self.poll_interval > 0:
            self.set_interval(self.poll_interval, self._poll_disk)

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width, event.size.height)
        if self.query("#header"):
            self._sync_header()

    def _fit(self, width: int, height: int) -> None:
        """On a small terminal the panels give way to the tree and the form: the bottom
        panels get fewer rows, and the footer packs its keys tighter and leaves the palette
        key (ctrl+p still works) so the editor's own keys are not cut off."""
        self._fit_classes(width, height)
        if self._footer is not None:  # mounted right after the first frame
            fit_footer(self._footer, width)
        tree = next(iter(self.query(GraphTree)), None)
        if tree is not None and tree.compact != narrow(width):
            tree.set_compact(narrow(width))
            if not self.state.read_only:
                tree.show(self.state.graph, self.state.problem_counts(),
                          self.state.graph.metric.name)

    def _fit_classes(self, width: int, height: int, *, update: bool = True) -> None:
        """The screen's `short` and `narrow` classes (editor.tcss) for a terminal this size;
        without `update` the styles are left alone (for before its widgets are styled)."""
        self.set_class(height < SHORT_ROWS, "short", update=update)
        self.set_class(narrow(width), "narrow", update=update)

    async def _first_check(self) -> None:
        job = self.state.check_job()
        if job is None:
            self.first_check_done.set()
        else:
            self._validate(job)

    # -- validation -----------------------------------------------------------------------
    def _check_later(self) -> None:
        """An edit left its validation to `_validate` (`EditorState.check_later`)."""
        job = self.state.check_job()
        if job is not None:
            self._validate(job)

    @work(exclusive=True, group="validate", description="validate the edited graph")
    async def _validate(self, job: CheckJob) -> None:
        """Validate and analyse paths once the keystrokes already queued are handled: each
        of those starts a newer run, which cancels this one before it begins.

        The worker's description is fixed: without one Textual describes it with the repr
        of its arguments, and the job's repr spells out the whole graph (1,000 nodes: ~5 ms
        of every keystroke, ~0.4 ms without).

        On the event loop, not in a thread: validation is pure Python, and a thread
        contending for the GIL made the loop wait (1,000 nodes, under load: first frame
        ~0.7 s -> 1.2-2.2 s, a text edit until idle ~130 -> ~190 ms).
        """
        await asyncio.sleep(0)
        if self.state.apply_check(job, job.run()):
            await self.sync()
        self.first_check_done.set()

    async def ready(self) -> None:
        """Once the first validation has run (`DagtuiApp.run_test` waits for it, so every
        test starts from the same, fully checked, screen)."""
        await asyncio.wait_for(self.first_check_done.wait(), timeout=60)
        await asyncio.wait_for(self._form_mounted.wait(), timeout=60)

    async def _first_form(self) -> None:
        """Mount the node form (its module imported only now) and show the selection."""
        from dagtui.tui.widgets.node_form import CSS_PATH, NodeForm

        self.read_css(CSS_PATH)
        form = NodeForm(id="form")
        form.border_title = "Node"
        form.display = not self.state.read_only
        right = self.query_one("#right")
        await right.mount(form, before=0 if right.children else None)
        settle_blink(form)
        self._form = form
        self._form_mounted.set()
        self._form_ready = True
        await self._sync_form(rebuild=True)

    async def _starter_chosen(self, name: str | None) -> None:
        if name is None:
            self.leave()
            return
        self.state.start_from(name)
        tree = self.query_one(GraphTree)
        tree.force_rebuild()
        # the cursor starts on the first node (without one, the first `k` jumps to the
        # last row and the form stays empty)
        first = self.state.selected or next(iter(self.state.graph.roots()), None)
        self.state.selected = first
        await self.sync(rebuild_form=True)
        if first is not None:
            tree.select_node_id(first)
        tree.focus()
        self.notify(f"started from '{name}'; ctrl+s writes {self.state.path}")

    # -- redraw ---------------------------------------------------------------------------
    async def sync(self, *, rebuild_form: bool = False) -> None:
        """Bring every panel up to date with the state (cheap when little changed)."""
        try:
            async with self._sync_lock:
                await self._sync(rebuild_form)
        except NoMatches:
            if self.app.is_running:
                raise
            # the app is shutting down while a handler was still redrawing: nothing to draw

    async def _sync(self, rebuild_form: bool) -> None:
        state = self.state
        tree = self.query_one(GraphTree)
        tree.show(state.graph, state.problem_counts(), state.graph.metric.name,
                  read_only=state.read_only)
        if self._bottom is not None:
            self._sync_bottom(self._bottom)
        await self._sync_form(rebuild_form)
        self._sync_header()
        self.modified, self.read_only = state.dirty, state.read_only

    def watch_modified(self) -> None:
        self._sync_header()

    def watch_read_only(self) -> None:
        self._sync_header()

    def _sync_bottom(self, bottom: BottomPanels) -> None:
        state = self.state
        bottom.problems.show(state.diagnostics, checking=state.checking)
        npaths = len(getattr(state.paths, "paths", []) or []) if state.paths else 0
        self._set_label(bottom, "problems", f"Problems {len(state.diagnostics)}")
        self._set_label(bottom, "paths", f"Paths {npaths}")
        if bottom.active == "paths":
            bottom.paths.show(state.paths, state.graph.metric.effective_threshold)
        if bottom.active == "graph":
            self._show_graph()

    def _set_label(self, tabs: TabbedContent, tab: str, label: str) -> None:
        """Relabel a tab only when the text changes. A new label tells the tab bar to move its
        underline; a label of the same width ("Problems 1" → "Problems 2", the usual case
        while typing) leaves it where it is, so that message is held back."""
        from textual.widgets import Tab  # imported with the tabs (after the first frame)

        widget = tabs.get_tab(tab)
        old = str(widget.label)
        if old == label:
            return
        if len(old) == len(label):
            with widget.prevent(Tab.Relabelled):  # same width: the underline stays put
                widget.label = label
        else:
            widget.label = label

    def _update(self, selector: str, content: Text) -> None:
        self.query_one(selector, TextLine).show(content)

    async def _sync_form(self, rebuild: bool) -> None:
        try:
            await self._sync_form_now(rebuild)
        except NoMatches:
            if self.app.is_running:
                raise

    async def _sync_form_now(self, rebuild: bool) -> None:
        state = self.state
        form = self._form
        source = self._source
        if state.read_only:
            if form is not None:
                form.display = False
            if source is None:
                source = self._source = await self._mount_source()
            source.display = True
            if source.text != (state.text or ""):
                source.load_text(state.text or "")
            err = state.first_error
            if err and err.line:
                # caret at the start of the bad line: the view never scrolls sideways
                source.move_cursor((err.line - 1, 0), center=True)
                where = f"line {err.line}" + (f", column {err.col}" if err.col else "")
                source.border_subtitle = f"{where}: {err.message}"
            return
        if source is not None:
            source.display = False
        if form is None or not self._form_ready:
            return
        form.display = True
        if rebuild or form.needs_rebuild(state.graph, state.selected):
            await form.show_node(state.graph, state.selected)
            if state.selected is None:
                form.border_title = "Metric"
            else:
                form.border_title = "Node"
        else:
            form.show_title(state.graph)  # a label being typed shows in the title at once
        form.show_problems(state.diagnostics)

    def _sync_header(self) -> None:
        state = self.state
        metric = state.graph.metric
        width = self.app.size.width
        # a narrow terminal drops the app's name first: the file, the metric's name, its
        # threshold and the model pinned are what the line is for
        name = Text.assemble(("dagtui", "bold"), " — ") if not narrow(width) else Text()
        name.append(str(state.path))
        if state.dirty:
            name.append(" ●", style="bold yellow")
        if state.read_only:
            name.append("  read-only", style="bold red")
        name.no_wrap, name.overflow = True, "ellipsis"
        if state.read_only:  # nothing was parsed: the metric's defaults would mislead
            info = Text("metric unknown until the file parses", style="dim")
        else:
            info = metric_line(metric.name, metric.effective_threshold, metric.model,
                               room=width - 4 - min(name.cell_len, 24))
        self.query_one(HeaderLine).show_both(name, info)
        status = Text()
        if state.read_only:
            status.append("read-only", style="bold red")
        else:
            status.append("● modified" if state.dirty else "saved",
                          style="yellow" if state.dirty else "green")
        status.append("  ·  ")
        if state.read_only:
            status.append("does not parse: fix the file, then ctrl+r", style="bold red")
        elif state.checking:
            status.append("checking…", style="dim")
        elif state.errors:
            status.append(f"✖ {state.errors} error{'s' if state.errors != 1 else ''}",
                          style="bold red")
        else:
            status.append("✔ valid", style="green")
        if state.warnings:
            status.append(f"  ⚠ {state.warnings}", style="yellow")
        report = state.paths
        if report is not None and getattr(report, "paths", None):
            lo, hi = getattr(report, "min_calls", 0), getattr(report, "max_calls", 0)
            span = f"{lo}" if lo == hi else f"{lo}–{hi}"
            status.append(f"  ·  calls/case {span}")
            if not getattr(report, "complete", True):
                status.append(" (partial)", style="dim")
        status.append(f"  ·  {len(state.graph.nodes)} nodes", style="dim")
        self._update("#status", status)

    # -- selection ------------------------------------------------------------------------
    @on(Tree.NodeHighlighted, "#tree")
    async def _highlighted(self, event: Tree.NodeHighlighted[ItemRef]) -> None:
        ref = event.node.data
        if ref is None or ref.kind == "group":
            return
        selected = ref.node if ref.kind != "metric" else None
        if ref.kind == "link" and ref.via is not None:
            selected = ref.via
        if selected != self.state.selected or self._form is None or \
                self._form.needs_rebuild(self.state.graph, selected):
            self.state.selected = selected
            self.state.break_coalescing()
            await self._sync_form(rebuild=True)
            if self._bottom is not None and self._bottom.active == "graph":
                self._show_graph()

    @on(Tree.NodeSelected, "#tree")
    def _selected(self, event: Tree.NodeSelected[ItemRef]) -> None:
        ref = event.node.data
        if ref is None or self._form is None:  # the form comes right after the first frame
            return
        if ref.kind == "link" and ref.target in self.state.graph.nodes:
            self.go_to(ref.target)
        elif ref.kind == "verdict":
            self.form.focus_field("verdicts")
            self._focus_verdict(ref.index or 0)
        elif ref.kind in ("node", "metric"):
            self.form.focus_field(None)

    def _focus_verdict(self, index: int) -> None:
        with contextlib.suppress(AssertionError, IndexError, NoMatches):
            self.form.verdict_widget(index, "verdict").focus()

    @property
    def graph_shown(self) -> Graph | None:
        """The graph being edited, for the palette's node finder (None while the file does
        not parse: there are no nodes to go to)."""
        return None if self.state.read_only else self.state.graph

    def go_to(self, node_id: str, field: str | None = None) -> None:
        """Select `node_id` in the tree (and focus `field` in the form)."""
        tree = self.query_one(GraphTree)
        tree.select_node_id(node_id)
        self.state.selected = node_id
        self.call_later(self._go_to_field, field)

    async def _go_to_field(self, field: str | None) -> None:
        await self._sync_form(rebuild=False)
        if not self.app.is_running:
            return
        if field is not None and self._form is not None:
            self._form.focus_field(field)
        else:
            self.query_one(GraphTree).focus()

    def current_verdict(self) -> int | None:
        ref = self.query_one(GraphTree).current
        if ref is not None and ref.kind == "verdict" and ref.node == self.state.selected:
            return ref.index
        focused = self.focused
        name = getattr(focused, "name", "") or ""
        if name.startswith("verdict:"):
            return int(name.split(":")[1])
        return None

    # -- form edits -----------------------------------------------------------------------
    @on(FieldChanged)
    async def _field_changed(self, event: FieldChanged) -> None:
        node = self.state.graph.nodes.get(event.node_id)
        if node is None or value_of(node, event.field) == event.value:
            return  # widgets announce their initial values too
        try:
            if event.field == "type":
                self.state.change_type(event.node_id, event.value)
                await self.sync(rebuild_form=True)
                return
            self.state.set_field(event.node_id, event.field, event.value)
        except EditRefused as exc:
            self.notify(str(exc), severity="error")
            return
        await self._typed()

    @on(VerdictChanged)
    async def _verdict_changed(self, event: VerdictChanged) -> None:
        before = self.state.version
        try:
            self.state.set_verdict(event.node_id, event.index, **{event.part: event.value})
        except (EditRefused, IndexError) as exc:
            self.notify(str(exc), severity="error")
            return
        if self.state.version == before:
            return
        await self._typed()
        # score and then exclude each other: show the other one emptied
        other = {"score": "then", "then": "score"}.get(event.part)
        if other and event.value is not None:
            try:
                widget = self.form.verdict_widget(event.index, other)
            except (AssertionError, IndexError, NoMatches):
                return
            from dagtui.tui.widgets.node_form import set_quietly  # loaded with the form

            set_quietly(widget, other, None, None)

    @on(MetricChanged)
    async def _metric_changed(self, event: MetricChanged) -> None:
        if getattr(self.state.graph.metric, event.field) == event.value:
            return
        try:
            self.state.set_metric(event.field, event.value)
        except EditRefused as exc:
            self.notify(str(exc), severity="error")
            return
        await self._typed()

    async def _typed(self) -> None:
        """Redraw after a form edit, unless its validation is on its way: the worker's
        result redraws everything once (at 1,000 nodes a keystroke then holds the event
        loop under 1 ms)."""
        if not self.state.stale:
            await self.sync()

    @on(FieldFocused)
    def _field_focused(self) -> None:
        self.state.break_coalescing()

    def on_problems_table_problem_chosen(self, event: ProblemsTable.ProblemChosen) -> None:
        d: Diagnostic = event.diagnostic
        source = self._source
        if self.state.read_only and source is not None:
            if d.line:
                source.move_cursor((d.line - 1, 0), center=True)
            source.focus()
            return
        if d.node and d.node in self.state.graph.nodes:
            self.go_to(d.node, d.field or "")
        elif d.node is None:
            tree = self.query_one(GraphTree)
            tree.select_ref(ItemRef("metric").key)
            self.state.selected = None
            self.call_later(self._go_to_field, d.field or "")

    # -- actions --------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Which editor keys act now (False also hides them from the footer). They are the
        screen's own bindings, so they act only while the editor is on top: nothing here
        has to switch them off under the debugger or a dialog. Covered by one, its footer
        (dimmed behind a dialog) lists only the palette key, the one that still works."""
        if self.app.screen is not self and action != "command_palette":
            return False
        if action in BOTTOM_ACTIONS and self._bottom is None:
            return False  # pressed in the instant before the bottom panels are mounted
        state = self.state
        editing = {"add_node", "add_verdict", "remove_verdict", "delete", "delete_detach",
                   "rename", "move", "undo", "redo", "external_editor"}
        if state.read_only and (action in editing or action in READ_ONLY_HIDDEN
                                or (action == "show_tab" and parameters == ("paths",))):
            return False  # hidden: a file that does not parse has no graph to act on
        node = state.graph.nodes.get(state.selected or "")
        if action in ("add_verdict", "remove_verdict"):
            return True if node is not None and hasattr(node, "verdicts") else None
        if action in ("delete", "delete_detach", "rename", "move"):
            return True if node is not None else None
        if action == "undo":
            return True if state.can_undo else None
        if action == "redo":
            return True if state.can_redo else None
        if action == "save":
            return not state.read_only
        return True

    def _refused(self, exc: Exception) -> None:
        self.notify(str(exc), severity="error", title="refused", timeout=6)

    async def action_save(self) -> None:
        try:
            self.state.save()
        except EditRefused as exc:
            self._refused(exc)
            return
        except backend.ChangedOnDisk:
            self._ask_overwrite()
            return
        except backend.ReadOnlyFile as exc:
            self.notify(f"{exc}: make it writable (chmod u+w) and save again",
                        severity="error", title="not saved", timeout=10)
            return
        except OSError as exc:
            self.notify(f"could not save: {exc}", severity="error", timeout=8)
            return
        self.query_one(GraphTree).force_rebuild()
        await self.sync(rebuild_form=True)
        self.notify(f"saved {self.state.path}")

    def action_add_node(self) -> None:
        from dagtui.tui.screens.dialogs import AddNodeScreen
        state = self.state
        parent = state.selected
        node = state.graph.nodes.get(parent or "")
        verdict = self.current_verdict()
        if node is not None and verdict is not None:
            where = f"as the 'then' of {parent}'s verdict #{verdict + 1}"
        elif isinstance(node, TaskNode):
            where = f"as a child of task {parent} (receives its evidence)"
        else:
            where = "unattached (a new root); select a task or a verdict to attach it"
            parent, verdict = None, None
        # under a node that extracts evidence, a choice among labels; else a yes/no question
        default_type = "non_binary" if node is not None and kind_of(node).extracts else "binary"

        async def done(result: tuple[str, str] | None) -> None:
            if result is None:
                return
            node_type, node_id = result
            try:
                state.add_node(node_type, node_id, parent=parent,
                               verdict_index=verdict if node is not None else None)
            except EditRefused as exc:
                self._refused(exc)
                return
            await self.sync(rebuild_form=True)
            self.query_one(GraphTree).select_node_id(node_id)
            self.notify(f"added {node_id}")

        self.app.push_screen(AddNodeScreen(where, state.suggest_id("node"), state.check_new_id,
                                       default_type), done)

    async def action_add_verdict(self) -> None:
        nid = self.state.selected
        if nid is None:
            return
        try:
            index = self.state.add_verdict(nid)
        except EditRefused as exc:
            self._refused(exc)
            return
        await self.sync(rebuild_form=True)
        self._focus_verdict(index)

    async def action_remove_verdict(self) -> None:
        nid = self.state.selected
        if nid is None:
            return
        index = self.current_verdict()
        if index is None:
            index = len(self.state.verdicts(nid)) - 1
        try:
            self.state.remove_verdict(nid, index)
        except EditRefused as exc:
            self._refused(exc)
            return
        await self.sync(rebuild_form=True)
        self.query_one(GraphTree).select_node_id(nid)
        self.notify(f"removed verdict #{index + 1} of {nid}")

    async def action_delete(self) -> None:
        nid = self.state.selected
        if nid is None:
            return
        try:
            self.state.delete_node(nid)
        except EditRefused as exc:
            # name the key (as remapped) that does the delete and detach
            key = next((k for k, active in self.active_bindings.items()
                        if active.binding.action == "delete_detach"), "D")
            self._refused(EditRefused(f"{exc} (press {describe_key(key)})"))
            return
        await self._after_delete(nid)

    def action_delete_detach(self) -> None:
        from dagtui.tui.screens.dialogs import ChoiceScreen
        nid = self.state.selected
        if nid is None:
            return
        dependents = self.state.dependents(nid)
        points = "points" if len(dependents) == 1 else "point"
        detail = (f"{', '.join(dependents)} {points} at it; their references are removed (a "
                  "verdict that led there is left without a target until you fix it)."
                  if dependents else "Nothing points at it.")

        async def done(choice: str | None) -> None:
            if choice != "delete":
                return
            self.state.delete_node(nid, detach=True)
            await self._after_delete(nid)

        self.app.push_screen(ChoiceScreen(f"Delete {nid} and detach it?", detail,
                                      [("delete", "Delete and detach", "error"),
                                       ("cancel", "Cancel", "default")]), done)

    async def _after_delete(self, nid: str) -> None:
        await self.sync(rebuild_form=True)
        if self.state.selected:
            self.query_one(GraphTree).select_node_id(self.state.selected)
        self.notify(f"deleted {nid} (ctrl+z brings it back)")

    def action_rename(self) -> None:
        from dagtui.tui.screens.dialogs import TextScreen
        old = self.state.selected
        if old is None:
            return

        def check(value: str) -> str | None:
            return None if value == old else self.state.check_new_id(value)

        async def done(new: str | None) -> None:
            if not new or new == old:
                return
            try:
                self.state.rename(old, new)
            except EditRefused as exc:
                self._refused(exc)
                return
            await self.sync(rebuild_form=True)
            self.query_one(GraphTree).select_node_id(new)
            self.notify(f"renamed {old} → {new} (every reference updated)")

        self.app.push_screen(TextScreen(f"Rename {old}",
                                    "Every children / then / evidence reference follows.",
                                    old, check=check), done)

    async def action_move(self, delta: int) -> None:
        """Move the highlighted verdict, or the node within its task parent's children."""
        nid = self.state.selected
        if nid is None:
            return
        verdict = self.current_verdict()
        if verdict is not None:
            index = self.state.move_verdict(nid, verdict, delta)
            await self.sync(rebuild_form=True)
            self.query_one(GraphTree).select_verdict(nid, index)
            return
        ref = self.query_one(GraphTree).current
        parent = ref.via if ref is not None and ref.kind == "node" else None
        if parent is None or not isinstance(self.state.graph.nodes.get(parent), TaskNode):
            self.notify("only verdicts and a task's children have an order to change; "
                        "[nodes.*] tables stay in the order the file has them",
                        severity="warning")
            return
        try:
            self.state.move_child(parent, nid, delta)
        except EditRefused as exc:
            self._refused(exc)
            return
        await self.sync()
        self.query_one(GraphTree).select_ref(("node", nid, None, None, parent))

    async def action_undo(self) -> None:
        what = self.state.undo()
        if what is None:
            self.notify("nothing to undo")
            return
        await self._after_history(f"undid: {what}")

    async def action_redo(self) -> None:
        what = self.state.redo()
        if what is None:
            self.notify("nothing to redo")
            return
        await self._after_history(f"redid: {what}")

    async def _after_history(self, message: str) -> None:
        await self.sync(rebuild_form=True)
        if self.state.selected:
            self.query_one(GraphTree).select_node_id(self.state.selected)
        self.notify(message, timeout=2)

    def action_goto(self) -> None:
        self.app.push_screen(CommandPalette(providers=[EditorNodes],
                                        placeholder="Go to node (id or label)…"))

    def action_show_tab(self, tab: str) -> None:
        bottom = self.bottom
        bottom.active = tab
        self._tab_shown(tab)
        target = {"problems": bottom.problems, "paths": bottom.paths}.get(tab)
        if target is not None:
            target.focus()

    def action_show_graph(self) -> None:
        bottom = self.bottom
        if bottom.active == "graph":
            self.graph_big = not self.graph_big
        bottom.active = "graph"
        self._tab_shown("graph")
        # enlarged, the tree is hidden: the drawing takes the focus (arrows, hjkl, pgup/pgdn,
        # home scroll it) and opens at the root; shrunk again, the tree has it back
        if self.graph_big:
            bottom.graph.focus()
            self.call_after_refresh(bottom.graph.reveal_root)
        elif self.focused is None or self.focused is bottom.graph:
            self.query_one(GraphTree).focus()

    def action_graph_scope(self) -> None:
        bottom = self.bottom
        view = bottom.graph
        view.focus_mode = not view.focus_mode
        bottom.active = "graph"
        self._tab_shown("graph")
        self.notify("graph: " + ("selected node, upstream and downstream" if view.focus_mode
                                 else "whole graph"), timeout=2)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._tab_shown(event.pane.id or "")

    def _tab_shown(self, tab: str) -> None:
        self.set_class(tab == "graph", "graph-tab")
        if tab != "graph":
            self.graph_big = False
        if self._bottom is None:
            return
        if tab == "paths":
            self._bottom.paths.show(self.state.paths,
                                    self.state.graph.metric.effective_threshold)
        elif tab == "graph":
            self._show_graph()

    def watch_graph_big(self, big: bool) -> None:
        self.set_class(big, "graph-big")

    def _show_graph(self) -> None:
        self.bottom.graph.show(self.state.graph, self.state.selected,
                               self.state.problem_counts())

    def action_focus_tree(self) -> None:
        self.graph_big = False
        self.state.break_coalescing()
        self.query_one(GraphTree).focus()

    async def action_reload(self) -> None:
        from dagtui.tui.screens.dialogs import ChoiceScreen
        if self.state.dirty:
            async def done(choice: str | None) -> None:
                if choice == "reload":
                    await self._reload()

            self.app.push_screen(ChoiceScreen("Reload from disk?",
                                          "Your unsaved changes will be lost.",
                                          [("reload", "Reload", "error"),
                                           ("cancel", "Keep editing", "default")]), done)
            return
        await self._reload()

    async def _reload(self) -> None:
        self.state.reload()
        self.query_one(GraphTree).force_rebuild()
        await self.sync(rebuild_form=True)
        if self.state.read_only:
            err = self.state.first_error
            where = f" (line {err.line})" if err and err.line else ""
            self.notify(f"the file still does not parse{where}", severity="error")
        else:
            self.notify(f"reloaded {self.state.path}")

    def action_debug(self) -> None:
        self.state.settle()  # it refuses a graph with errors: those of the last keystroke
        self.open_debugger()

    def open_debugger(self, *, case: str | None = None, pause_at: str | None = None,
                      on_close: Callable[[], None] | None = None) -> None:
        """F5: step the graph being edited with its cases file.

        From the calibration view: `case` is the case to step and `pause_at` the node to
        run on to and stop before (its cases file is the one the calibration used, when it
        still exists). When the calibration ran a model, the debugger asks that model (same
        endpoint, so the answers calibration cached are replayed free) with the other
        labelled nodes answering their labels: the node is asked exactly what calibration
        asked it.

        The judge is offline by default (the case labels, or a person when there are none);
        `j` switches to the graph's model. "Edit & re-run" edits come back here as ordinary
        undoable edits. `on_close` runs once the debugger has closed (the calibration view
        reopens itself that way).
        """
        from dagtui.judges.base import Judge
        from dagtui.judges.factory import default_judge_name, make_judge
        from dagtui.tui.calibration import load_calibration
        from dagtui.tui.debugger.cases import graph_cases
        from dagtui.tui.debugger.human import TuiHumanJudge
        from dagtui.tui.debugger.screen import DebuggerScreen

        if any(isinstance(s, DebuggerScreen) for s in self.app.screen_stack):
            return  # already open
        state = self.state
        if state.read_only:
            self.notify("the file does not parse: fix it before debugging", severity="error")
            return
        if state.errors:
            self.notify(f"fix the {state.errors} error(s) first: an invalid graph cannot run",
                        severity="error")
            return
        graph = state.graph
        path = str(state.path)
        calibration = load_calibration(path, self.calibration_file)
        cases_file = (calibration or {}).get("cases_file") if case is not None else None
        cases, source, problem = graph_cases(
            graph, path, cases_file if cases_file and Path(cases_file).exists() else None)
        if problem:
            self.notify(problem, severity="warning", title="cases")
        app = self.app

        def factory(name: str) -> Judge:
            return make_judge(name, graph, human=lambda: TuiHumanJudge(app))

        def edited(nid: str, name: str, value: Any) -> None:
            state.set_field(nid, name, value)

        def cases_written(name: str) -> None:
            # the debugger appended written cases to a new file: the graph now names it
            if state.graph.metric.cases is None:
                state.set_metric("cases", name)

        def closed(_: object) -> None:
            self.call_later(self.sync, rebuild_form=True)
            if on_close is not None:
                on_close()

        judge = factory(default_judge_name(cases))
        judged = (calibration or {}).get("judge") or {}
        model = judged.get("model") if case is not None else None
        if model:
            judge = make_judge("litellm", graph, model=model, api_base=judged.get("api_base"))
        app.push_screen(DebuggerScreen(graph, path, cases=cases, judge=judge,
                                       cases_source=source, judge_factory=factory,
                                       on_edit=edited, python=self.python, case=case,
                                       pause_at=pause_at, calibration=calibration,
                                       force_labels=bool(model), on_cases_file=cases_written,
                                       checked=state.current_check()),
                        closed)

    def field_message(self, nid: str, field: str, text: Text) -> None:
        """`text` beside `field` of node `nid`'s form, when that form is the one shown (the
        criteria loop's kappa; the next check of an edit replaces it)."""
        form = self.form
        if form.node_id == nid and form.page is not None and field in form.page.messages:
            form.message(field).update(text)

    def action_remeasure(self) -> None:
        """The criteria loop: the selected node re-measured on its labelled cases."""
        from dagtui.tui.screens.calibration import remeasure

        remeasure(self)

    def action_label(self) -> None:
        """L: label the graph's cases (`dagtui label`'s screen) on the graph as edited, at
        the selected node; esc comes back here. Only the cases file is written."""
        from dagtui.tui.label.launch import judge_lookup, push_label_screen

        state = self.state
        state.settle()  # it refuses a graph with errors: those of the last keystroke
        if state.read_only or state.errors:
            self.notify("fix the graph first: only a valid graph can be labelled",
                        severity="error")
            return
        # the graph as it is now; nothing edits it while the labelling screen is on top
        push_label_screen(self, state.graph, state.path, node=state.selected,
                          judge=judge_lookup(state.graph))

    def action_calibration(self) -> None:
        """The calibration view; `enter` on a case opens the debugger on it, paused at the
        node, and esc there comes back here (the result is re-read, so a calibration run
        meanwhile shows)."""
        self._open_calibration(self.state.selected)

    def _open_calibration(self, node: str | None, case: str | None = None) -> None:
        from dagtui.tui.calibration import load_calibration
        from dagtui.tui.screens.calibration import CalibrationScreen

        data = load_calibration(self.state.path, self.calibration_file)
        if data is None:
            self.notify(f"no calibration result for {Path(self.state.path).name}: run "
                        "dagtui calibrate on it (or dagtui edit --calibration FILE)",
                        severity="warning")
            return
        tree = self.query_one(GraphTree)
        tree.set_calibration(data)
        if not self.state.read_only:
            tree.show(self.state.graph, self.state.problem_counts(),
                      self.state.graph.metric.name)
        self.app.push_screen(CalibrationScreen(data, node, tree.stale, case, editor=self),
                             self._calibration_jump)

    def _calibration_jump(self, choice: tuple[str, str] | None) -> None:
        if choice is not None:
            case, node = choice
            # esc in the debugger returns to the view it was opened from, at that case
            self.open_debugger(case=case, pause_at=node,
                               on_close=lambda: self._open_calibration(node, case))

    def action_help(self) -> None:
        from dagtui.tui.screens.help import HelpScreen

        # the focused widget's keys come from the screen's active bindings; the others'
        # (a long field may not even be mounted yet) from their classes
        self.app.push_screen(HelpScreen(self, "editor", editor_groups(),
                                    heading="dagtui edit — keys"))

    async def action_quit(self) -> None:
        from dagtui.tui.screens.dialogs import ask_to_quit
        self.state.settle()  # the dialog counts the errors

        async def save() -> bool:
            await self.action_save()
            return not self.state.dirty

        ask_to_quit(self.app, unsaved=f"{self.state.path} has unsaved changes."
                    if self.state.dirty else None, leave=self.leave, save=save,
                    errors=self.state.errors, quit_key=("editor.quit", "ctrl+q,q"))

    # -- external editor ------------------------------------------------------------------
    async def action_external_editor(self) -> None:
        import tempfile
        state = self.state
        nid = state.selected
        node = state.graph.nodes.get(nid) if nid is not None else None
        if nid is None or node is None:
            self.notify("select a node first")
            return
        focused = getattr(self.focused, "name", "") or ""
        field = focused.split(":", 1)[1] if focused.startswith("field:") else None
        if field is None or field in ("type", "params", "check", "param", "unit", "mode"):
            field = next((f for f in LONG_TEXT if f in node.FIELDS), None)
        if field is None:
            self.notify("this node has no long text field")
            return
        command = environment_editor()
        if command is None:
            command = fallback_editor()
            if command is None:
                self.notify("no editor to open: set $VISUAL or $EDITOR (e.g. export "
                            "EDITOR=nano) and press ctrl+o again", severity="warning",
                            timeout=10)
                return
            self.notify(f"$VISUAL and $EDITOR are not set: using {Path(command).name} "
                        "(set $EDITOR to choose another)", timeout=6)
        original = to_text(field, value_of(node, field))
        with tempfile.NamedTemporaryFile("w", suffix=f"-{nid}-{field}.txt", delete=False,
                                         encoding="utf-8") as fh:
            fh.write(original)
            tmp = fh.name
        try:
            rc = self._run_editor(command, tmp)
            new_text = Path(tmp).read_text(encoding="utf-8")
        finally:
            os.unlink(tmp)
        if rc != 0:
            self.notify(f"editor exited with {rc}: change discarded", severity="warning")
            return
        if field != "evaluation_steps" and new_text.endswith("\n") and not original.endswith(
                "\n"):
            new_text = new_text[:-1]
        if new_text == original:
            self.notify("no change")
            return
        try:
            value = from_text(field, new_text)
        except FieldError as exc:
            self.notify(f"{field}: {exc}", severity="error")
            return
        state.break_coalescing()
        state.set_field(nid, field, value)
        state.break_coalescing()
        await self.sync(rebuild_form=True)
        self.notify(f"{nid}.{field} updated from the editor (ctrl+z undoes it)")

    def _run_editor(self, command: str, path: str) -> int:
        import shlex
        import subprocess
        argv = [*shlex.split(command), path]
        try:
            with self.app.suspend():
                return subprocess.call(argv)
        except SuspendNotSupported:
            return subprocess.call(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)

    # -- the file on disk -----------------------------------------------------------------
    async def _poll_disk(self) -> None:
        if self._asking_disk or self.exiting or not self.state.changed_on_disk():
            return
        if self.app.screen is not self or not self.query("#header"):
            return  # a dialog is open (ask when it is closed), or the app is shutting down
        if not self.state.dirty:
            try:
                await self._reload()
            except NoMatches:  # the app closed while reloading
                return
            self.notify("the file changed on disk: reloaded")
            return
        self._asking_disk = True
        from dagtui.tui.screens.dialogs import ChoiceScreen

        async def done(choice: str | None) -> None:
            self._asking_disk = False
            if choice == "reload":
                await self._reload()
            else:
                # not accepted: ctrl+s then asks (merge, overwrite or reload) instead of
                # silently discarding the other program's change
                self.state.note_disk_change()
                self.notify("kept your edits; saving will ask whether to merge the change "
                            "on disk or overwrite it", severity="warning")

        self.app.push_screen(ChoiceScreen("The file changed on disk",
                                      f"{self.state.path} was changed by another program "
                                      "while you have unsaved edits.",
                                      [("keep", "Keep my edits", "primary"),
                                       ("reload", "Reload (lose my edits)", "error")]), done)

    def _ask_overwrite(self, note: str = "") -> None:
        """ctrl+s found the file changed by someone else since it was read (the save
        refused to discard their edit): merge their change with the edits, cancel,
        overwrite it anyway, or reload theirs. `note`: why a merge just failed."""
        from dagtui.tui.screens.dialogs import ChoiceScreen

        self._asking_disk = True

        async def done(choice: str | None) -> None:
            self._asking_disk = False
            if choice == "merge":
                await self._merge_and_save()
            elif choice == "overwrite":
                self.state.accept_disk_version()
                await self.action_save()
            elif choice == "reload":
                await self._reload()
            else:
                self.notify("not saved: the file on disk was changed by another program",
                            severity="warning")

        choices: list[tuple[str, str, ButtonVariant]] = [
            ("cancel", "Don't save", "default"),
            ("overwrite", "Overwrite it with my version", "warning"),
            ("reload", "Reload (lose my edits)", "error")]
        if not note:  # after "Don't save", the safe choice focused first
            choices.insert(1, ("merge", "Merge: keep their change and mine", "primary"))
        self.app.push_screen(ChoiceScreen("Not saved: the file changed on disk",
                                      note or f"{self.state.path} was changed by another "
                                      "program since it was read; saving now would discard "
                                      "that change. A merge keeps the nodes they changed "
                                      "and the ones you edited.", choices), done)

    async def _merge_and_save(self) -> None:
        conflicts = self.state.merge_disk()
        if conflicts:
            self._ask_overwrite(f"Cannot merge: {'; '.join(conflicts)} (changed both here "
                                "and on disk). Overwrite with your version, or reload theirs.")
            return
        self.query_one(GraphTree).force_rebuild()
        await self.action_save()
        if not self.state.dirty:
            self.notify(f"merged the change on disk into {self.state.path}")

    # -- command palette ------------------------------------------------------------------
    def palette_commands(self) -> Iterable[SystemCommand]:
        """The editor's actions by name, each with its key and binding id."""
        for spec in EDITOR_KEYS:
            if spec.action in ("quit", "command_palette"):
                continue
            title = spec.help
            yield SystemCommand(title[0].upper() + title[1:],
                                f"{describe_key(spec.key)}   ({spec.id})",
                                self._palette_runner(spec.action))

    def _palette_runner(self, action: str) -> Callable[[], Any]:
        async def run() -> None:
            await self.app.run_action(action, self)
        return run

    def action_command_palette(self) -> None:
        """ctrl+p (`editor.palette`): Textual's palette, with this screen's commands."""
        self.app.action_command_palette()

    async def quit_requested(self) -> None:
        await self.action_quit()


def metric_line(name: str, threshold: float, model: str | None, room: int) -> Text:
    """The header's right half: the metric's name, threshold and model, in `room` columns
    when it can: the threshold's word goes first, then the name is shortened; the model
    is never cut (a silent model swap is what the line is there to show)."""
    shown_model = (model, "bold") if model else ("no model pinned", "yellow")
    line = Text.assemble((name, "bold"), " · threshold ", (f"{threshold:g}", "bold"),
                         " · ", shown_model)
    if line.cell_len <= room:
        return line
    tail = Text.assemble(" · ≥", (f"{threshold:g}", "bold"), " · ", shown_model)
    keep = max(8, room - tail.cell_len)
    head = Text(name if len(name) <= keep else name[:keep - 1] + "…", style="bold")
    return head + tail

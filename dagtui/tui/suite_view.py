"""`dagtui edit SUITE.toml`: the rule dependencies of a suite, drawn and edited.

The left column lists the rules by level; the main pane draws the whole rule DAG (each
rule with its name, kind and status), or with `f` only the selected rule with its upstream
and downstream, the focused rule highlighted. Edits go through the suite model, so its
refusals are the UI's: deleting a rule others depend on is refused with their names, and a
dependency that would close a cycle is refused the moment it is chosen, with the cycle.
Enter on a graph rule pushes the graph editor (`screens.editor.EditorScreen`) on that graph,
in the same app; when it closes, this view reads the suite again and shows that rule.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.reactive import reactive
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from dagtui.diagnostics import Diagnostic
from dagtui.suite.drawing import draw_suite
from dagtui.suite.loader import SuiteLoad, resolve_graph_path
from dagtui.suite.model import Rule, SuiteEditError
from dagtui.suite.save import SuiteSaveError
from dagtui.tui.keys import SUITE_KEYS, bindings, suite_groups
from dagtui.tui.screens.base import DagtuiScreen
from dagtui.tui.suite_state import SuiteState
from dagtui.tui.widgets.graph_view import styled_text

UPSTREAM_STYLE = "cyan"
DOWNSTREAM_STYLE = "yellow"
FOCUS_STYLE = "reverse bold"


class SuiteScreen(DagtuiScreen):
    """The suite dependencies editor: thin widgets over a `SuiteState`."""

    TITLE = "dagtui suite"
    #: its rules are prefixed with `SuiteScreen`: the editor pushed from here shares the
    #: app's stylesheet, and both name a `#main` and a `#status`
    CSS_PATH = Path(__file__).with_name("suite.tcss")
    BINDINGS = bindings(SUITE_KEYS)

    #: the picture shows only the selected rule with its upstream and downstream
    focus_mode: reactive[bool] = reactive(False, init=False)
    #: the suite differs from the file (mirrors `SuiteState.dirty` for the status line)
    modified: reactive[bool] = reactive(False, init=False)
    #: the last thing said (a refusal, a save), shown after the modified flag
    status_text: reactive[str] = reactive("", init=False)

    def __init__(self, path: str | Path, *, select: str | None = None) -> None:
        super().__init__()
        self.path = str(path)
        self.state = SuiteState.open(self.path, select)
        self.drawing_text = ""
        self.drawing: Any = None

    # the state's data under the names the view (and its tests) always used
    @property
    def load(self) -> SuiteLoad:
        return self.state.load

    @property
    def selected(self) -> str | None:
        return self.state.selected

    @selected.setter
    def selected(self, rule_id: str | None) -> None:
        self.state.selected = rule_id

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Problems of the suite as edited (re-checked after every edit, before saving)."""
        return self.state.diagnostics

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="body"):
            yield OptionList(id="rules")
            with Vertical(id="main"):
                with ScrollableContainer(id="dag"):
                    yield Static(id="dag-canvas")
                yield Static(id="details")
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        suite = self.load.suite
        self.sub_title = Path(self.path).name  # no absolute paths: pictures stay stable
        if suite is None:
            problems = "\n".join(d.format() for d in self.load.diagnostics)
            self.query_one("#dag-canvas", Static).update(
                Text(f"This suite file cannot be shown:\n\n{problems}", style="red"))
            return
        self.title = f"Suite: {suite.meta.name}"
        self.state.settle_selection()
        self.refresh_all()
        self.query_one("#rules", OptionList).focus()

    # -- watchers: a flag set is a flag shown ----------------------------------------------------
    def watch_focus_mode(self) -> None:
        self.refresh_view()

    def watch_modified(self) -> None:
        self._show_status()

    def watch_status_text(self) -> None:
        self._show_status()

    # -- drawing -----------------------------------------------------------------------------
    def refresh_all(self) -> None:
        suite = self.load.suite
        if suite is None:
            return
        options = self.query_one("#rules", OptionList)
        options.clear_options()
        ordered = self.state.ordered_rules()
        for n, rid in ordered:
            rule = suite.rules[rid]
            kind = self.load.kinds.get(rid, "?")
            label = Text(f"L{n} ", style="dim")
            label.append(rid, style="dim" if not rule.active else "")
            label.append(f"  {kind}", style="green" if kind == "code" else "magenta")
            if not rule.active:
                label.append(" paused", style="yellow")
            options.add_option(Option(label, id=rid))
        if self.selected is not None and self.selected in suite.rules:
            options.highlighted = [rid for _, rid in ordered].index(self.selected)
        self.refresh_view()

    def refresh_view(self) -> None:
        suite = self.load.suite
        if suite is None:
            return
        sel = self.selected if self.selected in suite.rules else None
        styles: dict[str, str] = {}
        if sel is not None:
            if self.focus_mode:
                styles.update({r: UPSTREAM_STYLE for r in suite.upstream(sel)})
                styles.update({r: DOWNSTREAM_STYLE for r in suite.downstream(sel)})
            styles[sel] = FOCUS_STYLE
        focus = sel if self.focus_mode else None
        drawing = draw_suite(suite, self.load.kinds, focus=focus, styles=styles)
        text = styled_text(drawing)
        self.drawing_text = drawing.text()
        self.drawing = drawing
        self.query_one("#dag-canvas", Static).update(text)
        dag = self.query_one("#dag", ScrollableContainer)
        dag.border_title = (
            f"Dependencies · {sel}: upstream (cyan) + downstream (yellow)" if focus
            else "Dependencies · all rules"
        )
        self.query_one("#details", Static).update(self._details(sel))
        self._show_status()

    def _details(self, rid: str | None) -> Text:
        suite = self.load.suite
        if suite is None or rid is None:
            return Text("no rule selected")
        rule = suite.rules[rid]
        out = Text()
        out.append(rule.display_name, style="bold")
        out.append(f"  ({rid}) · {self.load.kinds.get(rid, '?')} · {rule.status}\n")
        if rule.graph is not None:
            out.append(f"graph: {rule.graph}  (enter opens it)\n")
        elif rule.check is not None:
            settings = ", ".join(f"{k} = {v!r}" for k, v in rule.check.items())
            out.append(f"check: {settings}\n")
        out.append("depends on: " + (", ".join(rule.depends_on) or "nothing (level 0)") + "\n")
        out.append("needed by: " + (", ".join(suite.dependents(rid)) or "no rule") + "\n")
        extras = []
        if rule.filter:
            extras.append("filter: " + " and ".join(f.describe() for f in rule.filter))
        if rule.sample is not None:
            extras.append(f"sample: rate {rule.sample.rate:g}, seed {rule.sample.seed}")
        if rule.max_calls is not None:
            extras.append(f"max_calls: {rule.max_calls}")
        if extras:
            out.append(" · ".join(extras) + "\n")
        for d in self.state.problems_of(rid):
            out.append(f"{d.severity.value} {d.code}: {d.message}\n",
                       style="red" if d.is_error else "yellow")
        return out

    def _show_status(self) -> None:
        flag = "● modified  " if self.modified else ""
        self.query_one("#status", Static).update(Text(flag + self.status_text))

    def say(self, message: str, *, error: bool = False, title: str | None = None) -> None:
        """Status line plus a toast: refusals must be impossible to miss."""
        self.status_text = message
        self.notify(message, severity="error" if error else "information", title=title or "",
                    timeout=6)

    # -- selection ---------------------------------------------------------------------------
    @on(OptionList.OptionHighlighted, "#rules")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and event.option.id != self.selected:
            self.selected = event.option.id
            self.refresh_view()

    @on(OptionList.OptionSelected, "#rules")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.selected = event.option.id
        self.action_open_graph()

    def _rule(self) -> Rule | None:
        return self.state.rule()

    # -- actions -------------------------------------------------------------------------------
    def action_toggle_focus(self) -> None:
        self.focus_mode = not self.focus_mode

    def _edit(self, edit: Callable[[], object], message: str, title: str) -> bool:
        """Run one `SuiteState` edit, then redraw and say `message` (or say its refusal)."""
        try:
            edit()
        except SuiteEditError as exc:
            self.say(str(exc), error=True, title=title)
            return False
        self._edited(message)
        return True

    def _edited(self, message: str) -> None:
        self.modified = self.state.dirty
        self.refresh_all()
        self.say(message)

    def on_click(self, event: Any) -> None:
        """A click on a rule's box in the picture selects that rule."""
        canvas = self.query_one("#dag-canvas", Static)
        if self.drawing is None or event.widget is not canvas:
            return
        offset = event.get_content_offset(canvas)
        if offset is None:
            return
        rid = self.drawing.rule_at(offset.x, offset.y)
        if rid is not None and rid != self.selected:
            self.selected = rid
            self.refresh_all()

    def action_delete_rule(self) -> None:
        rule = self._rule()
        if rule is None:
            return
        self._edit(lambda: self.state.delete_rule(rule.id),
                   f"deleted rule '{rule.id}' (ctrl+s saves)", "Delete refused")

    def action_add_dependency(self) -> None:
        rule = self._rule()
        suite = self.load.suite
        if rule is None or suite is None:
            return
        choices = [
            (rid, f"{rid}  ({self.load.kinds.get(rid, '?')})")
            for rid in suite.rules if rid != rule.id and rid not in rule.depends_on
        ]
        if not choices:
            self.say(f"'{rule.id}' already depends on every other rule", error=True)
            return

        def chosen(dep: str | None) -> None:
            if dep is not None:
                self.add_dependency(rule.id, dep)

        self._pick_rule(f"'{rule.id}' depends on…", choices, chosen)

    def _pick_rule(self, title: str, choices: list[tuple[str, str]],
                   chosen: Callable[[str | None], None]) -> None:
        """Ask for one rule of `choices` (rule id, text); `chosen` gets its id (None: esc)."""
        from dagtui.tui.screens.dialogs import PickScreen

        ids = [rid for rid, _text in choices]
        self.app.push_screen(PickScreen(title, "", [text for _rid, text in choices], ids),
                         lambda index: chosen(None if index is None else ids[index]))

    def add_dependency(self, rule_id: str, dep: str) -> bool:
        """Add the edge or refuse it at once (a cycle names every rule on it)."""
        return self._edit(lambda: self.state.add_dependency(rule_id, dep),
                          f"'{rule_id}' now depends on '{dep}' (ctrl+s saves)",
                          "Dependency refused")

    def action_remove_dependency(self) -> None:
        rule = self._rule()
        if rule is None:
            return
        if not rule.depends_on:
            self.say(f"'{rule.id}' depends on nothing", error=True)
            return

        def chosen(dep: str | None) -> None:
            if dep is not None:
                self._edit(lambda: self.state.remove_dependency(rule.id, dep),
                           f"'{rule.id}' no longer depends on '{dep}' (ctrl+s saves)",
                           "Not removed")

        self._pick_rule(f"remove a dependency of '{rule.id}'",
                        [(d, d) for d in rule.depends_on], chosen)

    def action_toggle_paused(self) -> None:
        rule = self._rule()
        if rule is None:
            return
        status = "active" if rule.status == "paused" else "paused"
        self._edit(lambda: self.state.toggle_paused(rule.id),
                   f"'{rule.id}' is now {status} (ctrl+s saves)", "Not changed")

    def action_undo(self) -> None:
        self._travelled(self.state.undo(), "undid", "nothing to undo")

    def action_redo(self) -> None:
        self._travelled(self.state.redo(), "redid", "nothing to redo")

    def _travelled(self, what: str | None, done: str, nothing: str) -> None:
        if what is None:
            self.say(nothing)
        else:
            self._edited(f"{done}: {what}")

    def action_open_graph(self) -> None:
        rule = self._rule()
        suite = self.load.suite
        if rule is None or suite is None:
            return
        if rule.graph is None:
            self.say(f"'{rule.id}' is an inline check (no graph file); edit it in the suite "
                     "file", error=True)
            return
        path = resolve_graph_path(suite, rule)
        if self.modified:
            self.say("save (ctrl+s) before opening a graph: unsaved suite edits would be lost",
                     error=True)
            return
        from dagtui.tui.screens.editor import EditorScreen

        self.app.push_screen(EditorScreen(str(path)),
                             lambda _: self._back_from(rule.id))

    def _back_from(self, rule_id: str) -> None:
        """The graph editor closed: read the suite again (as on opening), that rule
        selected."""
        self.state = SuiteState.open(self.path, rule_id)
        self.modified = self.state.dirty
        self.state.settle_selection()
        self.refresh_all()
        self.query_one("#rules", OptionList).focus()

    def action_save(self) -> None:
        if self.load.suite is None:
            return
        try:
            self.state.save()  # re-reads the file: fresh problems for what was saved
        except (SuiteSaveError, OSError) as exc:
            self.say(f"not saved: {exc}", error=True, title="Save failed")
            return
        self.modified = self.state.dirty
        self.refresh_all()
        self.say(f"saved {self.path}")

    def action_cursor(self, delta: int) -> None:
        """`j` / `k`: the next / previous rule (as the arrows in the list)."""
        rules = self.query_one("#rules", OptionList)
        if delta > 0:
            rules.action_cursor_down()
        else:
            rules.action_cursor_up()

    def action_help(self) -> None:
        from dagtui.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self, "suite", suite_groups(),
                                    heading="dagtui suite — keys"))

    async def quit_requested(self) -> None:
        """ctrl+q: as `q`."""
        await self.action_quit()

    async def action_quit(self) -> None:
        from dagtui.tui.screens.dialogs import ask_to_quit

        async def save() -> bool:
            self.action_save()
            return not self.modified

        if self.modified:
            self.status_text = "unsaved edits: save them, quit without (q again), or stay"
        ask_to_quit(self.app, unsaved=f"{Path(self.path).name} has unsaved edits."
                    if self.modified else None, leave=self.leave, save=save,
                    errors=sum(1 for d in self.diagnostics if d.is_error),
                    quit_key=("suite.quit", "q"))

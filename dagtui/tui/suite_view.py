"""`dagtui edit SUITE.toml`: the rule dependencies of a suite, drawn and edited.

The left column lists the rules by level; the main pane draws the whole rule DAG (each
rule with its name, kind and status), or with `f` only the selected rule with its upstream
and downstream, the focused rule highlighted. Edits go through the suite model, so its
refusals are the UI's: deleting a rule others depend on is refused with their names, and a
dependency that would close a cycle is refused the moment it is chosen, with the cycle.
Enter on a graph rule leaves this view with `OpenGraph`, and `run_suite_editor` opens that
graph in the graph editor, then comes back here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from ..exitcodes import ExitCode
from ..suite.drawing import draw_suite
from ..suite.loader import SuiteLoad, load_suite_file, load_suite_text, resolve_graph_path
from ..suite.model import Rule, SuiteEditError
from ..suite.save import SuiteSaveError, render_suite, save_suite
from .keys import SUITE_KEYS, Remappable, bindings
from .widgets.graph_view import styled_text

UPSTREAM_STYLE = "cyan"
DOWNSTREAM_STYLE = "yellow"
FOCUS_STYLE = "reverse bold"


@dataclass
class OpenGraph:
    """What SuiteApp returns when the user pressed enter on a graph rule."""

    path: str
    rule: str


class SuiteApp(Remappable, App[OpenGraph | None]):
    """The suite dependencies editor."""

    TITLE = "dagtui suite"
    CSS_PATH = "suite.tcss"  # beside this module
    BINDINGS = bindings(SUITE_KEYS)

    def __init__(self, path: str | Path, *, select: str | None = None) -> None:
        super().__init__()
        self.path = str(path)
        self.load: SuiteLoad = load_suite_file(self.path)
        self.selected: str | None = select
        self.focus_mode = False
        self.modified = False
        self.status_text = ""
        self.drawing_text = ""
        self.drawing: Any = None
        #: problems of the suite as edited (re-checked after every edit, before saving)
        self.diagnostics = list(self.load.diagnostics)

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
        if self.selected not in suite.rules:
            self.selected = next(iter(suite.rules), None)
        self.refresh_all()
        self.query_one("#rules", OptionList).focus()

    # -- drawing -----------------------------------------------------------------------------
    def _ordered_rules(self) -> list[tuple[int, str]]:
        suite = self.load.suite
        assert suite is not None
        try:
            return [(n, rid) for n, level in enumerate(suite.levels()) for rid in level]
        except ValueError:  # a cycle in the file as loaded: file order
            return [(0, rid) for rid in suite.rules]

    def refresh_all(self) -> None:
        suite = self.load.suite
        if suite is None:
            return
        options = self.query_one("#rules", OptionList)
        options.clear_options()
        ordered = self._ordered_rules()
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
        problems = [d for d in self.diagnostics if d.node == rid]
        for d in problems:
            out.append(f"{d.severity.value} {d.code}: {d.message}\n",
                       style="red" if d.is_error else "yellow")
        return out

    def _show_status(self) -> None:
        flag = "● modified  " if self.modified else ""
        self.query_one("#status", Static).update(Text(flag + self.status_text))

    def say(self, message: str, *, error: bool = False, title: str | None = None) -> None:
        """Status line plus a toast: refusals must be impossible to miss."""
        self.status_text = message
        self._show_status()
        self.notify(message, severity="error" if error else "information", title=title,
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
        suite = self.load.suite
        if suite is None or self.selected is None:
            return None
        return suite.rules.get(self.selected)

    # -- actions -------------------------------------------------------------------------------
    def action_toggle_focus(self) -> None:
        self.focus_mode = not self.focus_mode
        self.refresh_view()

    def _edited(self, message: str) -> None:
        self.modified = True
        self._recheck()
        self.refresh_all()
        self.say(message)

    def _recheck(self) -> None:
        """Validate the suite as edited (e.g. a rule now depending on a paused one)."""
        suite = self.load.suite
        if suite is None or self.load.text is None:
            return
        try:
            text = render_suite(suite, self.load.text)
        except SuiteSaveError:
            return
        self.diagnostics = load_suite_text(text, self.path).diagnostics

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
        if rule is None or self.load.suite is None:
            return
        try:
            self.load.suite.remove_rule(rule.id)
        except SuiteEditError as exc:
            self.say(str(exc), error=True, title="Delete refused")
            return
        self.selected = next(iter(self.load.suite.rules), None)
        self._edited(f"deleted rule '{rule.id}' (ctrl+s saves)")

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
        from .screens.dialogs import PickScreen

        ids = [rid for rid, _text in choices]
        self.push_screen(PickScreen(title, "", [text for _rid, text in choices], ids),
                         lambda index: chosen(None if index is None else ids[index]))

    def add_dependency(self, rule_id: str, dep: str) -> bool:
        """Add the edge or refuse it at once (a cycle names every rule on it)."""
        suite = self.load.suite
        assert suite is not None
        try:
            suite.add_dependency(rule_id, dep)
        except SuiteEditError as exc:
            self.say(str(exc), error=True, title="Dependency refused")
            return False
        self._edited(f"'{rule_id}' now depends on '{dep}' (ctrl+s saves)")
        return True

    def action_remove_dependency(self) -> None:
        rule = self._rule()
        if rule is None or self.load.suite is None:
            return
        if not rule.depends_on:
            self.say(f"'{rule.id}' depends on nothing", error=True)
            return

        def chosen(dep: str | None) -> None:
            if dep is not None and self.load.suite is not None:
                self.load.suite.remove_dependency(rule.id, dep)
                self._edited(f"'{rule.id}' no longer depends on '{dep}' (ctrl+s saves)")

        self._pick_rule(f"remove a dependency of '{rule.id}'",
                        [(d, d) for d in rule.depends_on], chosen)

    def action_toggle_paused(self) -> None:
        rule = self._rule()
        if rule is None or self.load.suite is None:
            return
        status = "active" if rule.status == "paused" else "paused"
        self.load.suite.set_status(rule.id, status)
        self._edited(f"'{rule.id}' is now {status} (ctrl+s saves)")

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
        self.exit(OpenGraph(str(path), rule.id))

    def action_save(self) -> None:
        if self.load.suite is None:
            return
        try:
            save_suite(self.load.suite, self.path)
        except (SuiteSaveError, OSError) as exc:
            self.say(f"not saved: {exc}", error=True, title="Save failed")
            return
        selected = self.selected
        self.load = load_suite_file(self.path)  # fresh diagnostics for the saved file
        self.diagnostics = list(self.load.diagnostics)
        self.selected = selected
        self.modified = False
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
        from .screens.help import HelpScreen

        self.push_screen(HelpScreen(self.screen, "suite", [("suite", bindings(SUITE_KEYS))],
                                    heading="dagtui suite — keys"))

    async def action_quit(self) -> None:
        from .screens.dialogs import ask_to_quit

        async def save() -> bool:
            self.action_save()
            return not self.modified

        if self.modified:
            self.status_text = "unsaved edits: save them, quit without (q again), or stay"
            self._show_status()
        ask_to_quit(self, unsaved=f"{Path(self.path).name} has unsaved edits."
                    if self.modified else None, leave=self.exit, save=save,
                    errors=sum(1 for d in self.diagnostics if d.is_error),
                    quit_key=("suite.quit", "q"))


def run_suite_editor(path: str | Path, *, select: str | None = None,
                     keymap: Mapping[str, str] | None = None) -> int:
    """`dagtui edit SUITE.toml`: the suite view; enter on a graph rule opens that graph in
    the graph editor and comes back to the suite when it closes. `keymap`: the user's
    remaps (`dagtui.keyfile`), for both."""
    while True:
        suite = SuiteApp(path, select=select)
        if keymap:
            suite.set_keymap(keymap)
        result: Any = suite.run()
        if not isinstance(result, OpenGraph):
            return ExitCode.OK
        from .app import EditorApp

        editor = EditorApp(result.path)
        if keymap:
            editor.set_keymap(keymap)
        editor.run()
        select = result.rule

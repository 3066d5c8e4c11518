"""The debugger as its own app (`dagtui step`) and as a screen over the editor (F5)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from dagtui.graph.analysed import CheckedGraph
from dagtui.graph.model import Graph
from dagtui.judges.factory import default_judge_name, make_judge
from dagtui.run.cases import Case, CaseError, cases_source, load_cases
from dagtui.tui.debugger.human import TuiHumanJudge
from dagtui.tui.debugger.screen import DebuggerScreen
from dagtui.tui.keys import Remappable


def graph_cases(graph: Graph, graph_path: str | Path | None,
                cases_file: str | Path | None = None) -> tuple[list[Case], str | None, str | None]:
    """(cases, where they came from, problem): `--cases`, else `[metric].cases`."""
    source = cases_source(graph, graph_path, cases_file)
    if source is None:
        return [], None, None
    try:
        return load_cases(source), source, None
    except CaseError as exc:
        return [], source, str(exc)


class DebuggerApp(Remappable, App[int]):
    """`dagtui step`: the debugger screen alone; esc quits.

    `keymap`: binding id -> key(s), the user's remaps (`dagtui.keyfile`); tests and
    screenshots pass none, so they never depend on the machine's settings.
    """

    TITLE = "dagtui step"
    # ctrl+p: the screen's provider lists every debugger action (its footer hides the
    # palette key to keep the room for the debugger's own keys; F1 names it)
    ENABLE_COMMAND_PALETTE = True

    def __init__(self, graph: Graph, graph_path: str | Path | None = None, *,
                 cursor_blink: bool = True, keymap: Mapping[str, str] | None = None,
                 **screen_args: Any) -> None:
        super().__init__()
        self.cursor_blink = cursor_blink
        self.graph = graph
        self.graph_path = graph_path
        self.screen_args = screen_args
        if keymap:
            self.set_keymap(keymap)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's own commands, less its "Keys" panel (F1 is the debugger's list)."""
        for command in super().get_system_commands(screen):
            if command.title != "Keys":
                yield command

    def on_mount(self) -> None:
        self.push_screen(DebuggerScreen(self.graph, self.graph_path, standalone=True,
                                        **self.screen_args))

    async def action_quit(self) -> None:
        """ctrl+q: leave as esc does, asking first when work would be lost."""
        try:
            self.debugger.leave_asking()
        except LookupError:
            self.exit()

    @property
    def debugger(self) -> DebuggerScreen:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, DebuggerScreen):
                return screen
        raise LookupError("the debugger screen is not open")


def known_binding_ids() -> set[str]:
    """Every id a keys file may name: the debugger's, and the editor's and the suite
    view's, which share the file (`dagtui step` checks remaps against these)."""
    from dagtui.tui.keys import binding_ids

    return binding_ids()


def open_debugger(editor: Any, *, case: str | None = None, pause_at: str | None = None,
                  on_close: Callable[[], None] | None = None) -> None:
    """F5 in the editor: step the graph being edited with its cases file.

    From the calibration view: `case` is the case to step and `pause_at` the node to run on
    to and stop before (its cases file is the one the calibration used, when it still exists).
    When the calibration ran a model, the debugger asks that model (same endpoint, so the
    answers calibration cached are replayed free) with the other labelled nodes answering
    their labels: the node is asked exactly what calibration asked it.

    The judge is offline by default (the case labels, or a person when there are none);
    `j` switches to the graph's model. "Edit & re-run" edits go back into the editor as
    ordinary undoable edits. `on_close` runs once the debugger has closed (the calibration
    view reopens itself that way).
    """
    if any(isinstance(s, DebuggerScreen) for s in editor.screen_stack):
        return  # already open
    state = editor.state
    if state.read_only:
        editor.notify("the file does not parse: fix it before debugging", severity="error")
        return
    if state.errors:
        editor.notify(f"fix the {state.errors} error(s) first: an invalid graph cannot run",
                      severity="error")
        return
    graph = state.graph
    path = str(state.path)
    from dagtui.tui.calibration import load_calibration

    calibration = load_calibration(path, getattr(editor, "calibration_file", None))
    cases_file = (calibration or {}).get("cases_file") if case is not None else None
    cases, source, problem = graph_cases(
        graph, path, cases_file if cases_file and Path(cases_file).exists() else None)
    if problem:
        editor.notify(problem, severity="warning", title="cases")

    def factory(name: str) -> Any:
        return make_judge(name, graph, human=lambda: TuiHumanJudge(editor))

    python = getattr(editor, "python", None)  # the editor's consent: one per session

    def edited(nid: str, name: str, value: Any) -> None:
        state.set_field(nid, name, value)

    def cases_written(name: str) -> None:
        # the debugger appended written cases to a new file: the graph now names it
        if state.graph.metric.cases is None:
            state.set_metric("cases", name)

    def closed(_: Any) -> None:
        sync = getattr(editor, "sync", None)
        if sync is not None:
            editor.call_later(sync, rebuild_form=True)
        if on_close is not None:
            on_close()

    judge = factory(default_judge_name(cases))
    model = ((calibration or {}).get("judge") or {}).get("model") if case is not None else None
    if model:
        judge = make_judge("litellm", graph, model=model,
                           api_base=(calibration or {}).get("judge", {}).get("api_base"))
    editor.push_screen(DebuggerScreen(graph, path, cases=cases, judge=judge,
                                      cases_source=source, judge_factory=factory,
                                      on_edit=edited, python=python, case=case,
                                      pause_at=pause_at, calibration=calibration,
                                      force_labels=bool(model), on_cases_file=cases_written,
                                      checked=editor_check(state)),
                       closed)


def editor_check(state: Any) -> CheckedGraph | None:
    """The editor's latest check as the graph's, when it describes the graph as it is now
    (no edit's or deferred open's validation still owed: F5 settles those first), so the
    debugger runs on it instead of validating again; else None (the debugger validates)."""
    if state.stale or state.checking or state.read_only:
        return None
    return CheckedGraph.of_check(state.graph, state.diagnostics, state.paths)


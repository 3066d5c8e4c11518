"""The one Textual app of dagtui: `dagtui edit`, `dagtui edit SUITE.toml` and `dagtui step`.

`DagtuiApp` holds what is app-wide (the user's key remaps, the blink setting, the
notifications shown) and starts on one screen; every other view is pushed over it and
popped back, never a second app:

- `screens.editor.EditorScreen`: the graph editor (`editor_app`, `dagtui edit GRAPH.toml`);
  F5 pushes the debugger, K the calibration view;
- `debugger.screen.DebuggerScreen`: the step debugger (`debugger_app`, `dagtui step`);
- `suite_view.SuiteScreen`: a suite's rule dependencies (`suite_app`); enter on a rule
  pushes the editor on its graph, and closing the editor comes back;
- `screens.calibration.CalibrationScreen`: pushed by the editor (K).

A new screen plugs in by subclassing `screens.base.DagtuiScreen` (its own `BINDINGS`,
`CSS_PATH`, `COMMANDS`; `quit_requested`, `palette_commands`, `ready` when the defaults do
not fit) and being passed as `DagtuiApp(start=TheScreen(...))`, or pushed by another
screen with `self.app.push_screen(TheScreen(...), on_close)`. Its keys go into
`dagtui.tui.keys.key_scopes_table` (F1, `--list-keys`, remaps and clash checks).

This module is the TUI's entry point for the commands (pyproject's import-linter contract):
the screens never import it, so it can import any of them; it imports each only when asked
for it, so `dagtui step` does not load the editor and `dagtui edit` not the debugger.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.app import App, SystemCommand
from textual.screen import Screen

from dagtui.tui.keys import Remappable
from dagtui.tui.screens.base import DagtuiScreen

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from dagtui.graph.checks import PythonConsent
    from dagtui.graph.model import Graph
    from dagtui.labels.session import LabelSession
    from dagtui.tui.debugger.screen import DebuggerScreen
    from dagtui.tui.screens.editor import EditorScreen
    from dagtui.tui.state import EditorState
    from dagtui.tui.suite_view import SuiteScreen


class DagtuiApp(Remappable, App[None]):
    """The app, started on `start` (any screen; a `DagtuiScreen` answers ctrl+q, adds its
    palette entries and tells `run_test` when it has settled).

    `start` is the app's default screen (the bottom of the stack: leaving it leaves the
    app); its stylesheet is read with the app's, before the first frame. `cursor_blink`:
    False in snapshot tests and screenshots, so the picture never depends on timing.
    `keymap`: binding id -> key(s), the user's remaps (`dagtui.keyfile`); tests and
    screenshots pass none, so they never depend on the machine's settings.
    """

    TITLE = "dagtui"
    ENABLE_COMMAND_PALETTE = True

    def __init__(self, start: Screen[Any], *, title: str | None = None,
                 cursor_blink: bool = True, keymap: Mapping[str, str] | None = None) -> None:
        super().__init__(css_path=list(start.css_path) or None)
        self.start = start
        if title is not None:
            self.title = title
        self.cursor_blink = cursor_blink
        #: every notification shown, newest last (tests read it; the toasts vanish)
        self.notices: list[str] = []
        if keymap:
            self.set_keymap(keymap)

    def get_default_screen(self) -> Screen[Any]:
        return self.start

    def run(self, **kwargs: Any) -> None:
        """Textual's `run`, with every frame sent to the terminal without waiting on the
        GIL (`dagtui.tui.startup.prompt_frames`)."""
        from dagtui.tui.startup import prompt_frames

        with prompt_frames():
            return super().run(**kwargs)

    @on(events.Ready)
    def _first_frame_shown(self) -> None:
        """The first frame is on screen: the collector `dagtui edit` paused before its
        imports runs again (`dagtui.tui.startup`). A handler of its own, so an `on_ready` of
        a subclass (the benchmark's) does not replace it."""
        from dagtui.tui.startup import resume_collector

        resume_collector()

    def notify(self, message: str, *args: Any, **kwargs: Any) -> None:
        self.notices.append(str(message))
        super().notify(message, *args, **kwargs)

    # -- the screens, by type (tests and hand-offs read them; LookupError when not open) --
    def _open(self, kind: type[Screen[Any]]) -> Any:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, kind):
                return screen
        raise LookupError(f"no {kind.__name__} is open")

    @property
    def editor(self) -> EditorScreen:
        """The graph editor (the topmost one open)."""
        from dagtui.tui.screens.editor import EditorScreen

        screen: EditorScreen = self._open(EditorScreen)
        return screen

    @property
    def debugger(self) -> DebuggerScreen:
        """The step debugger, when open."""
        from dagtui.tui.debugger.screen import DebuggerScreen

        screen: DebuggerScreen = self._open(DebuggerScreen)
        return screen

    @property
    def suite(self) -> SuiteScreen:
        """The suite view, when open."""
        from dagtui.tui.suite_view import SuiteScreen

        screen: SuiteScreen = self._open(SuiteScreen)
        return screen

    # -- what the app asks of the screen on top ----------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """ctrl+q (Textual's app-wide key) goes to a dagtui screen (unless it binds ctrl+q
        itself: `BINDS_QUIT`) or to the quit question; over any other dialog it does nothing
        (esc closes the dialog)."""
        if action == "quit":
            from dagtui.tui.screens.dialogs import QuitScreen

            screen = self.screen
            if isinstance(screen, DagtuiScreen):
                return not screen.BINDS_QUIT  # its own ctrl+q binding answers
            return isinstance(screen, QuitScreen)
        return True

    async def action_quit(self) -> None:
        """ctrl+q: the screen on top decides (the editor asks about unsaved edits); on the
        quit question itself, it answers "leave"."""
        from dagtui.tui.screens.dialogs import QuitScreen

        screen = self.screen
        if isinstance(screen, DagtuiScreen):
            await screen.quit_requested()
        elif isinstance(screen, QuitScreen):
            screen.dismiss("discard")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette: the screen's own commands first, then Textual's (less its "Keys"
        panel where F1 is the screen's list)."""
        keys_panel = True
        if isinstance(screen, DagtuiScreen):
            yield from screen.palette_commands()
            keys_panel = screen.SHOW_KEYS_PANEL
        for command in super().get_system_commands(screen):
            if keys_panel or command.title != "Keys":
                yield command

    @asynccontextmanager
    async def run_test(self, *args: Any, **kwargs: Any) -> AsyncIterator[Pilot[None]]:
        """Textual's `run_test`, handing over the pilot only once the start screen has
        settled (`DagtuiScreen.ready`: the editor's first validation), and closing the app
        only once the test's last step has settled too."""
        async with super().run_test(*args, **kwargs) as pilot:
            if isinstance(self.start, DagtuiScreen):
                await self.start.ready()
                await pilot.pause()
            yield pilot
            # what the test's last step started (a form rebuilt after a type change, its
            # fields mounting) finishes before the app closes: a Select mounted while the
            # app shuts down finds its own children gone (NoMatches, seen once in CI)
            await pilot.pause()
            await pilot.pause()


# -- the app started on each screen (what the commands, tests and screenshots run) ---------
def editor_app(path: str | Path, *, starter: str | None = None, poll_interval: float = 1.0,
               state: EditorState | None = None, cursor_blink: bool = True,
               python: PythonConsent | None = None, calibration: str | Path | None = None,
               keymap: Mapping[str, str] | None = None) -> DagtuiApp:
    """`dagtui edit GRAPH.toml`: the editor on `path` (read now; a missing file starts from
    `starter`, else the starter chooser). See `EditorScreen` for the rest."""
    from dagtui.tui.screens.editor import EditorScreen

    screen = EditorScreen(path, starter=starter, poll_interval=poll_interval, state=state,
                          python=python, calibration=calibration)
    return DagtuiApp(screen, cursor_blink=cursor_blink, keymap=keymap)


def debugger_app(graph: Graph, graph_path: str | Path | None = None, *,
                 cursor_blink: bool = True, keymap: Mapping[str, str] | None = None,
                 **screen_args: Any) -> DagtuiApp:
    """`dagtui step`: the debugger alone (esc quits); `screen_args` go to `DebuggerScreen`."""
    from dagtui.tui.debugger.screen import DebuggerScreen

    screen = DebuggerScreen(graph, graph_path, standalone=True, **screen_args)
    # ctrl+p: the screen's provider lists every debugger action (its footer hides the
    # palette key to keep the room for the debugger's own keys; F1 names it)
    return DagtuiApp(screen, title="dagtui step", cursor_blink=cursor_blink, keymap=keymap)


def suite_app(path: str | Path, *, select: str | None = None, cursor_blink: bool = True,
              keymap: Mapping[str, str] | None = None) -> DagtuiApp:
    """`dagtui edit SUITE.toml`: the suite view; enter on a graph rule opens that graph in
    the editor, in the same app, and closing the editor comes back to the suite."""
    from dagtui.tui.suite_view import SuiteScreen

    return DagtuiApp(SuiteScreen(path, select=select), title="dagtui suite",
                     cursor_blink=cursor_blink, keymap=keymap)


def label_app(session: LabelSession, *, reveal: bool = False, title: str = "",
              cursor_blink: bool = True) -> DagtuiApp:
    """`dagtui label`: the labelling screen over `session` (esc leaves)."""
    from dagtui.tui.label.screen import LabelScreen

    return DagtuiApp(LabelScreen(session, reveal=reveal, title=title), title="dagtui label",
                     cursor_blink=cursor_blink)

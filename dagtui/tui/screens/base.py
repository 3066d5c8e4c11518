"""What the one app (`dagtui.tui.app.DagtuiApp`) asks of the screens it shows.

The editor, the debugger, the suite view (and any screen added later, such as the
labelling screen) are `DagtuiScreen`s: each owns its bindings (Textual consults a screen's
bindings only while it is on top, so nothing has to switch another screen's keys off), and
answers the few questions the app has to put to whichever screen is shown:

- `quit_requested`: ctrl+q (Textual's app-wide key) was pressed while this screen is on
  top; the default leaves the app. A screen with work to lose asks first. A screen that
  binds ctrl+q itself says so with `BINDS_QUIT` (the app's key then steps aside).
- `palette_commands`: the screen's own actions in the command palette (ctrl+p), before
  Textual's; `SHOW_KEYS_PANEL = False` drops Textual's "Keys" entry where F1 is the
  screen's own list of keys.
- `ready`: awaited by `DagtuiApp.run_test` before the test gets its pilot (the editor:
  until its first validation has run), so every test starts from a settled screen.
- `leave`: close this screen: back to the screen below, or out of the app when it is the
  one the app started on. A key that leaves says which in the footer: on the start
  screen its label is the one `dagtui.tui.keys.START_DESCRIPTIONS` names (esc "quit" in
  `dagtui label`, "back" when the labelling screen sits over the editor).
- `read_css`: a stylesheet for widgets the screen mounts after its first frame, read then
  rather than with the screen's own `CSS_PATH` (the editor's form and bottom panels).

This module imports no screen and no app, so every screen can import it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from textual.app import SystemCommand
from textual.binding import ActiveBinding
from textual.screen import Screen

from dagtui.tui.keys import START_DESCRIPTIONS


class DagtuiScreen(Screen[Any]):
    """A full screen of dagtui (not a dialog): see the module docstring."""

    #: Textual's "Keys" panel in the palette (False where F1 lists the screen's keys)
    SHOW_KEYS_PANEL: ClassVar[bool] = True
    #: the screen binds the `quit` action to ctrl+q itself (a remappable key of its own,
    #: shown in its footer): the app's ctrl+q then stays out of its way
    BINDS_QUIT: ClassVar[bool] = False

    @property
    def is_start(self) -> bool:
        """True for the screen the app started on (leaving it leaves the app)."""
        return bool(self.app.screen_stack) and self.app.screen_stack[0] is self

    @property
    def leaving_quits(self) -> bool:
        """True while the screen's leave key (esc) leaves the app: on the start screen,
        unless the screen has a view of its own to close first (the debugger's trace)."""
        return self.is_start

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """Textual's, each binding `START_DESCRIPTIONS` names relabelled while leaving quits:
        the footer reads this, so it says "quit" where the key leaves the app and "back"
        where it returns to the screen below (the same screen can be either)."""
        active = super().active_bindings
        if not self.leaving_quits:
            return active
        return {key: ActiveBinding(a.node, dataclasses.replace(
                    a.binding, description=START_DESCRIPTIONS[a.binding.id]), a.enabled,
                    a.tooltip)
                if a.binding.id in START_DESCRIPTIONS else a
                for key, a in active.items()}

    def leave(self, result: Any = None) -> None:
        """Back to the screen below, or out of the app from the start screen."""
        if self.is_start:
            self.app.exit()
        else:
            self.dismiss(result)

    def read_css(self, path: Path) -> None:
        """Add the stylesheet at `path` to the app's, once. Call it before mounting the
        widgets it styles: they are styled as they mount, so nothing already on screen is
        restyled (its rules must match only those widgets), and only this file is parsed
        (Textual keeps the others' parsed rules)."""
        stylesheet = self.app.stylesheet
        if not stylesheet.has_source(os.path.abspath(path), ""):  # the key `read` files it under
            stylesheet.read(path)

    async def quit_requested(self) -> None:
        """ctrl+q while this screen is on top."""
        self.app.exit()

    def palette_commands(self) -> Iterable[SystemCommand]:
        """This screen's own entries of the command palette (none by default)."""
        return ()

    async def ready(self) -> None:
        """Return once the screen has settled (tests wait for it; nothing to wait for by
        default)."""

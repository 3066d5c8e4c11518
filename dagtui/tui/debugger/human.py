"""The TUI's questions from inside a run: the human judge, and consent for python checks.

The engine awaits `ask_person` (or a python check's consent) inside the debugger's worker;
the dialog is pushed on the app and a future is resolved when the person answers, so the UI
keeps running while it waits. Backing out of the human judge's dialog cancels the run (the
worker sees CancelledError); backing out of the python question denies it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from dagtui.graph.checks import PythonTarget
from dagtui.judges.base import Ask, HumanAnswer, HumanJudge

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import ModalScreen


async def answer_of(app: App[Any], screen: ModalScreen[Any]) -> Any:
    """Push `screen` and wait for what it dismisses with (the run's worker waits; the UI
    does not). A cancelled wait closes the dialog."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[Any] = loop.create_future()

    def done(value: Any) -> None:
        if not answer.done():
            answer.set_result(value)

    app.push_screen(screen, callback=done)
    try:
        return await answer
    except asyncio.CancelledError:
        if screen.is_attached and screen.is_current:
            screen.dismiss(None)
        raise


#: the python question's choices, in order (the first is highlighted)
PYTHON_CHOICES = ("Allow: run it (for this session)", "Deny: the step fails")


async def ask_python(app: App[Any], target: PythonTarget) -> bool:
    """The one-time question before a python check runs code; True when allowed."""
    from dagtui.tui.screens.dialogs import PickScreen

    hint = (f"The graph's check node '{target.node}' calls {target.function}() in "
            f"{target.path}. That is code running on this machine: allow it only if you "
            "trust the file. The answer holds until dagtui closes "
            "(--allow-python or DAGTUI_ALLOW_PYTHON=1 skips this question).")
    screen = PickScreen(f"Run python check {target.node}: {target.ref} from {target.path}?",
                        hint, list(PYTHON_CHOICES))
    return await answer_of(app, screen) == 0


class TuiHumanJudge(HumanJudge):
    """Asks the person at the keyboard (see `HumanAnswerScreen`)."""

    name = "human"

    def __init__(self, app: App[Any] | None = None) -> None:
        self.app = app
        #: how many questions were asked (tests, the header)
        self.asked = 0

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    async def ask_person(self, ask: Ask) -> HumanAnswer:
        from dagtui.tui.screens.dialogs import HumanAnswerScreen

        if self.app is None:
            raise RuntimeError("the human judge needs the app to ask in")
        self.asked += 1
        got = await answer_of(self.app, HumanAnswerScreen(ask))
        if got is None:
            raise asyncio.CancelledError("the person stopped the run")
        return got

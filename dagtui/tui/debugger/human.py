"""The human judge of the TUI: each node's question is a modal dialog.

The engine awaits `ask_person` inside the debugger's worker; the dialog is pushed on the
app and a future is resolved when the person answers, so the UI keeps running while it
waits. Backing out of the dialog cancels the run (the worker sees CancelledError).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ...judges.base import Ask, HumanAnswer, HumanJudge

if TYPE_CHECKING:
    from textual.app import App


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
        from .dialogs import HumanAnswerScreen

        if self.app is None:
            raise RuntimeError("the human judge needs the app to ask in")
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[HumanAnswer | None] = loop.create_future()

        def done(value: HumanAnswer | None) -> None:
            if not answer.done():
                answer.set_result(value)

        self.asked += 1
        screen = HumanAnswerScreen(ask)
        self.app.push_screen(screen, callback=done)
        try:
            got = await answer
        except asyncio.CancelledError:
            if screen.is_attached and screen.is_current:
                screen.dismiss(None)
            raise
        if got is None:
            raise asyncio.CancelledError("the person stopped the run")
        return got

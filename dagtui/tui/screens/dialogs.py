"""Small modal dialogs: ask a question, type a name, add a node, pick a starter."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from ...model import NODE_TYPES


def _settle(screen: ModalScreen) -> None:
    settle = getattr(screen.app, "settle_blink", None)
    if settle is not None:
        settle(screen)


class ChoiceScreen(ModalScreen[str]):
    """A question with buttons; dismisses with the chosen button's id ('cancel' on escape)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, message: str, choices: list[tuple[str, str, str]]) -> None:
        """`choices`: (id, button text, variant) in display order; the first is focused."""
        super().__init__()
        self.title_text = title
        self.message = message
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Static(self.message, classes="dialog-message")
            with Horizontal(classes="dialog-buttons"):
                for cid, text, variant in self.choices:
                    yield Button(text, id=cid, variant=variant)  # type: ignore[arg-type]

    def on_mount(self) -> None:
        self.query(Button).first().focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "cancel")

    def action_cancel(self) -> None:
        self.dismiss("cancel")


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line of text; `check` returns an error message or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, value: str = "", check: Callable[[str], str | None]
                 | None = None, hint: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.check = check
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            if self.hint:
                yield Static(self.hint, classes="dialog-message")
            yield Input(self.value, id="prompt-input")
            yield Static("", id="prompt-error", classes="field-msg")

    def on_mount(self) -> None:
        _settle(self)
        self.query_one(Input).focus()

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        error = self.check(event.value.strip()) if self.check else None
        self.query_one("#prompt-error", Static).update(
            Text(f"✖ {error}", style="bold red") if error else "")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        error = self.check(value) if self.check else None
        if error:
            self.query_one("#prompt-error", Static).update(Text(f"✖ {error}", style="bold red"))
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class AddNodeScreen(ModalScreen[tuple[str, str] | None]):
    """Choose the new node's type and id; `where` says where it will be attached."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, where: str, suggested: str, check: Callable[[str], str | None],
                 default_type: str = "binary") -> None:
        super().__init__()
        self.where = where
        self.suggested = suggested
        self.check = check
        self.default_type = default_type

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Add a node", classes="dialog-title")
            yield Static(self.where, classes="dialog-message")
            yield Select([(t, t) for t in NODE_TYPES], value=self.default_type,
                         allow_blank=False, id="add-type")
            yield Input(self.suggested, id="add-id", placeholder="node id")
            yield Static("", id="add-error", classes="field-msg")
            yield Static(Text("enter to add · escape to cancel", style="dim"))

    def on_mount(self) -> None:
        _settle(self)
        self.query_one("#add-id", Input).focus()

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        error = self.check(event.value.strip())
        self.query_one("#add-error", Static).update(
            Text(f"✖ {error}", style="bold red") if error else "")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        node_id = event.value.strip()
        error = self.check(node_id)
        if error:
            self.query_one("#add-error", Static).update(Text(f"✖ {error}", style="bold red"))
            return
        node_type = self.query_one("#add-type", Select).value
        self.dismiss((str(node_type), node_id))

    def action_cancel(self) -> None:
        self.dismiss(None)


class StarterScreen(ModalScreen[str | None]):
    """The file does not exist yet: choose the graph to start from."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, path: str, starters: list[tuple[str, str]]) -> None:
        super().__init__()
        self.path = path
        self.starters = starters

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Label(f"{self.path} does not exist yet", classes="dialog-title")
            yield Static("Start from which graph? It is written when you save (ctrl+s).",
                         classes="dialog-message")
            yield OptionList(*[
                Option(Text.assemble((name, "bold"), ("  " + desc, "dim")), id=name)
                for name, desc in self.starters
            ], id="starter-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)

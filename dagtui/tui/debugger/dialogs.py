"""Modal dialogs of the debugger: ask a person for a verdict, pick a what-if verdict, edit a
node's text, name a trace file, pick or edit the case.

Each returns its answer through `dismiss` (None when the person backs out with esc), so the
screen decides what happens next. Multi-line text is submitted with F2 (terminals cannot
tell ctrl+enter from enter, and ctrl+s is the debugger's trace save).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from ...cases import MULTI_TURN_FIELDS, SINGLE_TURN_FIELDS, Case, CaseError, case_from_dict
from ...judges.base import Ask, HumanAnswer
from .panes_text import format_messages
from .run_model import show_value

#: the debugger's stylesheet: the step screen, these dialogs and the keys screen
DEBUGGER_CSS_PATH = Path(__file__).with_name("debugger.tcss")


class DebuggerDialog(ModalScreen[Any]):
    """Base: esc backs out with None; shared look."""

    CSS_PATH = DEBUGGER_CSS_PATH
    BINDINGS = [Binding("escape", "cancel", "cancel", id="debugger.dialog.cancel")]

    def on_mount(self) -> None:
        settle_blink(self)

    def action_cancel(self) -> None:
        self.dismiss(None)


def settle_blink(screen: Any) -> None:
    """No blinking cursors when the app asks for none (tests, snapshots, screenshots)."""
    if getattr(screen.app, "cursor_blink", True):
        return
    for widget in screen.query("TextArea, Input"):
        widget.cursor_blink = False


# --------------------------------------------------------------------------- human judge


class HumanAnswerScreen(DebuggerDialog):
    """The human judge's question: the exact prompt, then the allowed answers.

    binary / non_binary: pick from the list (or press the number shown); task: type the
    evidence; geval: type a score 0..10. A reason may be added in every case.
    """

    BINDINGS = [
        Binding("f2", "submit", "answer", id="debugger.human.submit"),
        *[Binding(str(i), f"pick({i - 1})", show=False, id=f"debugger.human.pick{i}")
          for i in range(1, 10)],
    ]

    def __init__(self, ask: Ask) -> None:
        super().__init__()
        self.ask = ask
        self.choices: list[Any] = []
        if ask.kind == "binary":
            self.choices = [True, False]
        elif ask.kind == "non_binary":
            self.choices = list(ask.prompt.labels)

    def compose(self) -> ComposeResult:
        ask = self.ask
        with Vertical():
            yield Label(f"Human judge · {ask.node.id} · {ask.kind}", classes="dlg-title")
            yield Static("The exact prompt a model would get:", classes="dlg-hint")
            yield TextArea(format_messages(ask.prompt.messages), read_only=True,
                           soft_wrap=True, classes="dlg-prompt", id="human-prompt")
            if self.choices:
                yield Static("Your verdict (enter, or its number):", classes="dlg-hint")
                yield OptionList(*[Option(f"{i}. {show_value(c)}", id=f"choice-{i - 1}")
                                   for i, c in enumerate(self.choices, start=1)],
                                 id="human-choices")
            elif ask.kind == "task":
                yield Static("The evidence this task should output (F2 to submit):",
                             classes="dlg-hint")
                yield TextArea("", classes="dlg-text", id="human-text")
            else:
                yield Static("Score from 0 to 10 (enter or F2):", classes="dlg-hint")
                yield Input(placeholder="7", id="human-score")
            yield Input(placeholder="reason (optional)", id="human-reason")
            yield Static("", classes="dlg-error", id="human-error")
            with Horizontal(classes="dlg-buttons"):
                yield Button("Answer (F2)", variant="primary", id="human-ok")
                yield Button("Stop the run (esc)", id="human-stop")

    def on_mount(self) -> None:
        for sel in ("#human-choices", "#human-text", "#human-score"):
            found = self.query(sel)
            if found:
                found.first().focus()
                break

    def _reason(self) -> str:
        return self.query_one("#human-reason", Input).value.strip()

    def action_pick(self, index: int) -> None:
        if 0 <= index < len(self.choices) and not isinstance(self.focused, Input | TextArea):
            self.dismiss(HumanAnswer(self.choices[index], self._reason()))

    @on(OptionList.OptionSelected, "#human-choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(HumanAnswer(self.choices[event.option_index], self._reason()))

    @on(Input.Submitted, "#human-score")
    def _score_entered(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#human-ok")
    def _ok(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#human-stop")
    def _stop(self) -> None:
        self.dismiss(None)

    def action_submit(self) -> None:
        err = self.query_one("#human-error", Static)
        if self.choices:
            opts = self.query_one("#human-choices", OptionList)
            if opts.highlighted is None:
                err.update("pick a verdict first")
                return
            self.dismiss(HumanAnswer(self.choices[opts.highlighted], self._reason()))
        elif self.ask.kind == "task":
            self.dismiss(HumanAnswer(self.query_one("#human-text", TextArea).text,
                                     self._reason()))
        else:
            raw = self.query_one("#human-score", Input).value.strip()
            try:
                score = float(raw)
            except ValueError:
                err.update(f"not a number: {raw!r}")
                return
            if not 0 <= score <= 10:
                err.update("the score must be from 0 to 10")
                return
            self.dismiss(HumanAnswer(int(score) if score.is_integer() else score,
                                     self._reason()))


# --------------------------------------------------------------------------- what-if


class PickScreen(DebuggerDialog):
    """Pick one of a list of values (the what-if verdict); returns the index."""

    def __init__(self, title: str, hint: str, options: list[str]) -> None:
        super().__init__()
        self.title_text, self.hint, self.options = title, hint, options

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, classes="dlg-title")
            yield Static(self.hint, classes="dlg-hint")
            yield OptionList(*[Option(o) for o in self.options], id="pick-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option_index)


class TextScreen(DebuggerDialog):
    """Edit one text (a node's criteria, a what-if evidence or score, a file name).

    `multiline`: a TextArea submitted with F2; otherwise an Input submitted with enter.
    `check(value) -> error or None` keeps the dialog open until the value is usable.
    """

    BINDINGS = [Binding("f2", "submit", "apply", id="debugger.text.submit")]

    def __init__(self, title: str, hint: str, value: str = "", *, multiline: bool = False,
                 check: Any = None) -> None:
        super().__init__()
        self.title_text, self.hint, self.value = title, hint, value
        self.multiline, self.check = multiline, check

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, classes="dlg-title")
            yield Static(self.hint, classes="dlg-hint")
            if self.multiline:
                yield TextArea(self.value, soft_wrap=True, classes="dlg-text", id="text-value")
            else:
                yield Input(self.value, id="text-value")
            yield Static("", classes="dlg-error", id="text-error")
            with Horizontal(classes="dlg-buttons"):
                yield Button("Apply (F2)" if self.multiline else "Apply (enter)",
                             variant="primary", id="text-ok")
                yield Button("Cancel (esc)", id="text-cancel")

    def on_mount(self) -> None:
        self.query_one("#text-value").focus()

    def _current(self) -> str:
        widget = self.query_one("#text-value")
        return widget.text if isinstance(widget, TextArea) else widget.value  # type: ignore[attr-defined]

    @on(Input.Submitted)
    @on(Button.Pressed, "#text-ok")
    def action_submit(self) -> None:
        value = self._current()
        problem = self.check(value) if self.check else None
        if problem:
            self.query_one("#text-error", Static).update(problem)
            return
        self.dismiss(value)

    @on(Button.Pressed, "#text-cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


# --------------------------------------------------------------------------- the case


class CasePickerScreen(DebuggerDialog):
    """The cases of the cases file by name; the last entry edits the current case inline.

    Returns the index of the chosen case, or -1 for "edit inline".
    """

    def __init__(self, cases: list[Case], current: str | None, source: str | None) -> None:
        super().__init__()
        self.cases, self.current, self.source = cases, current, source

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Pick the case to step through", classes="dlg-title")
            yield Static(f"from {self.source}" if self.source else "no cases file loaded",
                         classes="dlg-hint")
            options = [Option(("● " if c.name == self.current else "  ") + f"{i}  {c.name}")
                       for i, c in enumerate(self.cases)]
            options.append(Option("✎ edit the current case inline…", id="edit"))
            yield OptionList(*options, id="case-list")

    def on_mount(self) -> None:
        opts = self.query_one(OptionList)
        opts.focus()
        for i, c in enumerate(self.cases):
            if c.name == self.current:
                opts.highlighted = i

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(-1 if event.option.id == "edit" else event.option_index)


#: fields shown as plain text; the rest are JSON (lists, objects)
TEXT_FIELDS = {"input", "actual_output", "expected_output", "scenario", "expected_outcome",
               "user_description", "chatbot_role", "name"}


def field_text(value: Any, name: str) -> str:
    if value is None:
        return ""
    if name in TEXT_FIELDS and isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1)


def parse_case(texts: dict[str, str], base: Case | None) -> Case:
    """Build a Case from the editor's texts; raises CaseError naming the bad field."""
    data: dict[str, Any] = {}
    for name, text in texts.items():
        if not text.strip():
            continue
        if name in TEXT_FIELDS:
            data[name] = text
            continue
        try:
            data[name] = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CaseError(f"field '{name}': not valid JSON ({exc.msg}, line {exc.lineno})") \
                from None
    if base is not None:
        for key, value in base.fields.items():
            if key not in texts and key not in data:
                data[key] = value  # fields the form does not show are kept
    return case_from_dict(data)


class CaseEditScreen(DebuggerDialog):
    """Every field of the graph's mode (single- or multi-turn), plus name and labels.

    Text fields as typed; lists and objects as JSON. F2 applies; the result is a new Case.
    """

    BINDINGS = [Binding("f2", "submit", "apply", id="debugger.case.submit")]

    def __init__(self, case: Case | None, multi_turn: bool, needed: list[str]) -> None:
        super().__init__()
        self.case = case
        fields = MULTI_TURN_FIELDS if multi_turn else SINGLE_TURN_FIELDS
        self.names = ["name", *fields, "expected", "expected_score"]
        self.needed = needed

    def _value(self, name: str) -> Any:
        c = self.case
        if c is None:
            return None
        if name == "name":
            return c.name
        if name == "expected":
            return c.expected or None
        if name == "expected_score":
            return c.expected_score
        return c.fields.get(name)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Edit the case (F2 applies, esc cancels)", classes="dlg-title")
            yield Static("Text fields as typed; lists and objects as JSON. Needed by this "
                         f"graph: {', '.join(self.needed) or 'nothing'}", classes="dlg-hint")
            with VerticalScroll(classes="case-fields"):
                for name in self.names:
                    mark = " (needed)" if name in self.needed else ""
                    yield Static(f"{name}{mark}", classes="field-name")
                    yield TextArea(field_text(self._value(name), name), soft_wrap=True,
                                   classes="field-area", id=f"case-{name}")
            yield Static("", classes="dlg-error", id="case-error")

    def on_mount(self) -> None:
        self.query_one(f"#case-{self.names[0]}", TextArea).focus()

    def texts(self) -> dict[str, str]:
        return {n: self.query_one(f"#case-{n}", TextArea).text for n in self.names}

    def action_submit(self) -> None:
        try:
            case = parse_case(self.texts(), self.case)
        except CaseError as exc:
            self.query_one("#case-error", Static).update(str(exc))
            return
        self.dismiss(case)


# --------------------------------------------------------------------------- help


class KeysScreen(DebuggerDialog):
    """Every debugger key, what it does and its binding id (F1 / ?), read from the live
    bindings and the user's remaps by `keys.help_sections`."""

    BINDINGS = [Binding("q,f1,question_mark", "cancel", "close", id="debugger.keys.close")]

    def __init__(self, sections: list[tuple[str, list[tuple[str, str, str]]]]) -> None:
        super().__init__()
        self.sections = sections

    @property
    def binding_ids(self) -> set[str]:
        """The binding ids listed."""
        return {bid for _title, rows in self.sections for _key, _does, bid in rows if bid}

    def key_for(self, binding_id: str) -> str | None:
        """The key shown for `binding_id` (None when it is not listed)."""
        return next((key for _title, rows in self.sections for key, _does, bid in rows
                     if bid == binding_id), None)

    def compose(self) -> ComposeResult:
        table = Table(box=None, expand=True, pad_edge=False, header_style="bold")
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("does")
        table.add_column("binding id", style="dim", no_wrap=True)
        for title, rows in self.sections:
            table.add_row(Text(title, style="bold underline"), "", "")
            for key, does, bid in rows:
                table.add_row(key, does, bid)
        with Vertical():
            yield Label("Debugger keys (esc closes)", classes="dlg-title")
            with VerticalScroll(id="keys-scroll"):
                yield Static(table, id="keys-text")
            yield Static("Remap a key by its id: DAGTUI_KEYS='debugger.step=s;debugger.back=q' "
                         "or lines like \"debugger.step\" = \"s\" in "
                         "~/.config/dagtui/keys.toml.", classes="dlg-hint")

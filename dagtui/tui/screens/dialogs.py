"""Every modal dialog of the editor, the debugger and the suite view, one family.

`Dialog` is the base: esc backs out (`dialog.cancel`), cursors do not blink when the app
asks for none, the look is `dialogs.tcss`. Each dialog answers through `dismiss` (None, or
"cancel" for `ChoiceScreen`, when the person backs out), so the caller decides what happens
next:

- `ChoiceScreen`: a question with buttons (its id);
- `PickScreen`: one of a list (its index);
- `TextScreen`: one text, one line or many (the text);
- `AddNodeScreen`, `StarterScreen`: the editor's new node and new file;
- `HumanAnswerScreen`, `CasePickerScreen`, `CaseEditScreen`: the debugger's human judge
  and its case.

`ask_to_quit` is the one way the three screens leave with unsaved work. Multi-line text is
submitted with F2 (terminals cannot tell ctrl+enter from enter, and ctrl+s saves).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea
from textual.widgets.button import ButtonVariant
from textual.widgets.option_list import Option

from dagtui.graph.model import NODE_CLASSES, NODE_TYPES
from dagtui.judges.base import Ask, HumanAnswer
from dagtui.run.cases import MULTI_TURN_FIELDS, SINGLE_TURN_FIELDS, Case, CaseError, case_from_dict
from dagtui.text import shorten
from dagtui.tui.blink import settle_blink
from dagtui.tui.keys import (
    ADD_NODE_KEYS,
    CASE_KEYS,
    DIALOG_KEYS,
    HUMAN_KEYS,
    TEXT_KEYS,
    bindings,
    key_of,
)

#: the dialogs' stylesheet (F1's list uses it too)
DIALOGS_CSS_PATH = Path(__file__).with_name("dialogs.tcss")


def _problem(message: str | None) -> Text | str:
    return Text(f"✖ {message}", style="bold red") if message else ""


class Dialog(ModalScreen[Any]):
    """Base of every dialog: esc backs out with None; one look."""

    CSS_PATH = DIALOGS_CSS_PATH
    BINDINGS = bindings(DIALOG_KEYS)

    def on_mount(self) -> None:
        settle_blink(self)

    def action_cancel(self) -> None:
        self.dismiss(None)


#: the columns inside a `.dialog` (dialogs.tcss: width 64, a thick border, padding 2)
DIALOG_ROOM = 64 - 2 - 4


def buttons_fit(texts: Sequence[str], room: int = DIALOG_ROOM) -> bool:
    """True when buttons with these texts fit side by side in a dialog: Textual's button is
    its text plus 2 columns of padding and 2 of border, at least 16 wide, 1 apart."""
    return sum(max(len(t) + 4, 16) + 1 for t in texts) <= room


class ChoiceScreen(Dialog):
    """A question with buttons; dismisses with the chosen button's id ('cancel' on escape)."""

    def __init__(self, title: str, message: str,
                 choices: list[tuple[str, str, ButtonVariant]]) -> None:
        """`choices`: (id, button text, variant) in display order; the first is focused."""
        super().__init__()
        self.title_text = title
        self.message = message
        self.choices = choices

    def compose(self) -> ComposeResult:
        texts = [text for _cid, text, _variant in self.choices]
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Static(self.message, classes="dialog-message")
            # buttons that do not fit side by side are stacked, each whole: a row of them
            # cut "Leave without saving" short and pushed "Stay" out of the dialog
            row = "dialog-buttons" if buttons_fit(texts) else "dialog-buttons stacked"
            with Horizontal(classes=row):
                for cid, text, variant in self.choices:
                    yield Button(text, id=cid, variant=variant)

    def on_mount(self) -> None:
        self.query(Button).first().focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "cancel")

    def action_cancel(self) -> None:
        self.dismiss("cancel")


class PickScreen(Dialog):
    """Pick one of a list; returns its index. `ids` names the options (tests and callers
    that know them by name read `option.id`)."""

    def __init__(self, title: str, hint: str, options: Sequence[str],
                 ids: Sequence[str] | None = None) -> None:
        super().__init__()
        self.title_text, self.hint, self.options = title, hint, list(options)
        self.ids = list(ids) if ids is not None else None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-large"):
            yield Label(self.title_text, classes="dialog-title")
            if self.hint:
                yield Static(self.hint, classes="dialog-hint")
            yield OptionList(*[Option(o, id=self.ids[i] if self.ids else None)
                               for i, o in enumerate(self.options)], id="pick-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected, "#pick-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option_index)


class TextScreen(Dialog):
    """Edit one text: a node's new id, its criteria, a what-if evidence or score, a file name.

    `multiline`: a TextArea submitted with F2; otherwise an Input submitted with enter (or
    F2), its value stripped. `check(value) -> error or None` is shown as the person types
    and keeps the dialog open until the value is usable.
    """

    BINDINGS = bindings(TEXT_KEYS)

    def __init__(self, title: str, hint: str = "", value: str = "", *,
                 multiline: bool = False,
                 check: Callable[[str], str | None] | None = None) -> None:
        super().__init__()
        self.title_text, self.hint, self.value = title, hint, value
        self.multiline, self.check = multiline, check

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-large" if self.multiline else "dialog"):
            yield Label(self.title_text, classes="dialog-title")
            if self.hint:
                yield Static(self.hint, classes="dialog-hint")
            if self.multiline:
                yield TextArea(self.value, soft_wrap=True, classes="dialog-text",
                               id="text-value")
            else:
                yield Input(self.value, id="text-value")
            yield Static("", classes="dialog-error", id="text-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Apply (F2)" if self.multiline else "Apply (enter)",
                             variant="primary", id="text-ok")
                yield Button("Cancel (esc)", id="text-cancel")

    def on_mount(self) -> None:
        self.query_one("#text-value").focus()

    def _current(self) -> str:
        widget = self.query_one("#text-value")
        if isinstance(widget, TextArea):
            return widget.text
        return self.query_one("#text-value", Input).value.strip()

    @on(Input.Changed)
    @on(TextArea.Changed)
    def _changed(self) -> None:
        if self.check is not None:
            self.query_one("#text-error", Static).update(_problem(self.check(self._current())))

    @on(Input.Submitted)
    @on(Button.Pressed, "#text-ok")
    def action_submit(self) -> None:
        value = self._current()
        problem = self.check(value) if self.check else None
        if problem:
            self.query_one("#text-error", Static).update(_problem(problem))
            return
        self.dismiss(value)

    @on(Button.Pressed, "#text-cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


def type_summary(node_type: str) -> str:
    """What a node type is, in one line: the first line of its model class's docstring."""
    cls = NODE_CLASSES.get(node_type)
    line = (cls.__doc__ or "").strip().splitlines()[0] if cls is not None and cls.__doc__ \
        else ""
    return line.replace("`", "")


class AddNodeScreen(Dialog):
    """Choose the new node's type and id; `where` says where it will be attached.

    The types are listed with what each is; `up`/`down` choose one while the id is typed
    (or tab into the list), enter adds."""

    BINDINGS = bindings(ADD_NODE_KEYS)

    def __init__(self, where: str, suggested: str, check: Callable[[str], str | None],
                 default_type: str = "binary") -> None:
        super().__init__()
        self.where = where
        self.suggested = suggested
        self.check = check
        self.types = list(NODE_TYPES)
        self.default_type = default_type if default_type in self.types else self.types[0]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Add a node", classes="dialog-title")
            yield Static(self.where, classes="dialog-message")
            with Horizontal(classes="add-row"):
                yield Label("id", classes="add-name")
                yield Input(self.suggested, id="add-id", placeholder="node id", compact=True)
            yield Static("", id="add-error", classes="dialog-error")
            with Horizontal(classes="add-row"):
                yield Label("type ↑↓", classes="add-name")
                yield OptionList(*[
                    Option(Text.assemble((f"{t:<11}", "bold"),
                                         (shorten(type_summary(t), 36), "dim")), id=t)
                    for t in self.types], id="add-type")
            yield Static(Text("enter adds · ↑ ↓ choose the type · esc cancels", style="dim"))

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#add-type", OptionList).highlighted = \
            self.types.index(self.default_type)
        self.query_one("#add-id", Input).focus()

    @property
    def node_type(self) -> str:
        """The type highlighted in the list."""
        index = self.query_one("#add-type", OptionList).highlighted
        return self.types[index if index is not None else 0]

    def action_type(self, delta: int) -> None:
        """Highlight the type above (-1) or below (+1), the id keeping the focus."""
        types = self.query_one("#add-type", OptionList)
        index = (types.highlighted or 0) + delta
        types.highlighted = max(0, min(len(self.types) - 1, index))

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self.query_one("#add-error", Static).update(_problem(self.check(event.value.strip())))

    @on(Input.Submitted)
    @on(OptionList.OptionSelected, "#add-type")
    def _submitted(self) -> None:
        node_id = self.query_one("#add-id", Input).value.strip()
        error = self.check(node_id)
        if error:
            self.query_one("#add-error", Static).update(_problem(error))
            self.query_one("#add-id", Input).focus()
            return
        self.dismiss((self.node_type, node_id))


class StarterScreen(Dialog):
    """The file does not exist yet: choose the graph to start from."""

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


# --------------------------------------------------------------------------- human judge


class HumanAnswerScreen(Dialog):
    """The human judge's question: the exact prompt, then the allowed answers.

    A closed set of answers (true or false, a non_binary node's labels): pick from the list
    (or press the number shown); evidence (a task): type it; a score (geval): type 0..10.
    The request's answer shape says which. A reason may be added in every case.
    """

    BINDINGS = bindings(HUMAN_KEYS)

    def __init__(self, ask: Ask) -> None:
        super().__init__()
        self.ask = ask
        self.choices: list[Any] = ask.prompt.answer.choices(ask.prompt.labels)

    def compose(self) -> ComposeResult:
        from dagtui.tui.debugger.panes_text import format_messages
        from dagtui.tui.debugger.run_model import show_value

        ask = self.ask
        with Vertical(classes="dialog dialog-large"):
            yield Label(f"Human judge · {ask.node.id} · {ask.kind}", classes="dialog-title")
            yield Static("The exact prompt a model would get:", classes="dialog-hint")
            yield TextArea(format_messages(ask.prompt.messages), read_only=True,
                           soft_wrap=True, classes="dialog-prompt", id="human-prompt")
            if self.choices:
                yield Static("Your verdict (enter, or its number):", classes="dialog-hint")
                yield OptionList(*[Option(f"{i}. {show_value(c)}", id=f"choice-{i - 1}")
                                   for i, c in enumerate(self.choices, start=1)],
                                 id="human-choices")
            elif ask.prompt.answer.evidence:
                yield Static("The evidence this task should output (F2 to submit):",
                             classes="dialog-hint")
                yield TextArea("", classes="dialog-text", id="human-text")
            else:
                yield Static("Score from 0 to 10 (enter or F2):", classes="dialog-hint")
                yield Input(placeholder="7", id="human-score")
            yield Input(placeholder="reason (optional)", id="human-reason")
            yield Static("", classes="dialog-error", id="human-error")
            with Horizontal(classes="dialog-buttons"):
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
        elif self.ask.prompt.answer.evidence:
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


# --------------------------------------------------------------------------- the case


class CasePickerScreen(Dialog):
    """The cases of the cases file by name; the last entry edits the current case inline.

    Returns the index of the chosen case, or -1 for "edit inline".
    """

    def __init__(self, cases: list[Case], current: str | None, source: str | None) -> None:
        super().__init__()
        self.cases, self.current, self.source = cases, current, source

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-large"):
            yield Label("Pick the case to step through", classes="dialog-title")
            yield Static(f"from {self.source}" if self.source else "no cases file loaded",
                         classes="dialog-hint")
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


class CaseEditScreen(Dialog):
    """Every field of the graph's mode (single- or multi-turn), plus name and labels.

    Text fields as typed; lists and objects as JSON. F2 applies; the result is a new Case.
    """

    BINDINGS = bindings(CASE_KEYS)

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
        with Vertical(classes="dialog dialog-large"):
            yield Label("Edit the case (F2 applies, esc cancels)", classes="dialog-title")
            yield Static("Text fields as typed; lists and objects as JSON. Needed by this "
                         f"graph: {', '.join(self.needed) or 'nothing'}", classes="dialog-hint")
            with VerticalScroll(classes="case-fields"):
                for name in self.names:
                    mark = " (needed)" if name in self.needed else ""
                    yield Static(f"{name}{mark}", classes="case-field-name")
                    yield TextArea(field_text(self._value(name), name), soft_wrap=True,
                                   classes="case-field-area", id=f"case-{name}")
            yield Static("", classes="dialog-error", id="case-error")

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


# --------------------------------------------------------------------------- quitting


class QuitScreen(ChoiceScreen):
    """`ask_to_quit`'s question. The quit key pressed again answers it: leave without
    saving (so `q q` quits, as a second ctrl+c does elsewhere)."""

    def __init__(self, title: str, message: str, choices: list[tuple[str, str, ButtonVariant]],
                 again: Sequence[str] = ()) -> None:
        super().__init__(title, message, choices)
        self.again = set(again)

    def on_key(self, event: events.Key) -> None:
        if event.key in self.again:
            event.stop()
            self.dismiss("discard")


def ask_to_quit(app: App[Any], *, unsaved: str | None, leave: Callable[[], None],
                save: Callable[[], Awaitable[bool]] | None = None, errors: int = 0,
                title: str = "Unsaved changes", save_label: str = "Save and quit",
                discard_label: str = "Quit without saving", cancel_label: str = "Cancel",
                quit_key: tuple[str, str] | None = None) -> None:
    """The one quit flow of the editor, the debugger and the suite view.

    `unsaved`: what would be lost (None: nothing, so `leave` at once). Otherwise asks once:
    save and leave (when `save` is given: it returns True once saved), leave without
    saving, or stay. `errors`: problems that make the saved file unusable; the save
    button then says so ("Save with 2 errors and quit") rather than saving silently.
    `quit_key`: (binding id, default key) of the quit key, which answers "leave" when
    pressed again on the question.
    """
    if isinstance(app.screen, QuitScreen):  # asked already: quit pressed again
        app.screen.dismiss("discard")
        return
    if unsaved is None:
        leave()
        return
    message = unsaved
    choices: list[tuple[str, str, ButtonVariant]] = []
    if save is not None:
        if errors:
            plural = "s" if errors != 1 else ""
            message += (f" The file has {errors} error{plural} (see the problems): saved as "
                        "is, it will not load or run until fixed.")
            save_label = f"Save with {errors} error{plural} and quit"
        choices.append(("save", save_label, "warning" if errors else "primary"))
    choices += [("discard", discard_label, "error"), ("cancel", cancel_label, "default")]
    again = key_of(app, *quit_key).split(",") if quit_key else []

    async def done(choice: str | None) -> None:
        if choice == "save" and save is not None:
            if await save():
                leave()
        elif choice == "discard":
            leave()

    app.push_screen(QuitScreen(title, message, choices, [k.strip() for k in again]), done)

"""The labelling screen: one node of one case at a time, labelled with one key.

Left, what the judge would see for the node (its request as `dagtui.judges.prompts` builds
it: the question, the case fields it reads, the upstream evidence), the labels to pick from
and, hidden until `r` (or `--reveal`), the judge's cached answer, so it does not anchor the
person. Right, the case's path so far and, always, the progress per node (labelled /
reached). All state lives in `dagtui.labels.session.LabelSession`; this screen only draws it
and turns keys into its calls. Every label is written to the cases file as it is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.fuzzy import Matcher
from textual.widgets import Footer, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from dagtui.labels.session import LabelSession, show_label, verdict_labels
from dagtui.tui.fit import fit_footer, narrow
from dagtui.tui.keys import LABEL_KEYS, bindings
from dagtui.tui.screens.base import DagtuiScreen
from dagtui.tui.screens.dialogs import Dialog, TextScreen

#: verdict lists longer than this are picked by typing (`/`) rather than by digit
DIGITS = 9


class FuzzyPickScreen(Dialog):
    """Type part of a label, enter picks the best match; returns its index."""

    def __init__(self, title: str, options: list[str]) -> None:
        super().__init__()
        self.title_text, self.options = title, options

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-large"):
            yield Label(self.title_text, classes="dialog-title")
            yield Input(placeholder="type part of a label", id="fuzzy-query")
            yield OptionList(*self._matches(""), id="fuzzy-list")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def _matches(self, query: str) -> list[Option]:
        if not query:
            return [Option(o, id=str(i)) for i, o in enumerate(self.options)]
        matcher = Matcher(query)
        scored = sorted(((matcher.match(o), i) for i, o in enumerate(self.options)),
                        key=lambda si: -si[0])
        return [Option(matcher.highlight(self.options[i]), id=str(i)) for s, i in scored if s > 0]

    @on(Input.Changed, "#fuzzy-query")
    def _typed(self, event: Input.Changed) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._matches(event.value))
        if options.option_count:
            options.highlighted = 0

    @on(Input.Submitted, "#fuzzy-query")
    def _enter(self) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            self.dismiss(int(options.get_option_at_index(options.highlighted or 0).id or 0))

    @on(OptionList.OptionSelected, "#fuzzy-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))


class LabelScreen(DagtuiScreen):
    """`dagtui label` over `session`; `reveal` shows the judge's cached answers from the
    start; `title` names the graph and the cases file in the top line."""

    CSS_PATH = Path(__file__).with_name("label.tcss")
    BINDINGS = bindings(LABEL_KEYS)

    def __init__(self, session: LabelSession, *, reveal: bool = False,
                 title: str = "") -> None:
        super().__init__()
        self.session = session
        self.reveal = reveal
        self.title_text = title

    def compose(self) -> ComposeResult:
        # before anything is styled: set on mount, the class restyled the whole screen
        self.set_class(narrow(self.app.size.width), "narrow", update=False)
        yield Static(id="label-head")
        with Horizontal(id="label-body"):
            with Vertical(id="label-main"):
                yield Static(id="label-node")
                with VerticalScroll(id="label-material"):
                    yield Static(id="label-request")
                yield Static(id="label-choices")
                yield Static(id="label-judge")
            with Vertical(id="label-side"):
                yield Static(id="label-path")
                yield Static(id="label-progress")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#label-material").border_title = "what the judge sees"
        self._fit(self.app.size.width)
        self.refresh_view()

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        self.set_class(narrow(width), "narrow")
        fit_footer(self.query_one(Footer), width)

    # ------------------------------------------------------------------ drawing

    def refresh_view(self) -> None:
        s = self.session
        total = len(s.cases)
        case = s.case
        head = Text.assemble(
            ("dagtui label", "bold"), f"  {self.title_text}  ·  case {s.index + 1}/{total} ",
            (case.name, "bold"), f"  ·  {s.done_cases()}/{total} cases done",
            f"  ·  by {s.annotator}" if s.annotator else "")
        self.query_one("#label-head", Static).update(head)
        view = s.view()
        node_w = self.query_one("#label-node", Static)
        request = self.query_one("#label-request", Static)
        choices = self.query_one("#label-choices", Static)
        judge = self.query_one("#label-judge", Static)
        if view is None:
            node_w.update(f"case {case.name!r}: every node on its path is labelled")
            request.update(Text("n / p move between cases; u takes back the last label; "
                                "esc leaves (every label is already written).",
                                style="italic"))
            choices.update("")
            judge.update("")
        else:
            node = view.node
            title = getattr(node, "label", None) or ""
            node_w.update(Text.assemble((node.id, "bold cyan"), f"  {node.type}",
                                        (f"  {title}" if title and title != node.id else "",
                                         "italic")))
            request.update(Text(view.material))
            choices.update(self._choices(view))
            judge.update(self._judge(view))
        self.refresh_bindings()
        self.query_one("#label-path", Static).update(self._path())
        self.query_one("#label-progress", Static).update(self._progress())

    def _choices(self, view: Any) -> Text:
        current = view.label
        out = Text()
        if view.unsure:
            out.append("marked unsure  ", style="bold yellow")
        if view.kind == "verdict":
            labels = verdict_labels(view.node)
            for n, value in enumerate(labels[:DIGITS], start=1):
                style = "reverse bold" if current is not None and value == current else "bold"
                out.append(f" {n} ", style=style)
                out.append(f" {show_label(value)}   ")
            if len(labels) > DIGITS:
                out.append(f"… {len(labels) - DIGITS} more: / finds them", style="italic")
        elif view.kind == "score":
            _keys(out, [("0-9", "the score"), ("t", "10"), ("e", "type it")])
            if current is not None:
                out.append(f"   (now {show_label(current)})", style="italic")
        else:
            _keys(out, [("a", "accept the judge's extraction"), ("e", "edit it")])
            if current is not None:
                out.append(f"\nlabelled: {show_label(current)}", style="italic")
        out.append("\n")
        _keys(out, [("?", "unsure"), ("s", "skip"), ("u", "undo")])
        return out

    def _judge(self, view: Any) -> Text:
        if view.judge is None:
            return Text("no cached judge answer for this node", style="italic")
        if not self.reveal:
            return Text("the judge's answer is hidden (r shows it)", style="italic")
        value, reason = view.judge
        return Text.assemble(("judge: ", "bold"), show_label(value),
                             (f" — {reason}" if reason else "", "italic"))

    def _path(self) -> Text:
        s = self.session
        out = Text("this case\n", style="bold")
        labels = s.labels[s.index]
        current = s.current()
        for nid in s.walk(s.index).path:
            if nid in (labels.unsure or ()):
                shown, style = "?", "yellow"
            elif nid in labels.expected:
                shown, style = show_label(labels.expected[nid]), ""
            else:
                shown, style = "…", "dim"
            mark = "▸ " if nid == current else "  "
            out.append(f"{mark}{nid} = ", style="bold" if nid == current else "")
            out.append(_short(shown, 24), style=style)
            out.append("\n")
        return out

    def _progress(self) -> Table:
        table = Table(box=None, show_edge=False, pad_edge=False, expand=True, show_header=False,
                      title="labelled / reached", title_justify="left",
                      title_style="bold")
        table.add_column("node", overflow="ellipsis", no_wrap=True, ratio=1)
        table.add_column("", justify="right", no_wrap=True)
        for nid, labelled, reached in self.session.progress():
            style = "green" if reached and labelled == reached else ""
            table.add_row(escape(nid), Text(f"{labelled}/{reached}", style=style))
        return table

    # ------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer offers only the keys that label the node shown: `/` a verdict,
        `a` a task, `e` a task or a score."""
        wanted = {"find": ("verdict",), "accept": ("task",), "edit": ("task", "score")}
        if action not in wanted:
            return True
        view = self.session.view()
        return view is not None and view.kind in wanted[action]

    def _do(self, change: Any, *args: Any) -> None:
        """A session call that may write the cases file: a refused write is shown, and the
        session keeps its labels as they were."""
        try:
            change(*args)
        except (OSError, ValueError) as exc:
            self.notify(str(exc), severity="error", title="not written", timeout=10)
        self.refresh_view()

    def action_pick(self, n: int) -> None:
        view = self.session.view()
        if view is None:
            return
        try:
            picked = self.session.pick(n)
        except (OSError, ValueError) as exc:
            self.notify(str(exc), severity="error", title="not written", timeout=10)
            picked = True
        if not picked:
            self.notify(f"{n} picks nothing here", severity="warning")
        self.refresh_view()

    def action_find(self) -> None:
        view = self.session.view()
        if view is None or view.kind != "verdict":
            return
        labels = verdict_labels(view.node)

        def chosen(index: int | None) -> None:
            if index is not None:
                self._do(self.session.label, labels[index])

        self.app.push_screen(FuzzyPickScreen(f"{view.node.id}: pick its label",
                                             [show_label(v) for v in labels]), chosen)

    def action_accept(self) -> None:
        view = self.session.view()
        if view is None or view.kind != "task":
            return
        if view.judge is None:
            self.notify("no cached extraction to accept: e types the evidence",
                        severity="warning")
            return
        self._do(self.session.accept)

    def action_edit(self) -> None:
        view = self.session.view()
        if view is None or view.kind == "verdict":
            return
        if view.kind == "score":
            def scored(text: str | None) -> None:
                if text is not None:
                    self._do(self.session.label, _number(text))

            self.app.push_screen(TextScreen(f"{view.node.id}: the score (0 to 10)",
                                            check=_score_problem), scored)
            return
        start = view.label if isinstance(view.label, str) else (
            str(view.judge[0]) if view.judge else "")

        def edited(text: str | None) -> None:
            if text is not None:
                self._do(self.session.label, text)

        self.app.push_screen(TextScreen(f"{view.node.id}: the evidence it should extract",
                                        "F2 applies", start, multiline=True), edited)

    def action_unsure(self) -> None:
        self._do(self.session.unsure)

    def action_undo(self) -> None:
        if not self.session.history:
            self.notify("nothing to undo")
            return
        self._do(self.session.undo)

    def action_skip(self) -> None:
        self.session.skip()
        self.refresh_view()

    def action_case(self, step: int) -> None:
        self.session.move(step)
        self.refresh_view()

    def action_reveal(self) -> None:
        self.reveal = not self.reveal
        self.refresh_view()

    def action_keys(self) -> None:
        from dagtui.tui.keys import help_groups
        from dagtui.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self, "label", help_groups("label"),
                                        heading="dagtui label — keys"))

    def action_back(self) -> None:
        self.leave()

    async def quit_requested(self) -> None:
        """ctrl+q: out of the app from `dagtui label`; pushed over the editor (or the
        calibration view over it), back there and the editor's own quit asked (it knows of
        unsaved edits; every label is written already)."""
        if self.is_start:
            self.app.exit()
            return
        # the nearest full screen below (the editor; a calibration view is a dialog of it)
        editor = next((s for s in reversed(self.app.screen_stack[:-1])
                       if isinstance(s, DagtuiScreen)), None)
        self.leave()
        if editor is not None:
            self.app.call_later(editor.quit_requested)


def _keys(out: Text, pairs: list[tuple[str, str]]) -> None:
    """`key  what it does` pairs, keys in bold, three spaces apart."""
    for n, (key, does) in enumerate(pairs):
        out.append(f" {key} ", style="bold")
        out.append(f" {does}" + ("   " if n < len(pairs) - 1 else ""))


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


def _score_problem(text: str) -> str | None:
    try:
        value = float(text)
    except ValueError:
        return "a number from 0 to 10"
    return None if 0 <= value <= 10 else "a number from 0 to 10"

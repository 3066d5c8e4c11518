"""The form for the selected node (or the `[metric]` table).

Every edit is parsed here (`dagtui.tui.fields`) and sent upward as a typed message; the app
applies it to the state and hands the new diagnostics back with `show_problems`, which puts
each message beside its field.

Mounting widgets is the costly part of a Textual screen (tens of milliseconds for a form),
so the form keeps one *page* per shape (node type, check kind, or the metric), built the
first time it is needed and afterwards only refilled: moving the cursor through the tree
swaps pages and sets values, it never rebuilds. Verdict rows are added and removed one by
one as the count changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Static

from dagtui.diagnostics import Diagnostic, Severity
from dagtui.graph.model import (
    CHECK_KINDS,
    MULTI_TURN_PARAMS,
    NODE_TYPES,
    SINGLE_TURN_PARAMS,
    CheckNode,
    Graph,
    Metric,
    NodeBase,
    check_settings,
)
from dagtui.kinds import kind_of
from dagtui.text import verdict_text
from dagtui.tui import fields as F
from dagtui.tui.widgets.field_input import FieldInput
from dagtui.tui.widgets.form_messages import (
    FieldChanged,
    FieldFocused,
    MetricChanged,
    VerdictChanged,
)

if TYPE_CHECKING:
    from textual.widgets import SelectionList, TextArea

# TextArea and SelectionList are imported where a page first needs one: together they take
# ~20 ms to import, and no page is built before the editor's first frame is on screen.

#: the form's stylesheet (`DagtuiScreen.read_css` reads it before the form mounts)
CSS_PATH = Path(__file__).with_name("node_form.tcss")

METRIC_FIELDS = ("name", "threshold", "model", "include_reason", "strict", "multi_turn",
                 "roots", "cases")
TEXT_WIDGETS = "Input, TextArea, Select, SelectionList"


def page_key(graph: Graph, node_id: str | None) -> str:
    """Which page shows `node_id`: `metric`, the node type, or `check-<kind>`."""
    if node_id is None:
        return "metric"
    node = graph.nodes.get(node_id)
    if node is None:
        return "none"
    if isinstance(node, CheckNode):
        extra = [f for f in F.node_fields(node) if f not in check_settings(node.check).fields]
        return "check-" + "-".join([node.check or "none", *extra]).replace("_", "")
    return node.type


class FormPage(Vertical):
    """The rows for one shape of node. `fill` sets every value without announcing it."""

    def __init__(self, key: str, graph: Graph, node_id: str | None) -> None:
        super().__init__(classes="form-page", id=f"page-{key}")
        self.key = key
        #: the record whose fields the page shows (their hints are its model's)
        self.record: type = Metric if node_id is None else type(graph.nodes.get(node_id))
        self.widgets: dict[str, Widget] = {}
        self.messages: dict[str, Static] = {}
        self.verdict_box: Vertical | None = None
        self.verdict_rows: list[Horizontal] = []
        self.verdict_inputs: list[dict[str, Input]] = []
        self.boolean = False
        self._title = Static("", classes="form-title")
        self._title_shown: tuple[object, ...] | None = None
        self._evidence = Static("", classes="form-note")
        self._rows: list[Widget] = [self._title, self._evidence]
        params = MULTI_TURN_PARAMS if graph.metric.multi_turn else SINGLE_TURN_PARAMS
        if node_id is None:
            for name in METRIC_FIELDS:
                self._rows.append(self._row(name, self._metric_widget(name)))
        elif node_id in graph.nodes:
            node = graph.nodes[node_id]
            for name in F.node_fields(node):
                self._rows.append(self._row(name, self._node_widget(node, name, params)))
            if hasattr(node, "verdicts"):
                self.boolean = kind_of(node).boolean_verdicts(node)
                self._rows.append(self._verdict_section())

    def compose(self) -> ComposeResult:
        yield from self._rows

    # -- building -------------------------------------------------------------------------
    def wid(self, name: str) -> str:
        return f"{self.key}-f-{name}"

    def _row(self, name: str, widget: Widget) -> Horizontal:
        msg = Static("", classes="field-msg", id=f"{self.key}-m-{name}")
        self.messages[name] = msg
        self.widgets[name] = widget
        hint = F.hint(self.record, name)
        if hint:
            widget.tooltip = hint
        return Horizontal(Label(name, classes="field-name"),
                          Vertical(widget, msg, classes="field-body"), classes="field-row")

    def _metric_widget(self, name: str) -> Widget:
        if name in F.BOOLS:
            return FieldSelect([("true", True), ("false", False)], allow_blank=False,
                               compact=True, id=self.wid(name), name=f"metric:{name}")
        return FieldInput("", compact=True, id=self.wid(name), name=f"metric:{name}",
                          placeholder=F.hint(self.record, name))

    def _node_widget(self, node: NodeBase, name: str, params: tuple[str, ...]) -> Widget:
        wid, wname = self.wid(name), f"field:{name}"
        if name == "type":
            return FieldSelect([(t, t) for t in NODE_TYPES], allow_blank=False, compact=True,
                               id=wid, name=wname)
        if name == "check":
            return FieldSelect([(k, k) for k in CHECK_KINDS], compact=True, id=wid, name=wname,
                               prompt="choose a kind")
        if name == "param":
            return FieldSelect([(p, p) for p in params], compact=True, id=wid, name=wname,
                               prompt="(none: use evidence)")
        choices = F.choices(node, name)
        if choices is not None:
            return FieldSelect([(c, c) for c in choices], compact=True, id=wid, name=wname,
                               prompt="(default)")
        if name in F.BOOLS:
            return FieldSelect([("true", True), ("false", False)], compact=True, id=wid,
                               name=wname, prompt="(default)")
        if name == "params":
            from textual.widgets import SelectionList

            return SelectionList(*[(p, p) for p in params], compact=True, id=wid, name=wname)
        if name in F.LONG_TEXT:
            from dagtui.tui.widgets.long_text import LongText

            return LongText("", soft_wrap=True, compact=True, id=wid, name=wname,
                            classes="long-text", tab_behavior="focus")
        # tabbing into a one-line field selects its text, so typing replaces the value
        return FieldInput("", compact=True, id=wid, name=wname,
                          placeholder=F.hint(self.record, name), select_on_focus=True)

    def _verdict_section(self) -> Horizontal:
        self.verdict_box = Vertical(classes="verdict-box")
        msg = Static("", classes="field-msg", id=f"{self.key}-m-verdicts")
        self.messages["verdicts"] = msg
        hint = Static(Text("v add verdict · x remove the highlighted one · a score ends the "
                           "path, then continues at a node", style="dim"), classes="form-note")
        return Horizontal(Label("verdicts", classes="field-name"),
                          Vertical(self.verdict_box, msg, hint, classes="field-body"),
                          classes="field-row verdicts-row")

    def _verdict_row(self, i: int) -> Horizontal:
        key = self.key
        inputs: dict[str, Input] = {
            "verdict": FieldInput("", compact=True, id=f"{key}-v-{i}-verdict",
                                  name=f"verdict:{i}:verdict", classes="v-value",
                                  placeholder="true/false" if self.boolean else "label"),
            "score": FieldInput("", compact=True, id=f"{key}-v-{i}-score",
                                name=f"verdict:{i}:score", classes="v-score",
                                placeholder="0-10"),
            "then": FieldInput("", compact=True, id=f"{key}-v-{i}-then",
                               name=f"verdict:{i}:then", classes="v-then",
                               placeholder="node id"),
        }
        self.verdict_inputs.append(inputs)
        return Horizontal(inputs["verdict"], Label("score", classes="v-label"), inputs["score"],
                          Label("then", classes="v-label"), inputs["then"],
                          classes="verdict-row")

    # -- filling --------------------------------------------------------------------------
    async def fill(self, graph: Graph, node_id: str | None) -> None:
        """Show `node_id`'s values (widgets are reused; nothing is announced upward)."""
        self.show_title(graph, node_id)
        if node_id is None:
            self._evidence.display = False
            for name in METRIC_FIELDS:
                set_quietly(self.widgets[name], name, getattr(graph.metric, name), None)
            return
        node = graph.nodes[node_id]
        evidence = graph.task_parents(node_id)
        self._evidence.display = bool(evidence)
        if evidence:
            line = Text("evidence from ", style="dim")
            for i, p in enumerate(evidence):
                if i:
                    line.append(", ", style="dim")
                line.append(p, style="bold cyan")
                label = getattr(graph.nodes[p], "output_label", "")
                if label:
                    line.append(f' "{label}"', style="cyan")
            self._evidence.update(line)
        for name, widget in self.widgets.items():
            set_quietly(widget, name, F.value_of(node, name), node)
        if self.verdict_box is not None:
            await self._fill_verdicts(getattr(node, "verdicts", []) or [])
            from textual.suggester import SuggestFromList

            # `then` completes the graph's node ids (right arrow or end takes the suggestion)
            ids = SuggestFromList([n for n in graph.nodes if n != node_id])
            for row in self.verdict_inputs:
                row["then"].suggester = ids

    def show_title(self, graph: Graph, node_id: str | None) -> None:
        """The line above the fields: id · type · label. Redrawn on every edit so a label
        being typed shows here at once; the line has a fixed height, so repainting it
        never relayouts the form."""
        if node_id is None:
            title = Text.assemble(("metric", "bold"), ("  ·  settings of the whole graph", "dim"))
        else:
            node = graph.nodes.get(node_id)
            if node is None:
                return
            title = Text.assemble((node_id, "bold"), ("  ·  ", "dim"), (node.type, "cyan"))
            if node.label:
                title.append(f"  ·  {node.label}", style="italic")
        shown = (title.plain, tuple(title.spans))
        if shown != self._title_shown:
            self._title_shown = shown
            self._title.update(title, layout=False)

    async def _fill_verdicts(self, verdicts: list[Any]) -> None:
        assert self.verdict_box is not None
        while len(self.verdict_rows) > len(verdicts):
            self.verdict_inputs.pop()
            await self.verdict_rows.pop().remove()
        new = []
        while len(self.verdict_rows) < len(verdicts):
            row = self._verdict_row(len(self.verdict_rows))
            self.verdict_rows.append(row)
            new.append(row)
        if new:
            await self.verdict_box.mount_all(new)
            settle = getattr(self.app, "settle_blink", None)
            if settle is not None:
                settle(self.verdict_box)
        for i, v in enumerate(verdicts):
            set_quietly(self.verdict(i, "verdict"), "verdict", verdict_text(v.verdict), None)
            set_quietly(self.verdict(i, "score"), "score", v.score, None)
            set_quietly(self.verdict(i, "then"), "then", v.then, None)

    def verdict(self, index: int, part: str) -> Input:
        return self.verdict_inputs[index][part]


def set_quietly(widget: Widget, name: str, value: Any, node: Any) -> None:
    """Set a widget's value without it posting a Changed message."""
    if isinstance(widget, Input):
        text = value if isinstance(value, str) and name in ("verdict", "then") else \
            F.to_text(name, value)
        if widget.value != text:
            with widget.prevent(Input.Changed):
                widget.value = text
                widget.cursor_position = len(text)
    elif isinstance(widget, FieldSelect):
        _fill_select(widget, value)
    else:  # only pages that hold these widgets get here, so they are imported already
        from textual.widgets import SelectionList, TextArea

        if isinstance(widget, TextArea):
            text = F.to_text(name, value)
            if widget.text != text:
                with widget.prevent(TextArea.Changed):
                    widget.load_text(text)
        elif isinstance(widget, SelectionList):
            _fill_selection(widget, list(value or []))


class FieldSelect(Select[Any]):
    """A form's Select that remembers its options and whether it may be blank: refilling it
    for another node needs both, and Textual keeps its own copies private."""

    def __init__(self, options: Iterable[tuple[str, Any]], *, allow_blank: bool = True,
                 **kwargs: Any) -> None:
        self.choices = list(options)
        self.blank_allowed = allow_blank
        super().__init__(self.choices, allow_blank=allow_blank, **kwargs)

    def set_options(self, options: Iterable[tuple[Any, Any]]) -> None:
        self.choices = list(options)
        super().set_options(self.choices)


def _fill_select(widget: FieldSelect, value: Any) -> None:
    known = [v for _, v in widget.choices if v is not Select.NULL]
    with widget.prevent(Select.Changed):
        if value is not None and value not in known:
            options = [(str(v), v) for v in known] + [(f"{value} (unknown)", value)]
            widget.set_options(options)
        if value is None:
            if widget.blank_allowed:
                widget.clear()
        elif widget.value != value:
            widget.value = value


def _fill_selection(widget: SelectionList, chosen: list[str]) -> None:
    options = [widget.get_option_at_index(i).value for i in range(widget.option_count)]
    with widget.prevent(widget.SelectedChanged):
        missing = [p for p in chosen if p not in options]
        if missing:
            widget.add_options([(f"{p} (unknown)", p) for p in missing])
        if set(widget.selected) != set(chosen):
            widget.deselect_all()
            for p in chosen:
                widget.select(p)


class NodeForm(VerticalScroll):
    """Fields of one node; messages beside fields; verdict rows with score-or-then."""

    can_focus = False

    # -- what the form tells the app (`form_messages`: the screen imports them without
    # the form) ---------------------------------------------------------------------------
    FieldChanged = FieldChanged
    VerdictChanged = VerdictChanged
    MetricChanged = MetricChanged
    FieldFocused = FieldFocused

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.node_id: str | None = None
        self.showing_metric = False
        self.read_only = False
        self.page: FormPage | None = None
        self._pages: dict[str, FormPage] = {}
        self._local_errors: dict[str, str] = {}
        self._shown: tuple[object, ...] | None = None
        self._empty = Static("no node selected", classes="form-empty")

    def compose(self) -> ComposeResult:
        yield self._empty

    # -- pages ----------------------------------------------------------------------------
    def needs_rebuild(self, graph: Graph, node_id: str | None) -> bool:
        """True when another node (or another page) must be shown. Edits to the shown node
        do not count: its widgets already hold what the user typed."""
        return self._shown != self._shown_key(graph, node_id)

    def _shown_key(self, graph: Graph, node_id: str | None) -> tuple[object, ...]:
        return (node_id, page_key(graph, node_id), graph.metric.multi_turn)

    async def show_node(self, graph: Graph, node_id: str | None, read_only: bool = False) -> None:
        """Show `node_id`'s fields (None: the metric settings)."""
        if node_id is not None and node_id not in graph.nodes:
            node_id = None if not graph.nodes else node_id
        self.node_id = node_id
        self.showing_metric = node_id is None
        self.read_only = read_only
        self._local_errors = {}
        key = page_key(graph, node_id)
        if key == "none":
            for hidden in self._pages.values():
                hidden.display = False
            self._empty.display = True
            self.page = None
            self._shown = self._shown_key(graph, node_id)
            return
        self._empty.display = False
        cache_key = f"{key}-mt" if graph.metric.multi_turn and key != "metric" else key
        page = self._pages.get(cache_key)
        if page is None:
            page = FormPage(cache_key, graph, node_id)
            self._pages[cache_key] = page
            await self.mount(page)
            settle = getattr(self.app, "settle_blink", None)
            if settle is not None:
                settle(page)
        if self.page is not page:
            if self.page is not None:
                self.page.display = False
            page.display = True
            self.page = page
        await page.fill(graph, node_id)
        for widget in page.query(TEXT_WIDGETS):
            widget.disabled = read_only
        for msg in page.messages.values():
            self._say(msg, Text(""))
        key_now = self._shown_key(graph, node_id)
        if key_now != self._shown:
            self.scroll_home(animate=False)
        self._shown = key_now

    def field(self, name: str) -> Widget:
        """The widget of field `name` on the current page (tests and jumps use this)."""
        assert self.page is not None, "no page shown"
        return self.page.widgets[name]

    def message(self, name: str) -> Static:
        assert self.page is not None, "no page shown"
        return self.page.messages[name]

    def verdict_widget(self, index: int, part: str) -> Input:
        assert self.page is not None, "no page shown"
        return self.page.verdict(index, part)

    def show_title(self, graph: Graph) -> None:
        """Bring the title line of the shown node up to date (its label may have changed)."""
        if self.page is not None:
            self.page.show_title(graph, self.node_id)

    # -- problems beside fields -----------------------------------------------------------
    def show_problems(self, diagnostics: list[Diagnostic]) -> None:
        """Put the first problem of each field beside it (local parse errors first)."""
        if self.page is None:
            return
        per_field: dict[str, Diagnostic] = {}
        for d in diagnostics:
            if self.showing_metric:
                if d.node is None and d.field:
                    per_field.setdefault(d.field, d)
                continue
            if d.node != self.node_id:
                continue
            per_field.setdefault(d.field or "type", d)
        for name, widget in self.page.messages.items():
            if name in self._local_errors:
                self._say(widget, Text(f"✖ {self._local_errors[name]}", style="bold red"))
                continue
            problem = per_field.get(name)
            if problem is None:
                self._say(widget, Text(""))
                continue
            style = "bold red" if problem.severity is Severity.ERROR else "yellow"
            mark = "✖" if problem.severity is Severity.ERROR else "⚠"
            self._say(widget, Text(f"{mark} {problem.code} {problem.message}", style=style))

    @staticmethod
    def _say(widget: Static, text: Text) -> None:
        """Update a message only when it changes: each update costs a relayout."""
        if getattr(widget.content, "plain", None) != text.plain:
            widget.update(text)

    def focus_field(self, name: str | None) -> bool:
        """Focus the widget of `name` (for 'enter on a problem')."""
        page = self.page
        if page is None:
            return False
        target: Widget | None = None
        if name == "verdicts" and page.verdict_rows:
            target = page.verdict(0, "verdict")
        elif name and name in page.widgets:
            target = page.widgets[name]
        if target is None:
            found = page.query(TEXT_WIDGETS)
            target = found.first() if found else None
        if target is None:
            return False
        target.focus()
        self.scroll_to_widget(target, animate=False)
        return True

    # -- events up ------------------------------------------------------------------------
    def _post_value(self, widget_name: str, raw: Any, *, parsed: bool = False) -> None:
        kind, _, rest = widget_name.partition(":")
        try:
            if kind == "verdict":
                index_s, _, part = rest.partition(":")
                value: Any  # the verdict (true/false or a label), its score, or its `then`
                if part == "verdict":
                    boolean = self.page.boolean if self.page is not None else False
                    value = F.verdict_from_text(raw, boolean=boolean)
                elif part == "score":
                    value = F.score_from_text(raw)
                else:
                    value = raw.strip() or None
                self._clear_local("verdicts")
                self.post_message(self.VerdictChanged(self.node_id or "", int(index_s), part, value))
                return
            value = raw if parsed else F.from_text(rest, raw)
        except F.FieldError as exc:
            field_name = "verdicts" if kind == "verdict" else rest
            self._local_errors[field_name] = str(exc)
            if self.page is not None and field_name in self.page.messages:
                self._say(self.page.messages[field_name],
                          Text(f"✖ {exc}", style="bold red"))
            return
        self._clear_local(rest)
        if kind == "metric":
            self.post_message(self.MetricChanged(rest, value))
        elif kind == "field" and self.node_id is not None:
            self.post_message(self.FieldChanged(self.node_id, rest, value))

    def _clear_local(self, name: str) -> None:
        if self._local_errors.pop(name, None) is not None and self.page is not None:
            msg = self.page.messages.get(name)
            if msg is not None:
                self._say(msg, Text(""))

    # A Changed message is handled after the fact; by then the widget may have been refilled
    # for another node (Select announces its value when it mounts). A message whose value is
    # no longer the widget's value is stale and ignored, so it can never edit the wrong node.

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if event.value != event.input.value or self._not_shown(event.input):
            return
        if event.input.name and not self.read_only:
            self._post_value(event.input.name, event.value)

    def _not_shown(self, widget: Widget) -> bool:
        """True for widgets of a page that is not the one on screen."""
        return self.page is None or widget not in self.page.widgets.values() and \
            not any(widget in row.values() for row in self.page.verdict_inputs)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        if self._not_shown(event.text_area):
            return
        if event.text_area.name and not self.read_only:
            self._post_value(event.text_area.name, event.text_area.text)

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        name = event.select.name
        if not name or self.read_only or event.value != event.select.value \
                or self._not_shown(event.select):
            return
        value = None if event.value is Select.NULL else event.value
        self._post_value(name, value, parsed=True)

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged,
                                           ) -> None:
        event.stop()
        name = event.selection_list.name
        if self._not_shown(event.selection_list):
            return
        if name and not self.read_only:
            chosen = set(event.selection_list.selected)
            ordered = [event.selection_list.get_option_at_index(i).value
                       for i in range(event.selection_list.option_count)]
            self._post_value(name, [p for p in ordered if p in chosen], parsed=True)

    def on_descendant_focus(self, event: Any) -> None:
        self.post_message(self.FieldFocused())

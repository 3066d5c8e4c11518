"""The form for the selected node (or the `[metric]` table).

Every edit is parsed here (`dagtui.tui.fields`) and sent upward as a typed message; the app
applies it to the state and hands the new diagnostics back with `show_problems`, which puts
each message beside its field. The form is rebuilt only when a different node is shown or
its shape changed (type, verdict count, undo), never while the user types.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Label, Select, SelectionList, Static, TextArea

from ...diagnostics import Diagnostic, Severity
from ...model import (
    CHECK_KINDS,
    MULTI_TURN_PARAMS,
    NODE_TYPES,
    SINGLE_TURN_PARAMS,
    CheckNode,
    Graph,
    Metric,
    NodeBase,
    TaskNode,
)
from .. import fields as F
from ..outline import verdict_text


class FieldChanged(Message):
    """A node field was edited (value already parsed)."""

    def __init__(self, node_id: str, field: str, value: Any) -> None:
        super().__init__()
        self.node_id, self.field, self.value = node_id, field, value


class VerdictChanged(Message):
    """One part (`verdict`, `score` or `then`) of one verdict was edited."""

    def __init__(self, node_id: str, index: int, part: str, value: Any) -> None:
        super().__init__()
        self.node_id, self.index, self.part, self.value = node_id, index, part, value


class MetricChanged(Message):
    def __init__(self, field: str, value: Any) -> None:
        super().__init__()
        self.field, self.value = field, value


class FieldFocused(Message):
    """Focus moved to another field: typing there starts a new undo step."""


class NodeForm(VerticalScroll):
    """Fields of one node; messages beside fields; verdict rows with score-or-then."""

    can_focus = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.node_id: str | None = None
        self.showing_metric = False
        self.read_only = False
        self._messages: dict[str, Static] = {}
        self._local_errors: dict[str, str] = {}
        self._shape: tuple[object, ...] | None = None
        self._boolean = False

    # -- building -------------------------------------------------------------------------
    def shape_of(self, graph: Graph, node_id: str | None) -> tuple[object, ...]:
        if node_id is None:
            return ("metric",)
        node = graph.nodes.get(node_id)
        if node is None:
            return ("none", node_id)
        return (node_id, node.type, len(getattr(node, "verdicts", []) or []),
                getattr(node, "check", None), tuple(F.node_fields(node)))

    def needs_rebuild(self, graph: Graph, node_id: str | None) -> bool:
        return self.shape_of(graph, node_id) != self._shape

    async def show_node(self, graph: Graph, node_id: str | None, read_only: bool = False) -> None:
        """Show `node_id`'s fields (None: the metric settings)."""
        self.node_id = node_id
        self.showing_metric = node_id is None
        self.read_only = read_only
        self._shape = self.shape_of(graph, node_id)
        self._messages = {}
        self._local_errors = {}
        await self.remove_children()
        if node_id is None:
            rows = self._metric_rows(graph.metric)
        elif node_id not in graph.nodes:
            rows = [Static("no node selected", classes="form-empty")]
        else:
            rows = self._node_rows(graph, graph.nodes[node_id])
        await self.mount_all(rows)
        settle = getattr(self.app, "settle_blink", None)
        if settle is not None:
            settle(self)
        if read_only:
            for w in self.query("Input, TextArea, Select, SelectionList"):
                w.disabled = True
        self.scroll_home(animate=False)

    def _row(self, name: str, widget: Widget, title: str | None = None) -> Horizontal:
        msg = Static("", classes="field-msg", id=f"m-{name}")
        self._messages[name] = msg
        hint = F.HELP.get(name, "")
        if hint:
            widget.tooltip = hint
        return Horizontal(
            Label(title or name, classes="field-name"),
            Vertical(widget, msg, classes="field-body"),
            classes="field-row",
        )

    def _title(self, text: Text) -> Static:
        return Static(text, classes="form-title")

    def _metric_rows(self, metric: Metric) -> list[Widget]:
        rows: list[Widget] = [self._title(Text.assemble(("metric", "bold"),
                                                        ("  settings of the whole graph", "dim")))]
        for name in ("name", "threshold", "model", "include_reason", "strict", "multi_turn",
                     "roots", "cases"):
            value = getattr(metric, name)
            if name in F.BOOLS:
                widget: Widget = Select([("true", True), ("false", False)], value=bool(value),
                                        allow_blank=False, compact=True, id=f"f-{name}",
                                        name=f"metric:{name}")
            else:
                widget = Input(F.to_text(name, value), compact=True, id=f"f-{name}",
                               name=f"metric:{name}", placeholder=F.HELP.get(name, ""))
            rows.append(self._row(name, widget))
        return rows

    def _node_rows(self, graph: Graph, node: NodeBase) -> list[Widget]:
        nid = node.id
        title = Text.assemble((nid, "bold"), ("  ·  ", "dim"), (node.type, "cyan"))
        if node.label:
            title.append(f"  ·  {node.label}", style="italic")
        rows: list[Widget] = [self._title(title)]
        evidence = graph.task_parents(nid)
        if evidence:
            line = Text("evidence from ", style="dim")
            for i, p in enumerate(evidence):
                if i:
                    line.append(", ", style="dim")
                parent = graph.nodes[p]
                line.append(p, style="bold cyan")
                label = getattr(parent, "output_label", "")
                if label:
                    line.append(f' "{label}"', style="cyan")
            rows.append(Static(line, classes="form-note"))
        params = MULTI_TURN_PARAMS if graph.metric.multi_turn else SINGLE_TURN_PARAMS
        for name in F.node_fields(node):
            rows.append(self._row(name, self._widget_for(node, name, params)))
        if hasattr(node, "verdicts"):
            rows.append(self._verdict_rows(node))
        return rows

    def _widget_for(self, node: NodeBase, name: str, params: tuple[str, ...]) -> Widget:
        wid = f"f-{name}"
        wname = f"field:{name}"
        value = F.value_of(node, name)
        if name == "type":
            return Select([(t, t) for t in NODE_TYPES], value=node.type, allow_blank=False,
                          compact=True, id=wid, name=wname)
        if name == "check":
            options = [(k, k) for k in CHECK_KINDS]
            if value and value not in CHECK_KINDS:
                options.append((f"{value} (unknown)", value))
            return Select(options, value=value or Select.NULL, compact=True, id=wid,
                          name=wname, prompt="choose a kind")
        if name == "param":
            options = [(p, p) for p in params]
            if value and value not in params:
                options.append((f"{value} (unknown)", value))
            return Select(options, value=value or Select.NULL, compact=True, id=wid,
                          name=wname, prompt="(none: use evidence)")
        if name in F.CHOICES or name == "mode":
            choices = F.CHOICES.get(name) or F.MODES.get(getattr(node, "check", ""), ())
            options = [(c, c) for c in choices]
            if value and value not in choices:
                options.append((f"{value} (unknown)", value))
            return Select(options, value=value or Select.NULL, compact=True, id=wid,
                          name=wname, prompt="(default)")
        if name in F.BOOLS:
            return Select([("true", True), ("false", False)],
                          value=value if value is not None else Select.NULL, compact=True,
                          id=wid, name=wname, prompt="(default)")
        if name == "params":
            chosen = set(value or [])
            options = [(p, p, p in chosen) for p in params]
            options += [(f"{p} (unknown)", p, True) for p in (value or []) if p not in params]
            return SelectionList(*options, compact=True, id=wid, name=wname)
        if name in F.LONG_TEXT:
            area = TextArea(F.to_text(name, value), soft_wrap=True, compact=True, id=wid,
                            name=wname, classes="long-text", tab_behavior="focus")
            return area
        return Input(F.to_text(name, value), compact=True, id=wid, name=wname,
                     placeholder=F.HELP.get(name, ""))

    def _verdict_rows(self, node: NodeBase) -> Widget:
        boolean = node.type == "binary" or (isinstance(node, CheckNode) and node.check != "python")
        self._boolean = boolean
        rows: list[Widget] = []
        for i, v in enumerate(getattr(node, "verdicts", []) or []):
            rows.append(Horizontal(
                Input(verdict_text(v.verdict), compact=True, id=f"v-{i}-verdict",
                      name=f"verdict:{i}:verdict", classes="v-value",
                      placeholder="true/false" if boolean else "label"),
                Label("score", classes="v-label"),
                Input(F.to_text("score", v.score), compact=True, id=f"v-{i}-score",
                      name=f"verdict:{i}:score", classes="v-score", placeholder="0-10"),
                Label("or then", classes="v-label"),
                Input(v.then or "", compact=True, id=f"v-{i}-then", name=f"verdict:{i}:then",
                      classes="v-then", placeholder="node id"),
                classes="verdict-row",
            ))
        if not rows:
            rows.append(Static("no verdicts yet: press v to add one", classes="form-note"))
        hint = Static(Text("v add verdict · x remove the highlighted one · score ends the path,"
                           " then continues at a node", style="dim"), classes="form-note")
        msg = Static("", classes="field-msg", id="m-verdicts")
        self._messages["verdicts"] = msg
        return Horizontal(
            Label("verdicts", classes="field-name"),
            Vertical(*rows, msg, hint, classes="field-body"),
            classes="field-row",
        )

    # -- problems beside fields -----------------------------------------------------------
    def show_problems(self, diagnostics: list[Diagnostic]) -> None:
        """Put the first problem of each field beside it (local parse errors first)."""
        per_field: dict[str, Diagnostic] = {}
        for d in diagnostics:
            if self.showing_metric:
                if d.node is None and d.field:
                    per_field.setdefault(d.field, d)
                continue
            if d.node != self.node_id:
                continue
            per_field.setdefault(d.field or "type", d)
        for name, widget in self._messages.items():
            if name in self._local_errors:
                widget.update(Text(f"✖ {self._local_errors[name]}", style="bold red"))
                continue
            d = per_field.get(name)
            if d is None and name == "type":
                # node-level problems without a field are shown at the top row
                d = next((x for x in diagnostics if x.node == self.node_id and not x.field),
                         None) if not self.showing_metric else None
            if d is None:
                widget.update("")
                continue
            style = "bold red" if d.severity is Severity.ERROR else "yellow"
            mark = "✖" if d.severity is Severity.ERROR else "⚠"
            widget.update(Text(f"{mark} {d.code} {d.message}", style=style))

    def focus_field(self, name: str | None) -> bool:
        """Focus the widget of `name` (for 'enter on a problem')."""
        target = None
        if name == "verdicts":
            found = self.query("#v-0-verdict")
            target = found.first() if found else None
        elif name:
            found = self.query(f"#f-{name}")
            target = found.first() if found else None
        if target is None:
            found = self.query("Input, TextArea, Select, SelectionList")
            target = found.first() if found else None
        if target is None:
            return False
        target.focus()
        self.scroll_to_widget(target, animate=False)
        return True

    def refresh_values(self, graph: Graph) -> None:
        """Update widget values in place (after undo/redo of a field on the same node)."""
        node = graph.nodes.get(self.node_id or "") if not self.showing_metric else None
        for widget in self.query("Input, TextArea, Select, SelectionList"):
            kind, _, rest = (widget.name or "").partition(":")
            if kind == "verdict" and node is not None:
                index_s, _, part = rest.partition(":")
                vs = getattr(node, "verdicts", [])
                if int(index_s) >= len(vs):
                    continue
                v = vs[int(index_s)]
                text = (verdict_text(v.verdict) if part == "verdict" else
                        F.to_text("score", v.score) if part == "score" else v.then or "")
            elif kind == "field" and node is not None:
                text = F.to_text(rest, F.value_of(node, rest))
            elif kind == "metric":
                text = F.to_text(rest, getattr(graph.metric, rest))
            else:
                continue
            self._set_quietly(widget, rest, text, node, graph)

    def _set_quietly(self, widget: Widget, name: str, text: str, node: Any, graph: Graph) -> None:
        if isinstance(widget, Input):
            if widget.value != text:
                with widget.prevent(Input.Changed):
                    widget.value = text
        elif isinstance(widget, TextArea) and widget.text != text:
            with widget.prevent(TextArea.Changed):
                widget.load_text(text)

    # -- events up ------------------------------------------------------------------------
    def _post_value(self, widget_name: str, raw: Any, *, parsed: bool = False) -> None:
        kind, _, rest = widget_name.partition(":")
        try:
            if kind == "verdict":
                index_s, _, part = rest.partition(":")
                index = int(index_s)
                key = f"verdicts.{index}.{part}"
                node = self.node_id or ""
                if part == "verdict":
                    boolean = self._boolean_verdicts()
                    value = F.verdict_from_text(raw, boolean=boolean)
                elif part == "score":
                    value = F.score_from_text(raw)
                else:
                    value = raw.strip() or None
                self._local_errors.pop(key, None)
                self._clear_local("verdicts")
                self.post_message(VerdictChanged(node, index, part, value))
                return
            value = raw if parsed else F.from_text(rest, raw)
        except F.FieldError as exc:
            field_name = "verdicts" if kind == "verdict" else rest
            self._local_errors[field_name] = str(exc)
            msg = self._messages.get(field_name)
            if msg is not None:
                msg.update(Text(f"✖ {exc}", style="bold red"))
            return
        self._clear_local(rest)
        if kind == "metric":
            self.post_message(MetricChanged(rest, value))
        elif kind == "field" and self.node_id is not None:
            self.post_message(FieldChanged(self.node_id, rest, value))

    def _clear_local(self, name: str) -> None:
        if self._local_errors.pop(name, None) is not None:
            msg = self._messages.get(name)
            if msg is not None:
                msg.update("")

    def _boolean_verdicts(self) -> bool:
        return self._boolean

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if event.input.name and not self.read_only:
            self._post_value(event.input.name, event.value)

    @on(TextArea.Changed)
    def _text_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        if event.text_area.name and not self.read_only:
            self._post_value(event.text_area.name, event.text_area.text)

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        name = event.select.name
        if not name or self.read_only:
            return
        value = None if event.value is Select.NULL else event.value
        self._post_value(name, value, parsed=True)

    @on(SelectionList.SelectedChanged)
    def _params_changed(self, event: SelectionList.SelectedChanged) -> None:
        event.stop()
        name = event.selection_list.name
        if name and not self.read_only:
            chosen = set(event.selection_list.selected)
            ordered = [event.selection_list.get_option_at_index(i).value
                       for i in range(event.selection_list.option_count)]
            self._post_value(name, [p for p in ordered if p in chosen], parsed=True)

    def on_descendant_focus(self, event: Any) -> None:
        self.post_message(FieldFocused())


def task_children_text(node: TaskNode) -> str:
    return ", ".join(node.children)

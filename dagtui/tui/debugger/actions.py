"""What the debugger does besides stepping: what-ifs, edit & re-run, the case, the judge and
traces. A mixin of `DebuggerScreen`, kept apart so each file reads in one sitting; every
action ends by redrawing through the screen's `refresh_view` and, when it re-runs, by
starting the screen's judge worker (`_start`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagtui.graph.checks import PythonConsent
from dagtui.graph.loader import GraphError
from dagtui.graph.model import Graph
from dagtui.graph.unsure import CANNOT_TELL
from dagtui.judges.base import Judge
from dagtui.kinds import kind_of
from dagtui.report.trace import Trace
from dagtui.run.cases import Case
from dagtui.text import shorten
from dagtui.tui.debugger.run_model import (
    DebugRun,
    allowed_answers,
    editable_field,
    field_as_text,
    field_from_text,
    show_value,
    with_field,
)
from dagtui.tui.debugger.widgets import PathTree
from dagtui.workdir import prepare_output, shown_path, workdir_for

if TYPE_CHECKING:
    from textual.app import App


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "case"


def _score_problem(text: str) -> str | None:
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        return f"not a number: {text!r}"
    return None if 0 <= value <= 10 else "the score must be from 0 to 10"


class RunActions:
    """Actions that change what is run: what-if, edit & re-run, case, judge, traces."""

    # provided by DebuggerScreen
    app: App[Any]
    graph: Graph
    graph_path: str
    cases: list[Case]
    cases_source: str | None
    judge_factory: Callable[[str], Judge] | None
    on_edit: Callable[[str, str, Any], None] | None
    unsaved_cases: list[Case]
    unsaved_edits: list[str]
    edit_values: dict[tuple[str, str], Any]
    live: DebugRun | None
    viewing: DebugRun | None
    python: PythonConsent

    if TYPE_CHECKING:  # what the screen (and Textual) provide; declared for readers/checkers
        @property
        def run(self) -> DebugRun | None: ...
        def query_one(self, *args: Any) -> Any: ...
        def notify(self, *args: Any, **kwargs: Any) -> None: ...
        def refresh_view(self) -> None: ...
        def _start(self, mode: str) -> None: ...
        def _attach_judge(self) -> None: ...

    # ------------------------------------------------------------------ what-if

    def action_override(self) -> None:
        from dagtui.tui.screens.dialogs import PickScreen, TextScreen

        run = self.live
        nid = self.query_one(PathTree).selected_node
        if run is None or nid is None:
            return
        node = run.graph.nodes[nid]
        record = run.record(nid)
        if kind_of(node).per_item and record is not None and record.items:
            self._override_item(nid, [str(e["item"]) for e in record.items
                                      if e.get("judged") is not False])
            return
        allowed = allowed_answers(node)
        has = nid in run.overrides
        if allowed:
            options = [show_value(v) for v in allowed]
            if has:
                options.append("(clear the what-if: ask the judge again)")

            def picked(index: int | None) -> None:
                if index is None:
                    return
                if index >= len(allowed):
                    self._apply_override(nid, None, clear=True)
                else:
                    self._apply_override(nid, allowed[index])

            self.app.push_screen(PickScreen(f"What if {nid} answered…",
                                            "The run follows the branch you pick; the result "
                                            "is marked as overridden.", options), picked)
            return
        if node.is_scored_leaf:
            def scored(text: str | None) -> None:
                if text is None:
                    return
                if not text.strip():
                    self._apply_override(nid, None, clear=True)
                else:
                    value = float(text)
                    self._apply_override(nid, int(value) if value.is_integer() else value)

            self.app.push_screen(TextScreen(f"What if {nid} scored…", "A score from 0 to 10 "
                                            "(empty clears the what-if).",
                                            show_value(run.overrides.get(nid, "")),
                                            check=_score_problem), scored)
            return

        def evidence(text: str | None) -> None:
            if text is None:
                return
            if not text.strip():
                self._apply_override(nid, None, clear=True)
            else:
                self._apply_override(nid, text)

        self.app.push_screen(TextScreen(f"What if {nid} extracted…", "Evidence handed to the "
                                        "children (F2 applies; empty clears the what-if).",
                                        str(run.overrides.get(nid, "")), multiline=True),
                             evidence)

    def _override_item(self, nid: str, items: list[str]) -> None:
        """A map node's what-if: the whole node (its verdict or score), or one item's
        answer; the run asks the other items again (unchanged ones are reused)."""
        from dagtui.tui.screens.dialogs import PickScreen

        run = self.live
        assert run is not None
        node = run.graph.nodes[nid]
        earlier = run.overrides.get(nid)
        per_item = dict(earlier) if isinstance(earlier, dict) else {}
        options = [f"item {i + 1}: {shorten(text, 60)}" for i, text in enumerate(items)]
        if earlier is not None:
            options.append("(clear the what-if: ask the judge again)")
        answers: list[Any] = [True, False]
        if getattr(node, "unsure_rule", None) is not None:
            answers.append(CANNOT_TELL)

        def item_picked(index: int | None) -> None:
            if index is None:
                return
            if index >= len(items):
                self._apply_override(nid, None, clear=True)
                return

            def answered(choice: int | None) -> None:
                if choice is not None:
                    self._apply_override(nid, {**per_item, index: answers[choice]})

            self.app.push_screen(PickScreen(f"What if item {index + 1} of {nid} was…",
                                            items[index], [show_value(a) for a in answers]),
                                 answered)

        self.app.push_screen(PickScreen(f"What if one item of {nid} was answered…",
                                        "Pick the item; the node aggregates again.", options),
                             item_picked)

    def _apply_override(self, nid: str, value: Any, *, clear: bool = False) -> None:
        run = self.live
        if run is None:
            return
        if clear:
            run.clear_override(nid)
            self.notify(f"what-if cleared on {nid}")
        else:
            run.set_override(nid, value)
            self.notify(f"what-if: {nid} = {shorten(show_value(value), 40, flat='mark')}")
        session = run.session
        if session is not None and run.record(nid) is None:
            if not session.done:
                if clear:
                    session.overrides.pop(nid, None)
                else:
                    session.override(nid, value)  # not reached yet: it will answer this way
            else:
                self.notify(f"{nid} is not on this run's path: the what-if applies when a "
                            "run reaches it", severity="warning")
            self.refresh_view()
            return
        # already decided: re-run, reusing every unchanged step, and follow the new branch
        run.keep_records()
        run.restart(reuse=run.previous, fresh=[nid] if clear else [])
        self.refresh_view()
        self._start("continue")

    # ------------------------------------------------------------------ edit & re-run

    def action_edit_node(self) -> None:
        from dagtui.tui.screens.dialogs import TextScreen

        run = self.live
        nid = self.query_one(PathTree).selected_node
        if run is None or nid is None:
            return
        node = run.graph.nodes[nid]
        name = editable_field(node)
        if name is None:
            self.notify(f"{nid} is a {node.type} node: it has no prompt text to edit here",
                        severity="warning")
            return
        current = field_as_text(node, name)
        hint = "one step per line. " if name == "evaluation_steps" else ""

        def edited(text: str | None) -> None:
            if text is None or text == current:
                return
            self._apply_edit(nid, name, field_from_text(name, text))

        self.app.push_screen(TextScreen(f"Edit {nid}.{name}", f"{hint.capitalize()}F2 applies "
                                        f"and re-runs from {nid}; steps above it are reused "
                                        "(no new calls).", current, multiline=True), edited)

    def _apply_edit(self, nid: str, name: str, text: Any) -> None:
        run = self.live
        if run is None:
            return
        try:
            run.set_graph(with_field(run.graph, nid, name, text))
        except GraphError as exc:
            first = next((d.format() for d in exc.diagnostics if d.is_error), str(exc))
            self.notify(first, severity="error", title="edit refused")
            return
        self.graph = run.graph
        if f"{nid}.{name}" not in self.unsaved_edits:
            self.unsaved_edits.append(f"{nid}.{name}")
        self.edit_values[(nid, name)] = text
        if self.on_edit is not None:
            try:
                self.on_edit(nid, name, text)
                self.notify(f"{nid}.{name} changed in the editor too: save it there "
                            "(ctrl+s) to keep it", timeout=4)
            except Exception as exc:  # noqa: BLE001 - the editor refusing must not stop us
                self.notify(f"the editor did not take the edit: {exc}", severity="warning")
        else:
            self.notify(f"{nid}.{name} changed for this run: esc offers to write it to "
                        f"{Path(self.graph_path).name}", timeout=4)
        run.keep_records()
        run.restart(reuse=run.previous, fresh=[nid])
        self.refresh_view()
        self._start("continue")

    # ------------------------------------------------------------------ the case & judge

    def action_pick_case(self) -> None:
        from dagtui.tui.screens.dialogs import CasePickerScreen

        run = self.live
        if run is None:
            return

        def chosen(index: int | None) -> None:
            if index is None:
                return
            if index < 0:
                self.action_edit_case()
                return
            self._use_case(self.cases[index])

        current = run.case.name if run.case else None
        self.app.push_screen(CasePickerScreen(self.cases, current, self.cases_source), chosen)

    def action_edit_case(self) -> None:
        from dagtui.tui.screens.dialogs import CaseEditScreen

        run = self.live
        if run is None:
            return
        multi = run.graph.metric.multi_turn
        # in a conversational case, role and content live in the turns
        needed = sorted({"turns" if multi and p in ("role", "content") else p
                         for n in run.graph.nodes.values() for p in n.params})

        def edited(case: Case | None) -> None:
            if case is not None:
                if case not in self.cases and case not in self.unsaved_cases:
                    self.unsaved_cases.append(case)  # esc offers to keep it
                self._use_case(case)

        self.app.push_screen(CaseEditScreen(run.case, run.graph.metric.multi_turn, needed),
                             edited)

    def _use_case(self, case: Case) -> None:
        run = self.live
        if run is None:
            return
        run.set_case(case)
        run.restart()
        self.refresh_view()
        if run.order:
            self.query_one(PathTree).select_node(run.order[0])

    def action_pick_judge(self) -> None:
        from dagtui.judges.factory import model_for
        from dagtui.tui.screens.dialogs import PickScreen

        if self.judge_factory is None or self.live is None:
            return
        model = model_for(self.live.graph)  # what a litellm judge here would call
        names = ["labels", "human", "litellm"]
        options = ["labels — the case's own labels, no calls",
                   "human — you answer each node",
                   f"litellm — {model}"]

        def picked(index: int | None) -> None:
            if index is None or self.live is None or self.judge_factory is None:
                return
            try:
                judge = self.judge_factory(names[index])
            except Exception as exc:  # noqa: BLE001
                self.notify(str(exc), severity="error")
                return
            case = self.live.case
            # the same graph, already checked: only the judge changes
            self.live = DebugRun(self.live.graph, judge, case, python=self.python,
                                 checked=self.live.checked, person=self.live.person)
            self.live.breakpoints = set()
            self._attach_judge()
            self.live.restart()
            self.refresh_view()

        self.app.push_screen(PickScreen("Judge", "Who answers each node?", options), picked)

    # ------------------------------------------------------------------ traces

    def action_save_trace(self) -> None:
        from dagtui.tui.screens.dialogs import TextScreen

        run = self.run
        if run is None or not run.started:
            self.notify("nothing to save yet: step first", severity="warning")
            return
        case = run.trace.case.get("name", "case") if run.trace else (
            run.case.name if run.case else "case")
        # under the graph's .dagtui/traces (git-ignored), not loose in the repository
        default = shown_path(workdir_for(self.graph_path or None) / "traces"
                             / f"{Path(self.graph_path).stem}.{slug(str(case))}.trace.json")

        def named(path: str | None) -> None:
            if path:
                self.save_trace(path)

        self.app.push_screen(TextScreen("Save the trace", "JSON file (graph hash, case, "
                                        "judge, every step, the result).", default), named)

    def save_trace(self, path: str | Path) -> Path | None:
        run = self.run
        if run is None:
            return None
        try:
            prepare_output(path)  # a .dagtui/ it creates gets its .gitignore
            saved = run.to_trace().save(path)
        except (OSError, AssertionError) as exc:
            self.notify(f"could not save: {exc}", severity="error")
            return None
        self.notify(f"trace saved to {saved}")
        return saved

    def action_open_trace(self) -> None:
        from dagtui.tui.screens.dialogs import TextScreen

        def named(path: str | None) -> None:
            if path:
                self.open_trace(path)

        self.app.push_screen(TextScreen("Open a saved trace", "Shown read-only; esc returns "
                                        "to the live run.", ""), named)

    def open_trace(self, path: str | Path) -> bool:
        try:
            trace = Trace.load(path)
        except (OSError, ValueError) as exc:
            self.notify(f"cannot open {path}: {exc}", severity="error")
            return False
        self.viewing = DebugRun(self.graph if self.live is None else self.live.graph, None,
                                trace=trace)
        tree = self.query_one(PathTree)
        tree.build(self.viewing.graph, self.viewing.order)
        self.refresh_view()
        return True

"""The suite view's domain state: the suite being edited, its problems, selection, dirty flag
and undo/redo.

Kept free of textual, as the graph editor's `EditorState` is, so every rule of editing a
suite (a refused edit leaves no trace, undo restores exactly, dirty means "differs from the
file") is tested without a terminal; `suite_view.SuiteScreen` only calls these methods and
redraws. The suite model edits rules in place (a dependency appended to a list), so an undo
snapshot is a deep copy of the rules: a suite has a handful of them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dagtui.diagnostics import Diagnostic
from dagtui.suite.loader import SuiteLoad, load_suite_file, load_suite_text
from dagtui.suite.model import Rule, Suite, SuiteEditError
from dagtui.suite.save import SuiteSaveError, render_suite, save_suite


@dataclass
class SuiteSnapshot:
    """Everything undo restores: the rules (deep-copied) and the selection."""

    rules: dict[str, Rule]
    selected: str | None
    description: str
    version: int


@dataclass
class SuiteState:
    """One open suite file and its editing history."""

    path: str
    load: SuiteLoad
    selected: str | None = None
    #: problems of the suite as edited (re-checked after every edit, before saving)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    _undo: list[SuiteSnapshot] = field(default_factory=list, repr=False)
    _redo: list[SuiteSnapshot] = field(default_factory=list, repr=False)
    #: identifies the content: every edit gets a fresh number, undo/redo restore theirs
    _version: int = 0
    _counter: int = 0
    _saved_version: int = 0

    @classmethod
    def open(cls, path: str | Path, select: str | None = None) -> SuiteState:
        """Load `path`; `select` is the rule to start on (`settle_selection` makes it the
        first one when it names none)."""
        load = load_suite_file(str(path))
        return cls(str(path), load, select, list(load.diagnostics))

    # -- status ---------------------------------------------------------------------------
    @property
    def suite(self) -> Suite | None:
        """None when the file could not be parsed (nothing to show or edit)."""
        return self.load.suite

    @property
    def kinds(self) -> dict[str, str]:
        return self.load.kinds

    @property
    def dirty(self) -> bool:
        """The suite differs from the file (an edit undone back to it is not dirty)."""
        return self._version != self._saved_version

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def rule(self) -> Rule | None:
        """The selected rule, if any."""
        suite = self.suite
        if suite is None or self.selected is None:
            return None
        return suite.rules.get(self.selected)

    def ordered_rules(self) -> list[tuple[int, str]]:
        """(level, rule id) by level; a cycle in the file as loaded gives file order."""
        suite = self.suite
        if suite is None:
            return []
        try:
            return [(n, rid) for n, level in enumerate(suite.levels()) for rid in level]
        except ValueError:
            return [(0, rid) for rid in suite.rules]

    def problems_of(self, rule_id: str) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.node == rule_id]

    def settle_selection(self) -> None:
        """Select the first rule when the selection names none."""
        suite = self.suite
        if suite is not None and self.selected not in suite.rules:
            self.selected = next(iter(suite.rules), None)

    # -- edits ----------------------------------------------------------------------------
    def _edit(self, description: str, change: Callable[[Suite], None]) -> None:
        """Apply `change` as one undoable step; a refusal (`SuiteEditError`) changes nothing."""
        suite = self.suite
        if suite is None:
            raise SuiteEditError("the suite file did not load: fix it on disk")
        snap = self._snapshot(description)
        try:
            change(suite)
        except SuiteEditError:
            # the model refuses before it changes anything; restoring makes that a rule
            suite.rules, self.selected = snap.rules, snap.selected
            raise
        self._undo.append(snap)
        self._redo.clear()
        self._counter += 1
        self._version = self._counter
        self.recheck()

    def _snapshot(self, description: str) -> SuiteSnapshot:
        suite = self.suite
        assert suite is not None
        return SuiteSnapshot(copy.deepcopy(suite.rules), self.selected, description,
                             self._version)

    def delete_rule(self, rule_id: str) -> None:
        """Delete a rule (refused, naming them, while others depend on it)."""
        def change(suite: Suite) -> None:
            suite.remove_rule(rule_id)
            self.selected = next(iter(suite.rules), None)

        self._edit(f"delete rule '{rule_id}'", change)

    def add_dependency(self, rule_id: str, dep: str) -> None:
        """Make `rule_id` depend on `dep` (refused at once when that closes a cycle)."""
        self._edit(f"'{rule_id}' depends on '{dep}'",
                   lambda suite: suite.add_dependency(rule_id, dep))

    def remove_dependency(self, rule_id: str, dep: str) -> None:
        self._edit(f"'{rule_id}' no longer depends on '{dep}'",
                   lambda suite: suite.remove_dependency(rule_id, dep))

    def toggle_paused(self, rule_id: str) -> str:
        """Pause an active rule or resume a paused one; returns its new status."""
        suite = self.suite
        rule = suite.rules.get(rule_id) if suite is not None else None
        if rule is None:
            raise SuiteEditError(f"no rule named '{rule_id}'")
        status = "active" if rule.status == "paused" else "paused"
        self._edit(f"'{rule_id}' {status}", lambda suite: suite.set_status(rule_id, status))
        return status

    # -- history --------------------------------------------------------------------------
    def undo(self) -> str | None:
        """Take back the last edit; its description, or None when there is none."""
        return self._travel(self._undo, self._redo)

    def redo(self) -> str | None:
        return self._travel(self._redo, self._undo)

    def _travel(self, source: list[SuiteSnapshot], target: list[SuiteSnapshot]) -> str | None:
        suite = self.suite
        if suite is None or not source:
            return None
        snap = source.pop()
        target.append(self._snapshot(snap.description))
        suite.rules = snap.rules  # popped: nothing else holds this copy
        self._version = snap.version
        self.selected = snap.selected
        self.settle_selection()
        self.recheck()
        return snap.description

    # -- checking and files ---------------------------------------------------------------
    def recheck(self) -> None:
        """Validate the suite as edited (e.g. a rule now depending on a paused one)."""
        suite = self.suite
        if suite is None or self.load.text is None:
            return
        try:
            text = render_suite(suite, self.load.text)
        except SuiteSaveError:
            return
        self.diagnostics = load_suite_text(text, self.path).diagnostics

    def save(self) -> None:
        """Write the edits into the file (comments kept) and re-read it for fresh problems.

        Raises `SuiteSaveError` or `OSError` with nothing written. The history stays, as in
        the graph editor: undoing past a save makes the suite dirty again.
        """
        suite = self.suite
        if suite is None:
            raise SuiteSaveError("the suite file did not load; it is never overwritten")
        save_suite(suite, self.path)
        selected = self.selected
        self.load = load_suite_file(self.path)
        self.diagnostics = list(self.load.diagnostics)
        self.selected = selected
        self.settle_selection()
        self._saved_version = self._version

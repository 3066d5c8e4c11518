"""Every key of the editor, the debugger and the suite view, in one table.

Each binding has an id (`editor.save`, `debugger.step`, `suite.delete`, ...) so a person
can move it with `DAGTUI_KEYS` or `~/.config/dagtui/keys.toml` (read and checked before
the UI opens by `dagtui.keyfile`, applied with Textual's `App.set_keymap`). The screens'
`BINDINGS` are built from these rows, what each key does carried as the binding's tooltip;
F1 and the command palettes read the same rows, so a key added here shows up everywhere
without a second list.

The tree, problem list, graph view and field widgets take their `BINDINGS` from tables
here too (`TREE_KEYS`, ...); the debugger's path tree and the calibration view declare
theirs on the class, and `binding_ids` and F1 read those from the classes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from textual.binding import Binding, BindingType


class KeySpec(NamedTuple):
    """One binding: its id, default key(s), action, footer label, whether the footer shows
    it, what it does (F1, the palette) and whether it beats a focused widget's own key."""

    id: str
    key: str
    action: str
    description: str
    show: bool
    help: str
    priority: bool = False

    def binding(self) -> Binding:
        """The Textual binding; what it does rides along as its tooltip (the footer shows it
        on hover, F1 lists it)."""
        return Binding(self.key, self.action, self.description, show=self.show,
                       priority=self.priority, id=self.id, tooltip=self.help)


def bindings(specs: Iterable[KeySpec]) -> list[BindingType]:
    """Textual bindings for a `BINDINGS` class attribute."""
    return [spec.binding() for spec in specs]


#: the footer shows keys in this order (after ^q, Textual's own) and a narrow terminal
#: cuts its end: F1 and the palette come first; `/` is off the footer, as ctrl+p finds
#: nodes by id or label too (this row replaces Textual's own palette binding)
EDITOR_KEYS: list[KeySpec] = [
    KeySpec("editor.help", "f1", "help", "help", True, "this help", priority=True),
    KeySpec("editor.palette", "ctrl+p", "command_palette", "find", True,
            "command palette: every action by name, and every node by id or label "
            "(enter jumps to it)", priority=True),
    KeySpec("editor.save", "ctrl+s", "save", "save", True,
            "save the graph (atomic, comments kept)", priority=True),
    KeySpec("editor.add_node", "a", "add_node", "add", True,
            "add a node: child of the selected task, or the highlighted verdict's then"),
    KeySpec("editor.add_verdict", "v", "add_verdict", "verdict+", False,
            "add a verdict to the selected judgement/check node"),
    KeySpec("editor.remove_verdict", "x", "remove_verdict", "verdict−", False,
            "remove the highlighted (or last) verdict"),
    KeySpec("editor.delete", "d", "delete", "delete", True,
            "delete the selected node (refused while anything points at it)"),
    KeySpec("editor.delete_detach", "D", "delete_detach", "delete and detach", False,
            "delete the node and detach every reference to it"),
    KeySpec("editor.rename", "r", "rename", "rename", True,
            "rename the node; every reference follows"),
    KeySpec("editor.move_up", "alt+up", "move(-1)", "move up", False,
            "move the highlighted verdict, or the node among its task's children, up"),
    KeySpec("editor.move_down", "alt+down", "move(1)", "move down", False,
            "move the highlighted verdict, or the node among its task's children, down"),
    KeySpec("editor.undo", "ctrl+z", "undo", "undo", True, "undo the last change"),
    KeySpec("editor.redo", "ctrl+y", "redo", "redo", False, "redo"),
    KeySpec("editor.external_editor", "ctrl+o", "external_editor", "$EDITOR", False,
            "edit the focused long field in $VISUAL/$EDITOR"),
    KeySpec("editor.goto", "slash,ctrl+g", "goto", "go to", False,
            "go to a node by (fuzzy) id or label (ctrl+p finds nodes too, among the "
            "commands)"),
    KeySpec("editor.problems", "p", "show_tab('problems')", "problems", False,
            "show the problems panel"),
    KeySpec("editor.paths", "t", "show_tab('paths')", "paths", False,
            "show the path analysis table"),
    KeySpec("editor.graph", "g", "show_graph", "graph", True,
            "show the graph drawing (again: enlarge and focus it; arrows/hjkl, pgup/pgdn, "
            "home scroll it; esc back)"),
    KeySpec("editor.graph_scope", "f", "graph_scope", "whole/focus graph", False,
            "graph: whole graph / selected node's upstream+downstream"),
    KeySpec("editor.tree", "escape", "focus_tree", "back to tree", False,
            "back to the tree (leave the form)"),
    KeySpec("editor.reload", "ctrl+r", "reload", "reload file", False,
            "re-read the file from disk"),
    KeySpec("editor.debug", "f5", "debug", "debug", True, "open the step debugger",
            priority=True),
    KeySpec("editor.calibration", "K", "calibration", "calibration", False,
            "calibration view (from dagtui calibrate): per-node kappa, confusion, "
            "disagreeing cases, probes; enter opens the debugger there, a aligns the node"),
    KeySpec("editor.label", "L", "label", "label cases", False,
            "label the cases node by node (dagtui label's screen), starting where the "
            "selected node is next to label; esc comes back (only the cases file is written)"),
    KeySpec("editor.remeasure", "f6", "remeasure", "re-measure", False,
            "re-measure the selected node as edited on its labelled cases (the saved "
            "calibration's cases and model; cached requests cost nothing): kappa "
            "calibrated -> now beside its criteria", priority=True),
    KeySpec("editor.quit", "ctrl+q,q", "quit", "quit", True,
            "quit (asks when there are unsaved changes)"),
]

#: the footer shows keys in this order and a narrow terminal cuts its end: esc and ? come
#: first, then stepping and saving; at 80 columns only `r restart` is cut (F1 lists it)
DEBUGGER_KEYS: list[KeySpec] = [
    KeySpec("debugger.back", "escape", "back", "back", True,
            "close a trace view / back to the editor (or the calibration view) / quit"),
    KeySpec("debugger.help", "question_mark,f1", "keys", "keys", True, "this list of keys"),
    KeySpec("debugger.step", "n", "step", "step", True,
            "run the next node (one judge call at most)"),
    KeySpec("debugger.continue", "c", "continue_run", "continue", True,
            "run to the end, or until a node with a breakpoint is next"),
    KeySpec("debugger.stop", "x", "stop", "stop", True, "cancel the judge call in flight"),
    KeySpec("debugger.save_trace", "ctrl+s", "save_trace", "save trace", True,
            "save the run as a trace (JSON)"),
    KeySpec("debugger.breakpoint", "b", "breakpoint", "break", True,
            "toggle a breakpoint on the selected node"),
    KeySpec("debugger.override", "o", "override", "what-if", True,
            "what-if: set the selected node's verdict yourself and follow that branch"),
    KeySpec("debugger.edit", "e", "edit_node", "edit", True,
            "edit the selected node's criteria/instructions and re-run from it "
            "(upstream steps reused; the edit can be written back to the graph)"),
    KeySpec("debugger.case", "p", "pick_case", "case", True,
            "pick the case from the cases file (or edit it inline)"),
    KeySpec("debugger.restart", "r", "restart", "restart", True,
            "start the case again from the first node"),
    KeySpec("debugger.edit_case", "i", "edit_case", "edit case", False,
            "edit every field of the current case inline"),
    KeySpec("debugger.save_labels", "L", "save_labels", "save labels", False,
            "write the verdicts given as the human judge into the case's labels "
            "(cases file)"),
    KeySpec("debugger.judge", "J", "pick_judge", "judge", False,
            "switch judge: labels, human, or the graph's model"),
    KeySpec("debugger.open_trace", "t", "open_trace", "open trace", False,
            "open a saved trace read-only"),
    KeySpec("debugger.copy_pane", "y", "copy_pane", "copy pane", False,
            "copy the whole text of the pane shown (prompt, response, ...) to the clipboard"),
]

#: `dagtui label` (`dagtui.tui.label`): one key per label; digits pick a verdict (1-9) or a
#: scored leaf's score (0-9, `t` for 10)
LABEL_KEYS: list[KeySpec] = [
    KeySpec("label.back", "escape", "back", "back", True,
            "back to the editor or the calibration view, or quit dagtui label "
            "(every label is written)"),
    KeySpec("label.help", "f1", "keys", "keys", True, "this list of keys"),
    *[KeySpec(f"label.pick{i}", str(i), f"pick({i})", str(i), False,
              f"label: verdict {i} of the node, or the score {i}") for i in range(10)],
    KeySpec("label.ten", "t", "pick(10)", "10", False, "label: the score 10"),
    KeySpec("label.find", "slash", "find", "find label", True,
            "pick the verdict by typing part of it (long label lists)"),
    KeySpec("label.accept", "a", "accept", "accept", True,
            "task node: its label is the judge's cached extraction"),
    KeySpec("label.edit", "e", "edit", "edit", True,
            "type the label: a task's evidence text, or a score"),
    KeySpec("label.unsure", "question_mark", "unsure", "unsure", False,
            "unsure: kept in the file, never compared with the judge"),
    KeySpec("label.undo", "u", "undo", "undo", False, "take back the last label"),
    KeySpec("label.skip", "s", "skip", "skip", False, "leave this node for now"),
    KeySpec("label.next", "n", "case(1)", "next", True, "the next case"),
    KeySpec("label.prev", "p", "case(-1)", "prev", True, "the previous case"),
    KeySpec("label.reveal", "r", "reveal", "judge", True,
            "show or hide the judge's cached answer"),
]

#: the footer label of a binding (by id) on the screen the app started on, where leaving it
#: leaves the app (`dagtui.tui.screens.base.DagtuiScreen.active_bindings`): esc quits
#: `dagtui label` and `dagtui step`, and goes back when the same screen sits over the editor
START_DESCRIPTIONS: dict[str, str] = {"label.back": "quit", "debugger.back": "quit"}

SUITE_KEYS: list[KeySpec] = [
    KeySpec("suite.focus", "f", "toggle_focus", "Focus", True,
            "drawing: all rules / the selected rule's upstream and downstream"),
    KeySpec("suite.add_dep", "a", "add_dependency", "Add dep", True,
            "make the selected rule depend on another (a cycle is refused)"),
    KeySpec("suite.remove_dep", "x", "remove_dependency", "Remove dep", True,
            "remove one of the selected rule's dependencies"),
    KeySpec("suite.pause", "p", "toggle_paused", "Pause", True,
            "pause or resume the selected rule"),
    KeySpec("suite.delete", "delete,d", "delete_rule", "Delete", True,
            "delete the selected rule (refused while another depends on it)"),
    KeySpec("suite.open", "enter,o", "open_graph", "Open graph", True,
            "open the selected rule's graph in the editor (back here when it closes)"),
    KeySpec("suite.save", "ctrl+s", "save", "Save", True, "save the suite file"),
    KeySpec("suite.undo", "ctrl+z", "undo", "Undo", False, "undo the last change"),
    KeySpec("suite.redo", "ctrl+y", "redo", "Redo", False, "redo"),
    KeySpec("suite.down", "j", "cursor(1)", "Down", False, "next rule"),
    KeySpec("suite.up", "k", "cursor(-1)", "Up", False, "previous rule"),
    KeySpec("suite.help", "f1", "help", "Help", True, "this help", priority=True),
    # ctrl+q quits too: Textual's own binding runs this app's `action_quit`
    KeySpec("suite.quit", "q", "quit", "Quit", True,
            "quit (asks when there are unsaved changes; ctrl+q too)"),
]

#: every dialog: esc backs out, changing nothing
DIALOG_KEYS: list[KeySpec] = [
    KeySpec("dialog.cancel", "escape", "cancel", "cancel", False,
            "close the dialog, changing nothing"),
]

#: a one-text dialog (rename, a what-if evidence, a file name): F2 applies (enter too on a
#: one-line text; a long text needs enter for new lines)
TEXT_KEYS: list[KeySpec] = [
    KeySpec("dialog.submit", "f2", "submit", "apply", False, "apply the text typed"),
]

#: the editor's add-node dialog: the type is chosen while the id is typed
ADD_NODE_KEYS: list[KeySpec] = [
    KeySpec("dialog.add_node.type_up", "up", "type(-1)", "type", False,
            "add a node: highlight the type above"),
    KeySpec("dialog.add_node.type_down", "down", "type(1)", "type", False,
            "add a node: highlight the type below"),
]

#: the editor's graph tree (also the debugger's base: `widgets.graph_tree.GraphTree`)
TREE_KEYS: list[KeySpec] = [
    KeySpec("tree.down", "j", "cursor_down", "Down", False, "Down"),
    KeySpec("tree.up", "k", "cursor_up", "Up", False, "Up"),
    KeySpec("tree.collapse", "h", "collapse_or_parent", "Collapse", False, "Collapse"),
    KeySpec("tree.expand", "l", "expand_row", "Expand", False, "Expand"),
    KeySpec("tree.last", "G", "scroll_end", "Last", False, "Last"),
]

#: the editor's problem list (`widgets.panels.ProblemsTable`)
PROBLEMS_KEYS: list[KeySpec] = [
    KeySpec("problems.down", "j", "cursor_down", "Down", False, "Down"),
    KeySpec("problems.up", "k", "cursor_up", "Up", False, "Up"),
    KeySpec("problems.view", "v", "view_message", "whole message", True, "whole message"),
]

#: the debugger's path tree (`debugger.widgets.PathTree`)
PATH_TREE_KEYS: list[KeySpec] = [
    KeySpec("debugger.tree.down", "j", "cursor_down", "Down", False, "Down"),
    KeySpec("debugger.tree.up", "k", "cursor_up", "Up", False, "Up"),
]

#: the calibration view (`screens.calibration.CalibrationScreen`)
CALIBRATION_KEYS: list[KeySpec] = [
    KeySpec("calibration.close", "escape", "close", "back", True, "back"),
    KeySpec("calibration.align", "a", "align", "align node", True,
            "align the selected node with its labels (dagtui align: candidates on train, the "
            "best proven on held-out); enter on 'apply' makes it an undoable edit"),
    KeySpec("calibration.label", "L", "label", "label", True,
            "label again the cases where the selected node's judge and label disagree "
            "(dagtui label's screen; none: every case, the disagreeing first); esc comes "
            "back, the result re-read"),
]

#: the graph drawing (`widgets.graph_view.GraphView`)
GRAPH_VIEW_KEYS: list[KeySpec] = [
    KeySpec("graph.left", "left,h", "scroll_left", "scroll left", False, "scroll left"),
    KeySpec("graph.right", "right,l", "scroll_right", "scroll right", False, "scroll right"),
    KeySpec("graph.down", "down,j", "scroll_down", "scroll down", False, "scroll down"),
    KeySpec("graph.up", "up,k", "scroll_up", "scroll up", False, "scroll up"),
    KeySpec("graph.page_up", "pageup", "page_up", "page up", False, "page up"),
    KeySpec("graph.page_down", "pagedown", "page_down", "page down", False, "page down"),
    KeySpec("graph.home", "home", "scroll_home", "back to the top left (the root)", False,
            "back to the top left (the root)"),
    KeySpec("graph.end", "end", "scroll_end", "scroll to the bottom", False,
            "scroll to the bottom"),
]

#: a field of the node form, one line or long (`widgets.field_input`, `widgets.long_text`)
FIELD_KEYS: list[KeySpec] = [
    KeySpec("field.select_all", "ctrl+a", "select_all", "select all", False, "select all"),
]

#: the debugger's human judge
HUMAN_KEYS: list[KeySpec] = [
    KeySpec("debugger.human.submit", "f2", "submit", "answer", False,
            "human judge: send the answer"),
    *[KeySpec(f"debugger.human.pick{i}", str(i), f"pick({i - 1})", str(i), False,
              f"human judge: pick answer {i}") for i in range(1, 10)],
]

#: the debugger's case editor
CASE_KEYS: list[KeySpec] = [
    KeySpec("debugger.case.submit", "f2", "submit", "apply", False, "apply the case edited"),
]

#: F1's list itself
HELP_KEYS: list[KeySpec] = [
    KeySpec("help.close", "f1,q,question_mark", "cancel", "close", False, "close this list"),
]


def pane_keys(panes: Sequence[tuple[str, str]]) -> list[KeySpec]:
    """`1`..`5`: the debugger's step panes (`panes`: pane id, tab title)."""
    return [KeySpec(f"debugger.pane.{pid}", str(i), f"pane('{pid}')", title, False,
                    f"show the {title} pane")
            for i, (pid, title) in enumerate(panes, start=1)]


#: the debugger's step panes (pane id, tab title), in the order keys 1..5 select them
#: (`debugger.widgets` shows them as tabs)
DEBUGGER_PANES: list[tuple[str, str]] = [
    ("prompt", "Prompt"),
    ("response", "Response"),
    ("evidence", "Evidence"),
    ("verdict", "Verdict"),
    ("usage", "Usage"),
]


def _debugger_panes() -> list[KeySpec]:
    return pane_keys(DEBUGGER_PANES)


def describe_key(key: str) -> str:
    """`ctrl+s` -> `^s`, `f1` -> `F1`, `slash` -> `/` (the footer's spelling)."""
    names = {"slash": "/", "question_mark": "?", "escape": "esc", "enter": "enter",
             "left_square_bracket": "[", "right_square_bracket": "]"}
    out = []
    for part in key.split(","):
        part = part.strip()
        part = names.get(part, part)
        if part.startswith("ctrl+"):
            part = "^" + part[5:]
        if len(part) >= 2 and part[0] == "f" and part[1:].isdigit():
            part = part.upper()
        out.append(part)
    return " or ".join(out)


def key_of(app: Any, binding_id: str, default: str) -> str:
    """The key(s) bound to `binding_id` now: the user's remap, else `default`.

    The apps keep the remaps they were given as `user_keymap` (Textual's copy is private).
    """
    keymap: Mapping[str, str] = getattr(app, "user_keymap", None) or {}
    return keymap.get(binding_id, default)


def shown_key(app: Any, binding_id: str, default: str) -> str:
    """`key_of` spelled the way the footer and F1 spell keys (`^s`, `? or F1`, `esc`)."""
    return describe_key(key_of(app, binding_id, default))


def merged(found: Iterable[Binding]) -> list[Binding]:
    """One binding per id, its keys joined in the order met (Textual splits `a,b` into one
    binding per key); bindings without an id are left out."""
    out: dict[str, Binding] = {}
    for b in found:
        if not b.id:
            continue
        if b.id not in out:
            out[b.id] = b
        elif b.key not in out[b.id].key.split(","):
            first = out[b.id]
            out[b.id] = Binding(f"{first.key},{b.key}", b.action, first.description,
                                show=first.show, id=b.id, tooltip=first.tooltip)
    return list(out.values())


def editor_widgets() -> list[tuple[str, list[KeySpec]]]:
    """The editor's widgets with keys of their own, titled as F1 shows them. Their tables
    live here, not read from the widget classes: the widgets import this module (for
    `bindings`), so this one importing them would close a circle."""
    return [("tree", TREE_KEYS), ("problems list", PROBLEMS_KEYS),
            ("graph (g g)", GRAPH_VIEW_KEYS), ("form field", FIELD_KEYS)]


def debugger_widgets() -> list[tuple[str, list[KeySpec]]]:
    """The debugger's widgets with keys of their own, titled as F1 shows them (tables here,
    as `editor_widgets`'s, so this module imports no widget)."""
    return [("path tree", PATH_TREE_KEYS)]


#: a group of keys as F1 and the keys pages of the docs show it: its title, its bindings
KeyGroup = tuple[str, Sequence[BindingType]]


class KeyScope(NamedTuple):
    """Bindings that act together (a screen, a widget, a dialog), declared once in
    `key_scopes_table` for every list of keys: `title` is the heading `dagtui edit
    --list-keys` prints and the scope clashes are checked in, `screens` the screens whose
    remappable ids they are (`binding_ids`), `shown` the (screen, group) F1 and the docs'
    keys tables list them under (None: not in F1), `bound` the bindings."""

    title: str
    screens: tuple[str, ...]
    shown: tuple[str, str] | None
    bound: list[Binding]


def key_scopes_table() -> list[KeyScope]:
    """Every binding group in `--list-keys` order; F1's groups follow the same order (the
    editor's own keys, then each widget's, read from the classes: a long field may not
    even be mounted yet). Dialog keys serve the debugger and the suite view; the editor
    reaches them, and the whole debugger, through F5."""
    def bound(*tables: Iterable[KeySpec]) -> list[Binding]:
        return [spec.binding() for table in tables for spec in table]

    dialogs = ("debugger", "suite")
    return [
        KeyScope("editor", ("editor",), ("editor", "editor"), bound(EDITOR_KEYS)),
        *[KeyScope(f"editor: {title}", ("editor",), ("editor", title), bound(table))
          for title, table in editor_widgets()],
        KeyScope("editor: calibration view", ("editor",), None, bound(CALIBRATION_KEYS)),
        KeyScope("editor: add-node dialog", ("editor",), ("editor", "add-node dialog"),
                 bound(ADD_NODE_KEYS)),
        KeyScope("debugger", ("debugger",), ("debugger", "debugger"),
                 bound(DEBUGGER_KEYS, _debugger_panes())),
        *[KeyScope(f"debugger: {title}", ("debugger",), ("debugger", title), bound(table))
          for title, table in debugger_widgets()],
        KeyScope("debugger: human judge", ("debugger",), ("debugger", "dialogs"),
                 bound(HUMAN_KEYS)),
        KeyScope("debugger: case editor", ("debugger",), ("debugger", "dialogs"),
                 bound(CASE_KEYS)),
        KeyScope("suite view", ("suite",), ("suite", "suite"), bound(SUITE_KEYS)),
        KeyScope("label", ("label",), ("label", "label"), bound(LABEL_KEYS)),
        KeyScope("dialogs", dialogs, ("debugger", "dialogs"), bound(DIALOG_KEYS, TEXT_KEYS)),
        KeyScope("key list (F1)", dialogs, ("debugger", "dialogs"), bound(HELP_KEYS)),
    ]


def help_groups(screen: str) -> list[KeyGroup]:
    """The keys F1 lists on `screen` (`editor`, `debugger`, `suite`) by where they work,
    from `key_scopes_table`: scopes shown under one group name are joined in table order."""
    groups: dict[str, list[BindingType]] = {}
    for scope in key_scopes_table():
        if scope.shown is not None and scope.shown[0] == screen:
            groups.setdefault(scope.shown[1], []).extend(scope.bound)
    return list(groups.items())


def editor_groups() -> list[KeyGroup]:
    """The editor's keys by where they work, in F1's order: its own, then each widget's,
    then the add-node dialog's."""
    return help_groups("editor")


def debugger_groups() -> list[KeyGroup]:
    """The debugger's keys by where they work, in F1's order: its own and the pane keys,
    its widgets', then the dialogs' (human judge, case editor, every dialog, F1 itself)."""
    return help_groups("debugger")


#: the debugger's F1 rows that are no binding (group, key, what it does)
DEBUGGER_NOTES: list[tuple[str, str, str]] = [
    ("path tree", "↑ ↓ space", "move; space folds or unfolds a node's verdicts"),
    ("step panes", "tab", "into the pane: shift+arrows or mouse select, f7 all, ctrl+c copies"),
]


def suite_groups() -> list[KeyGroup]:
    """The suite view's keys (one group)."""
    return help_groups("suite")


#: the screens whose ids a screen's keys may name: F5 opens the debugger in the editor, L
#: (and the calibration view's L) the labelling screen
_REACHES = {"editor": ("editor", "debugger", "label"), "debugger": ("debugger",),
            "suite": ("suite",),
            "label": ("label",)}


def binding_ids(screen: str | None = None) -> set[str]:
    """The remappable ids of one screen (`editor`, `debugger`, `suite`) with its widgets
    and dialogs, or of all three (None: what a keys file may name, as it serves them all).

    The editor's set includes the debugger's: F5 opens it in the same app.
    """
    wanted = set(_REACHES[screen] if screen is not None else _REACHES)
    return {b.id for scope in key_scopes_table() if wanted & set(scope.screens)
            for b in scope.bound if b.id}


class Remappable:
    """App mixin: `set_keymap` (Textual's public remap) that also keeps the remaps where F1
    and the palettes can read them (`key_of`; Textual's own copy is private)."""

    #: the user's remaps as given to `set_keymap`
    user_keymap: dict[str, str] = {}

    def set_keymap(self, keymap: Mapping[str, str]) -> None:
        self.user_keymap = dict(keymap)
        # App's set_keymap: it comes after this mixin in the app's bases
        super().set_keymap(keymap)  # type: ignore[misc]


def key_groups() -> list[tuple[str, list[Binding]]]:
    """Every remappable binding once, grouped by where its keys act together (a screen, a
    widget, a dialog), in the order F1 shows them: what `dagtui edit --list-keys` prints."""
    return [(scope.title, scope.bound) for scope in key_scopes_table()]


def key_scopes() -> list[tuple[str, dict[str, str]]]:
    """(title, binding id -> default keys) of every group whose keys act at once, for
    `dagtui.keyfile.conflicts`: each group of `key_groups`, and each dialog's own keys
    together with every dialog's (`esc` cancels in all of them)."""
    groups = {title: {b.id: b.key for b in bound if b.id} for title, bound in key_groups()}
    shared = groups["dialogs"]
    for title in ("debugger: human judge", "debugger: case editor"):
        groups[title] = {**groups[title], **shared}
    return list(groups.items())


def user_keymap() -> dict[str, str]:
    """The user's remaps (`DAGTUI_KEYS`, keys.toml), checked against every screen's ids and
    for two bindings of one scope on one key; raises `dagtui.keyfile.KeymapError`."""
    from dagtui.keyfile import checked_keymap

    return checked_keymap(binding_ids, scopes=key_scopes)


def list_keys() -> str:
    """`dagtui edit --list-keys`: every binding id with its default key and what it does,
    by group: the ids `DAGTUI_KEYS` and keys.toml name."""
    lines: list[str] = []
    for title, bound in key_groups():
        lines.append(f"{title}:")
        width = max((len(b.id or "") for b in bound), default=0)
        lines.extend(f"  {b.id or '':{width}}  {describe_key(b.key):14} "
                     f"{b.tooltip or b.description or b.action}" for b in bound)
    return "\n".join(lines) + "\n"

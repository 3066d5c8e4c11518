"""The debugger's keys in one place: the binding table, what each action does, the F1 rows
and the remappable binding ids.

Every debugger binding has a `debugger.*` id, so the same remaps the editor reads
(`DAGTUI_KEYS`, `~/.config/dagtui/keys.toml`, see `dagtui.tui.keymap`) move its keys too.
F1 and the command palette read the key through `key_of`, so they show the key the person
really presses, not the default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..keymap import KeymapError, load_keymap
from ..screens.help import describe_key

#: (binding id, key, action, footer text, shown in footer)
DEBUGGER_KEYS: list[tuple[str, str, str, str, bool]] = [
    ("debugger.step", "n", "step", "step", True),
    ("debugger.continue", "c", "continue_run", "continue", True),
    ("debugger.restart", "r", "restart", "restart", True),
    ("debugger.breakpoint", "b", "breakpoint", "breakpoint", True),
    ("debugger.override", "o", "override", "override", True),
    ("debugger.edit", "e", "edit_node", "edit & rerun", True),
    ("debugger.case", "p", "pick_case", "case", True),
    ("debugger.edit_case", "i", "edit_case", "edit case", False),
    ("debugger.judge", "J", "pick_judge", "judge", False),
    ("debugger.stop", "x", "stop", "stop", True),
    ("debugger.save_trace", "ctrl+s", "save_trace", "save trace", True),
    ("debugger.open_trace", "t", "open_trace", "open trace", False),
    ("debugger.copy_pane", "y", "copy_pane", "copy pane", False),
    ("debugger.help", "question_mark,f1", "keys", "keys", True),
    ("debugger.back", "escape", "back", "back", True),
]

#: what each action does (help text, palette, README)
DEBUGGER_HELP: dict[str, str] = {
    "step": "run the next node (one judge call at most)",
    "continue_run": "run to the end, or until a node with a breakpoint is next",
    "restart": "start the case again from the first node",
    "breakpoint": "toggle a breakpoint on the selected node",
    "override": "what-if: set the selected node's verdict yourself and follow that branch",
    "edit_node": "edit the selected node's criteria/instructions and re-run from it "
                 "(upstream steps reused)",
    "pick_case": "pick the case from the cases file (or edit it inline)",
    "edit_case": "edit every field of the current case inline",
    "pick_judge": "switch judge: labels, human, or the graph's model",
    "stop": "cancel the judge call in flight",
    "save_trace": "save the run as a trace (JSON)",
    "open_trace": "open a saved trace read-only",
    "copy_pane": "copy the whole text of the pane shown (prompt, response, ...) to the clipboard",
    "keys": "this list of keys",
    "back": "close a trace view / back to the editor / quit",
}

#: one F1 row: (key as shown, what it does, binding id or "" for keys that cannot be remapped)
HelpRow = tuple[str, str, str]


def key_of(app: Any, binding_id: str, default: str) -> str:
    """The key(s) bound to `binding_id` now: the user's remap, else `default`."""
    keymap: Mapping[str, str] = getattr(app, "user_keymap", None) or {}
    return keymap.get(binding_id, default)


def shown_key(app: Any, binding_id: str, default: str) -> str:
    """`key_of` spelled the way the footer and F1 spell keys (`^s`, `? or F1`, `esc`)."""
    return describe_key(key_of(app, binding_id, default))


def help_sections(app: Any) -> list[tuple[str, list[HelpRow]]]:
    """Every key the debugger answers to, grouped by where it works (F1 shows these).

    Rows come from the classes' own BINDINGS, so a binding added to the screen, the tree or
    a dialog shows up here without a second list to keep in step.
    """
    from .dialogs import (
        CaseEditScreen,
        DebuggerDialog,
        HumanAnswerScreen,
        KeysScreen,
        TextScreen,
    )
    from .screen import DebuggerScreen
    from .widgets import PathTree

    def rows_of(bindings: list[Any], does: Mapping[str, str] | None = None) -> list[HelpRow]:
        out: list[HelpRow] = []
        for b in bindings:
            text = (does or {}).get(b.action) or b.description or b.action
            out.append((shown_key(app, b.id, b.key), text, b.id))
        return out

    screen_rows = rows_of([b for b in DebuggerScreen.BINDINGS
                           if not b.id.startswith("debugger.pane.")], DEBUGGER_HELP)
    screen_rows += [(shown_key(app, b.id, b.key), f"show the {b.description} pane", b.id)
                    for b in DebuggerScreen.BINDINGS if b.id.startswith("debugger.pane.")]
    if getattr(app, "ENABLE_COMMAND_PALETTE", False):
        palette_key = describe_key(getattr(app, "COMMAND_PALETTE_BINDING", "ctrl+p"))
        screen_rows.append((palette_key, "command palette: every debugger action by name", ""))
    tree_rows = rows_of(list(PathTree.BINDINGS))
    tree_rows.append(("↑ ↓ space", "move; space folds or unfolds a node's verdicts", ""))
    pane_rows: list[HelpRow] = [
        ("tab", "into the pane: shift+arrows or mouse select, f7 all, ctrl+c copies", ""),
    ]
    dialog_rows = rows_of(list(DebuggerDialog.BINDINGS))
    for b in HumanAnswerScreen.BINDINGS:  # each number key can be remapped on its own
        if b.action == "submit":
            dialog_rows.append((shown_key(app, b.id, b.key), "human judge: send the answer",
                                b.id))
        else:
            number = b.id.removeprefix("debugger.human.pick")
            dialog_rows.append((shown_key(app, b.id, b.key),
                                f"human judge: pick answer {number}", b.id))
    dialog_rows += rows_of(list(TextScreen.BINDINGS), {"submit": "apply the text typed"})
    dialog_rows += rows_of(list(CaseEditScreen.BINDINGS), {"submit": "apply the case edited"})
    dialog_rows += rows_of(list(KeysScreen.BINDINGS), {"cancel": "close this list"})
    return [
        ("debugger", screen_rows),
        ("path tree", tree_rows),
        ("step panes", pane_rows),
        ("dialogs", dialog_rows),
    ]


def binding_ids() -> set[str]:
    """Every remappable id of the debugger, its tree and its dialogs.

    `dagtui edit` checks remaps against the editor's ids; F5 opens this debugger in the
    same app, so these belong in that check too.
    """
    from .dialogs import (
        CaseEditScreen,
        DebuggerDialog,
        HumanAnswerScreen,
        KeysScreen,
        TextScreen,
    )
    from .screen import DebuggerScreen
    from .widgets import PathTree

    owners = (DebuggerScreen, PathTree, DebuggerDialog, HumanAnswerScreen, TextScreen,
              CaseEditScreen, KeysScreen)
    return {b.id for owner in owners for b in owner.BINDINGS if getattr(b, "id", None)}


def load_debugger_keymap(environ: Mapping[str, str] | None = None,
                         path: Any = None) -> dict[str, str]:
    """The user's remaps that concern the debugger (for `dagtui step`).

    The keys file is shared with the editor, so ids of other parts are skipped; a
    `debugger.*` id that does not exist is an error (a typo would otherwise do nothing).
    """
    keymap = load_keymap(environ, path)
    known = binding_ids()
    mine = {bid: key for bid, key in keymap.items() if bid.startswith("debugger.")}
    unknown = sorted(bid for bid in mine if bid not in known)
    if unknown:
        raise KeymapError(f"unknown debugger binding id(s): {', '.join(unknown)} "
                          "(F1 in the debugger lists the ids)")
    return mine

"""F1: every key of the screen that opened it, what it does and its binding id.

One help screen serves the editor, the debugger and the suite view. It starts from the
public `Screen.active_bindings` of the screen that opened it, so the keys shown are the
ones in force (remaps applied) first, then adds from the key table the screen's keys that
cannot act right now (`x` stop with nothing running) and those of its other widgets and
dialogs, remapped the same way.
What each key does comes from the key table (`dagtui.tui.keys`), as the binding's tooltip.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Label, Static

from dagtui.tui.keys import HELP_KEYS, binding_ids, bindings, describe_key, key_of, merged
from dagtui.tui.screens.dialogs import Dialog

#: the command palette's row (Textual's binding has no id; `ctrl+p` by default)
PALETTE_ID = "app.command_palette"

#: a group of F1: its title and its bindings (key as in force, `tooltip` = what it does)
Group = tuple[str, list[Binding]]


def active_groups(opener: Screen, title: str, home: dict[str, str]) -> list[Group]:
    """The bindings in force on `opener`, from its public `active_bindings`, grouped by
    where they belong: `home` names the group of an id (a widget's keys under its name),
    the rest go under `title`, which comes first."""
    found = [active.binding for active in opener.active_bindings.values()]
    for b in found:
        if b.action in ("command_palette", "app.command_palette") and not b.id:
            found.append(Binding(b.key, b.action, "command palette: every action by name",
                                 id=PALETTE_ID))
            break
    groups: dict[str, list[Binding]] = {title: []}
    for b in merged(found):
        groups.setdefault(home.get(b.id or "", title), []).append(b)
    return [(name, bound) for name, bound in groups.items() if bound]


class HelpScreen(Dialog):
    """A scrollable table of key, what it does and binding id, grouped by where it works.

    `opener`: the screen F1 was pressed on (its `active_bindings` come first, under
    `title`); `more`: further groups (widgets not focused now, dialogs) as declared, shown
    with the app's remaps; `notes`: (group, key, what it does) rows with no binding (plain
    arrows, the mouse).
    """

    BINDINGS = bindings(HELP_KEYS)

    def __init__(self, opener: Screen, title: str,
                 more: Sequence[tuple[str, Sequence[BindingType]]] = (),
                 notes: Sequence[tuple[str, str, str]] = (), heading: str = "keys") -> None:
        super().__init__()
        self.heading = heading
        home = {b.id: name for name, declared in more for b in declared
                if isinstance(b, Binding) and b.id}
        self.groups: list[Group] = active_groups(opener, title, home)
        listed = {b.id for _name, bound in self.groups for b in bound}
        for name, declared in more:
            fresh = [self._in_force(b) for b in declared
                     if isinstance(b, Binding) and b.id and b.id not in listed]
            listed.update(b.id for b in fresh)
            if fresh:
                for group_name, bound in self.groups:
                    if group_name == name:
                        bound.extend(fresh)
                        break
                else:
                    self.groups.append((name, fresh))
        self.notes = list(notes)

    def _in_force(self, b: Binding) -> Binding:
        key = key_of(self.app, b.id or "", b.key)
        return b if key == b.key else Binding(key, b.action, b.description, id=b.id,
                                              tooltip=b.tooltip)

    @property
    def sections(self) -> list[tuple[str, list[tuple[str, str, str]]]]:
        """The rows as shown: (key, what it does, binding id) by group."""
        out: list[tuple[str, list[tuple[str, str, str]]]] = []
        for name, bound in self.groups:
            rows = [(describe_key(b.key), b.tooltip or b.description or b.action, b.id or "")
                    for b in bound]
            out.append((name, rows))
        for where, key, does in self.notes:
            for name, rows in out:
                if name == where:
                    rows.append((key, does, ""))
                    break
            else:
                out.append((where, [(key, does, "")]))
        return out

    @property
    def binding_ids(self) -> set[str]:
        """The remappable binding ids listed."""
        known = binding_ids()
        return {b.id for _name, bound in self.groups for b in bound if b.id in known}

    def key_for(self, binding_id: str) -> str | None:
        """The key shown for `binding_id` (None when it is not listed)."""
        return next((key for _name, rows in self.sections for key, _does, bid in rows
                     if bid == binding_id), None)

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog dialog-help"):
            yield Label(self.heading, classes="dialog-title")
            table = Table(box=None, expand=True, pad_edge=False, show_header=True,
                          header_style="bold")
            table.add_column("key", style="bold cyan", no_wrap=True, min_width=12)
            table.add_column("does")
            table.add_column("binding id", style="dim", no_wrap=True)
            for name, rows in self.sections:
                table.add_row(Text(name, style="bold underline"), "", "")
                for key, does, bid in rows:
                    table.add_row(key, does, bid)
            yield Static(table)
            yield Static(Text("Remap any key by its id: DAGTUI_KEYS='editor.rename=n;editor.save=f2' "
                              "or lines like \"editor.rename\" = \"n\" in "
                              "~/.config/dagtui/keys.toml.   esc or F1 closes.", style="dim"))

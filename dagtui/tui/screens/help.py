"""F1: every key the editor answers to, read from the live bindings (so remaps show)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static


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


class HelpScreen(ModalScreen[None]):
    """A scrollable table of key, action and binding id, grouped by where it applies."""

    BINDINGS = [
        Binding("escape,f1,q", "dismiss", "Close", id="help.close"),
    ]

    def __init__(self, groups: list[tuple[str, list[Binding]]]) -> None:
        super().__init__()
        self.groups = groups

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog dialog-help"):
            yield Label("dagtui edit — keys", classes="dialog-title")
            table = Table(box=None, expand=True, pad_edge=False, show_header=True,
                          header_style="bold")
            table.add_column("key", style="bold cyan", no_wrap=True, min_width=12)
            table.add_column("does")
            table.add_column("binding id", style="dim", no_wrap=True)
            for title, bindings in self.groups:
                table.add_row(Text(title, style="bold underline"), "", "")
                seen: set[str] = set()
                for b in bindings:
                    if b.id in seen:
                        continue
                    seen.add(b.id or b.action)
                    table.add_row(describe_key(b.key), b.description or b.action, b.id or "")
            yield Static(table)
            yield Static(Text("Remap any key by its id: DAGTUI_KEYS='editor.rename=n;editor.save=f2' "
                              "or lines like \"editor.rename\" = \"n\" in "
                              "~/.config/dagtui/keys.toml.   esc or F1 closes.", style="dim"))

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)

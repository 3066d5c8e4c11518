"""The debugger's command palette (ctrl+p): every action of its bindings, by name.

Each entry shows the key that does the same (after the user's remaps) and the binding id.
An action that cannot run now (step once the run is over, stop with no call in flight, ...)
is still listed, after the ones that can, with the reason; choosing it tells the reason
instead of silently doing nothing, so typing "step" never comes up empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.widget import Widget

from dagtui.graph.model import Graph
from dagtui.tui.debugger.run_model import DebugRun
from dagtui.tui.debugger.widgets import PathTree, StepPanes
from dagtui.tui.keys import DEBUGGER_KEYS, DEBUGGER_PANES, shown_key
from dagtui.tui.node_palette import NodeFinder

W = TypeVar("W", bound=Widget)


class DebuggerScreen(Protocol):
    """What the palette reads of the debugger screen (`screen.DebuggerScreen`, whose
    `COMMANDS` list these providers). A protocol, so this module does not import the
    screen that imports it."""

    viewing: DebugRun | None
    live: DebugRun | None
    standalone: bool
    fatal: str | None
    busy: bool

    @property
    def app(self) -> App[Any]: ...
    @property
    def run(self) -> DebugRun | None: ...
    def query_one(self, selector: type[W]) -> W: ...
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None: ...
    def notify(self, message: str, *, severity: Any = ..., title: str = ...) -> None: ...
    async def run_action(self, action: str) -> None: ...


def _calling(provider: Provider) -> DebuggerScreen:
    """The debugger screen the palette was opened on: these providers are listed in
    `screen.DebuggerScreen.COMMANDS` only, so Textual runs them on no other screen."""
    return cast(DebuggerScreen, provider.screen)


@dataclass(frozen=True)
class PaletteCommand:
    """One palette entry: `action` is run on the debugger screen like its key would be."""

    title: str
    action: str
    binding_id: str
    key: str
    does: str
    unavailable: str | None  # why it cannot run now, None when it can

    @property
    def name(self) -> str:
        """The action's name without parameters (what `check_action` is asked about)."""
        return self.action.split("(", 1)[0]

    @property
    def help(self) -> str:
        where = f"{self.key}  ·  {self.binding_id}"
        if self.unavailable:
            return f"not now: {self.unavailable}  ·  {where}"
        return f"{self.does}  ·  {where}"


def _selected(screen: DebuggerScreen) -> str:
    nid = screen.query_one(PathTree).selected_node
    return nid or "the selected node"


def _title(screen: DebuggerScreen, action: str) -> str:
    """A name to type for `action`: a verb first, and the node it would act on."""
    nid = _selected(screen)
    if action == "back":
        if screen.viewing is not None and screen.live is not None:
            return "Close the trace view (back to the live run)"
        return "Quit the debugger" if screen.standalone else "Back to the editor"
    if action == "copy_pane":
        return f"Copy the {screen.query_one(StepPanes).active} pane to the clipboard"
    titles = {
        "step": "Step: run the next node",
        "continue_run": "Continue: run to the end or the next breakpoint",
        "restart": "Restart the case from the first node",
        "breakpoint": f"Toggle a breakpoint on {nid}",
        "override": f"Override the verdict of {nid} (what-if)",
        "edit_node": f"Edit {nid} and re-run from it",
        "pick_case": "Pick another case",
        "edit_case": "Edit the case inline",
        "pick_judge": "Change the judge",
        "stop": "Stop the judge call",
        "save_trace": "Save the trace",
        "open_trace": "Open a saved trace",
        "keys": "Show every key (F1 help)",
    }
    return titles.get(action, action.replace("_", " ").capitalize())


def why_not(screen: DebuggerScreen, action: str) -> str | None:
    """None when `action` can run now, else the reason in a few words.

    `DebuggerScreen.check_action` decides (the footer greys out the same keys); this only
    puts its answer into words.
    """
    if screen.check_action(action, ()):
        return None
    run = screen.live
    key = _key_named(screen)
    if action == "stop":
        return "no judge call is running"
    if screen.viewing is not None:
        return f"a saved trace is shown ({key('back')} returns to the live run)"
    if run is None:
        return (screen.fatal or "nothing to run").splitlines()[0]
    if screen.busy:
        return f"a step is running ({key('stop')} stops it)"
    if action in ("step", "continue_run"):
        if run.case is None:
            return f"no case yet ({key('edit_case')} writes one)"
        if run.finished:
            return f"the run is over ({key('restart')} starts it again)"
    if action == "pick_judge":
        return "the judge cannot be changed here"
    if action == "pick_case":
        return f"there is no cases file ({key('edit_case')} writes a case)"
    if action == "save_trace":
        return "nothing has run yet"
    return "not available now"


def _key_named(screen: DebuggerScreen) -> Callable[[str], str]:
    keys = {spec.action: (spec.id, spec.key) for spec in DEBUGGER_KEYS}

    def key(action: str) -> str:
        bid, default = keys[action]
        return shown_key(screen.app, bid, default)

    return key


def palette_commands(screen: DebuggerScreen) -> list[PaletteCommand]:
    """Every debugger action as a palette entry, in the order of the key table."""
    out: list[PaletteCommand] = []
    for spec in DEBUGGER_KEYS:
        out.append(PaletteCommand(_title(screen, spec.action), spec.action, spec.id,
                                  shown_key(screen.app, spec.id, spec.key), spec.help,
                                  why_not(screen, spec.action)))
    for number, (pid, name) in enumerate(DEBUGGER_PANES, start=1):
        bid = f"debugger.pane.{pid}"
        out.append(PaletteCommand(f"Show the {name} pane", f"pane('{pid}')", bid,
                                  shown_key(screen.app, bid, str(number)),
                                  f"switch the step view to {name}", None))
    return out


def _ordered(commands: list[PaletteCommand]) -> Iterator[PaletteCommand]:
    """What can run now first, then the rest (each keeps the key table's order)."""
    yield from (c for c in commands if not c.unavailable)
    yield from (c for c in commands if c.unavailable)


class DebuggerCommands(Provider):
    """Palette provider of `DebuggerScreen` (its `COMMANDS`), in `dagtui step` and after F5."""

    def _debugger(self) -> DebuggerScreen | None:
        return _calling(self)

    async def discover(self) -> Hits:
        screen = self._debugger()
        if screen is None:
            return
        for command in _ordered(palette_commands(screen)):
            yield DiscoveryHit(_display(command.title, command), _runner(screen, command),
                               text=command.title, help=command.help)

    async def search(self, query: str) -> Hits:
        screen = self._debugger()
        if screen is None:
            return
        matcher = self.matcher(query)
        for command in palette_commands(screen):
            score = matcher.match(command.title)
            if score <= 0:
                continue
            yield Hit(ranked(score, query, bool(command.unavailable)),
                      _display(matcher.highlight(command.title), command),
                      _runner(screen, command), text=command.title, help=command.help)


def ranked(score: float, query: str, unavailable: bool) -> float:
    """`score` lifted into a tier: what can run now, then what cannot, then the rest.

    Textual lists every provider's hits by score alone, so without tiers the app's own
    commands mix in (after F5 those are the editor's, which are off while the debugger is
    on top) and "step" once the run is over would outrank "restart". Textual's fuzzy
    matcher scores a hit at most 8 per query character (2 per letter, doubled for a first
    letter, at most x2 for a single run and x2 for an exact match), so a tier that starts
    above that keeps each tier's own order.
    """
    ceiling = 8.0 * max(len(query), 1) + 1.0
    return score + (ceiling if unavailable else 2 * ceiling)


def _display(title: str | Content, command: PaletteCommand) -> Content:
    """The entry as listed: dimmed, with a mark, when it cannot run now."""
    shown = Content(title) if isinstance(title, str) else title
    if not command.unavailable:
        return shown
    return shown.stylize("dim") + Content.styled("  (not now)", "dim italic")


def _runner(screen: DebuggerScreen, command: PaletteCommand) -> Callable[[], Any]:
    async def run() -> None:
        # the state may have moved on while the palette was open: ask again
        reason = why_not(screen, command.name) if command.name != "pane" else None
        if reason:
            screen.notify(reason, severity="warning", title=command.title)
            return
        await screen.run_action(command.action)

    return run


class DebuggerNodes(NodeFinder):
    """The run's nodes by id or label: enter selects the node in the path tree and shows
    its step (ranked with the actions that can run now)."""

    def _debugger(self) -> DebuggerScreen | None:
        return _calling(self)

    def graph(self) -> Graph | None:
        screen = self._debugger()
        run = screen.run if screen is not None else None
        return run.graph if run is not None else None

    def jump(self, nid: str) -> None:
        screen = self._debugger()
        if screen is not None:
            screen.query_one(PathTree).select_node(nid)
            screen.query_one(PathTree).focus()

    def rank(self, score: float, query: str) -> float:
        return ranked(score, query, False)

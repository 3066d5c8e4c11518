"""The debugger's command palette (ctrl+p), its F1 list and key remaps, driven by keys.

Each palette test opens the palette, types part of an action's name, presses enter and
checks the run behind the screen changed the way the action's key would change it (the
labels judge answers, so no network).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandList, CommandPalette

from dagtui.judges.labels import LabelsJudge
from dagtui.keyfile import KeymapError, checked_keymap
from dagtui.tui.debugger.screen import WORKER_GROUP, DebuggerScreen
from dagtui.tui.debugger.widgets import StepPanes
from dagtui.tui.keys import DEBUGGER_KEYS, DEBUGGER_PANES, binding_ids
from dagtui.tui.keys import binding_ids as known_binding_ids
from dagtui.tui.screens.dialogs import PickScreen
from dagtui.tui.screens.help import HelpScreen as KeysScreen
from tui.debugger_helpers import SIZE, held_task_app, meeting_app, select, settle
from tui.test_debugger_editor import editor, workdir  # noqa: F401 - workdir is a fixture

pytestmark = pytest.mark.timeout(120)


def entries(app: Any) -> list[tuple[str, str]]:
    """(title, help) of each entry the open palette lists, top first."""
    listing = app.screen.query_one(CommandList)
    out = []
    for index in range(listing.option_count):
        prompt = str(listing.get_option_at_index(index).prompt)
        title, _, help_text = prompt.partition("\n")
        out.append((title, help_text))
    return out


async def palette(app: Any, pilot: Any, query: str, expect: str) -> list[tuple[str, str]]:
    """Open the palette, type `query`, wait until the top entry starts with `expect`.

    With no query the palette lists each provider's entries in the order they arrive, so
    then only the whole list is waited for (`expect` is ignored).
    """
    await pilot.press("ctrl+p")
    await pilot.pause()
    assert isinstance(app.screen, CommandPalette)
    if query:
        await pilot.press(*query)
    deadline = time.monotonic() + 10
    while True:
        await pilot.pause(0.05)
        listed = entries(app)
        if listed and (not query or listed[0][0].startswith(expect)):
            break
        assert time.monotonic() < deadline, f"top entry for {query!r}: {listed[:3]}"
    # the providers answer one by one: let the palette's gathering finish (a judge worker
    # may be held on purpose, so it is not waited for)
    while any(w.group != WORKER_GROUP and not w.is_finished for w in app.workers):
        assert time.monotonic() < deadline, "the palette never finished gathering"
        await pilot.pause(0.05)
    await pilot.pause()
    listed = entries(app)
    assert not query or listed[0][0].startswith(expect), listed[:3]
    return listed


async def press_and_wait(app: Any, pilot: Any, *keys: str) -> Any:
    """Press `keys`, let any judge worker finish; return the screen on top."""
    await pilot.press(*keys)
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app.screen


async def choose(app: Any, pilot: Any, query: str, expect: str) -> DebuggerScreen:
    """Pick the top entry for `query` (it must start with `expect`) and let it finish."""
    await palette(app, pilot, query, expect)
    await pilot.press("enter")
    return await settle(app, pilot)


async def test_typing_step_and_enter_runs_one_node() -> None:
    app = meeting_app(LabelsJudge(), case="intro and body swapped")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = await choose(app, pilot, "step", "Step: run the next node")
        assert [r.node for r in screen.live.records] == ["extract"]
        assert screen.live.next_node() == "present"
        screen = await choose(app, pilot, "step", "Step")
        assert [r.node for r in screen.live.records] == ["extract", "present"]


async def test_breakpoint_from_the_palette_stops_continue_from_the_palette() -> None:
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await select(app, pilot, "order")
        # the entry names the node it acts on
        screen = await choose(app, pilot, "breakpoint on", "Toggle a breakpoint on order")
        assert screen.live.breakpoints == {"order"}
        screen = await choose(app, pilot, "continue", "Continue")
        run = screen.live
        assert [r.node for r in run.records] == ["extract", "present"]
        assert run.next_node() == "order" and not run.finished
        await select(app, pilot, "order")
        screen = await choose(app, pilot, "toggle", "Toggle a breakpoint on order")
        assert screen.live.breakpoints == set()


async def test_step_once_the_run_is_over_is_listed_last_and_says_why() -> None:
    app = meeting_app(LabelsJudge(), case="all headings in order")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        run = screen.live
        assert run.finished and len(run.records) == 3
        said: list[str] = []
        screen.notify = lambda message, **_: said.append(str(message))  # type: ignore[method-assign]
        listed = await palette(app, pilot, "step: run", "Step: run the next node")
        title, help_text = listed[0]
        assert "(not now)" in title and "the run is over (r starts it again)" in help_text
        await pilot.press("enter")
        screen = await settle(app, pilot)
        assert len(screen.live.records) == 3 and screen.live.finished  # nothing ran
        assert said == ["the run is over (r starts it again)"]
        # what can run comes first even where a greyed entry fits the query better
        listed = await palette(app, pilot, "st", "Restart the case")
        mine = [title for title, help_text in listed if "debugger." in help_text]
        greyed = [title for title in mine if title.endswith("(not now)")]
        assert greyed == ["Step: run the next node  (not now)",
                          "Stop the judge call  (not now)"]
        assert mine[-2:] == greyed
        await pilot.press("enter")
        screen = await settle(app, pilot)
        assert screen.live.records == [] and not screen.live.finished


async def test_while_a_step_runs_the_palette_offers_stop_and_says_why_step_waits() -> None:
    app, gate = held_task_app(case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        screen = app.debugger
        assert screen.busy
        listed = await palette(app, pilot, "step: run", "Step: run the next node")
        assert "a step is running (x stops it)" in listed[0][1]
        await pilot.press("escape")
        await pilot.pause()
        await palette(app, pilot, "stop", "Stop the judge call")
        await pilot.press("enter")
        screen = await settle(app, pilot)
        assert not screen.busy and screen.live.records == []
        gate.set()
        screen = await choose(app, pilot, "step", "Step: run the next node")
        assert [r.node for r in screen.live.records] == ["extract"]


async def test_override_from_the_palette_follows_the_other_branch() -> None:
    app = meeting_app(LabelsJudge(), case="all headings in order")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        await select(app, pilot, "present")
        await palette(app, pilot, "what-if", "Override the verdict of present")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PickScreen)
        await pilot.press("enter")  # false: the first verdict listed
        screen = await settle(app, pilot)
        result = screen.live.result()
        assert result.score == 0.0 and result.step("present").source == "override"


async def test_pane_entries_switch_the_step_view() -> None:
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = await choose(app, pilot, "usage pane", "Show the Usage pane")
        assert screen.query_one(StepPanes).active == "usage"


async def test_the_empty_palette_lists_every_action_with_its_key_and_id() -> None:
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        listed = await palette(app, pilot, "", "")
        ids = [h.rsplit("·", 1)[-1].strip() for _t, h in listed if "debugger." in h]
        expected = [bid for bid, *_ in DEBUGGER_KEYS] + [f"debugger.pane.{p}" for p, _ in DEBUGGER_PANES]
        assert sorted(ids) == sorted(expected)
        helps = dict(listed)
        assert "^s  ·  debugger.save_trace" in helps["Save the trace  (not now)"]
        assert helps["Quit the debugger"].endswith("esc  ·  debugger.back")
        # nothing has run: stop and save are last, after everything that can run
        titles = [t for t, h in listed if "debugger." in h]
        unavailable = [t for t in titles if t.endswith("(not now)")]
        assert titles[-len(unavailable):] == unavailable
        assert {"Stop the judge call  (not now)", "Save the trace  (not now)"} <= set(
            unavailable)
        assert "Keys" not in helps  # Textual's own key panel: F1 is the debugger's list


async def test_remapped_keys_move_and_show_everywhere() -> None:
    app = meeting_app(LabelsJudge(), case=0, keymap={"debugger.step": "s"})
    async with app.run_test(size=SIZE) as pilot:
        screen = await settle(app, pilot)
        await pilot.press("n")
        screen = await settle(app, pilot)
        assert screen.live.records == []  # n no longer steps
        await pilot.press("s")
        screen = await settle(app, pilot)
        assert [r.node for r in screen.live.records] == ["extract"]
        listed = await palette(app, pilot, "step", "Step")
        assert listed[0][1].endswith("s  ·  debugger.step")
        await pilot.press("escape")
        await pilot.pause()
        keys = await press_and_wait(app, pilot, "f1")
        assert isinstance(keys, KeysScreen)
        assert keys.key_for("debugger.step") == "s"
        assert keys.key_for("debugger.continue") == "c"


async def test_f1_lists_every_binding_id_and_the_palette_key() -> None:
    app = meeting_app(LabelsJudge(), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        keys = await press_and_wait(app, pilot, "f1")
        assert isinstance(keys, KeysScreen)
        assert keys.binding_ids == binding_ids("debugger")
        assert keys.key_for("debugger.help") == "? or F1"
        rows = [row for _title, section in keys.sections for row in section]
        assert ("^p", "command palette: every action by name", "app.command_palette") in rows
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DebuggerScreen)


def test_step_reads_the_shared_keymap_and_refuses_unknown_ids(tmp_path: Path) -> None:
    missing = tmp_path / "keys.toml"
    env = {"DAGTUI_KEYS": "editor.rename=n; debugger.step=s; debugger.back=q"}
    assert checked_keymap(known_binding_ids, env, missing) == {
        "editor.rename": "n", "debugger.step": "s", "debugger.back": "q"}
    with pytest.raises(KeymapError, match="debugger.stpe"):
        checked_keymap(known_binding_ids, {"DAGTUI_KEYS": "debugger.stpe=s"}, missing)
    assert {"debugger.step", "debugger.tree.down", "debugger.human.pick9",
            "debugger.case.submit", "debugger.pane.usage"} <= binding_ids("debugger")


@pytest.mark.usefixtures("workdir")  # the example graph and its cases in a temp cwd
async def test_f5_in_the_editor_offers_the_debugger_actions() -> None:
    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = await press_and_wait(app, pilot, "f5")
        assert isinstance(screen, DebuggerScreen)
        await palette(app, pilot, "back to", "Back to the editor")
        await pilot.press("escape")
        await pilot.pause()
        # the editor's own actions (its "Open the step debugger") are off while the debugger
        # is on top, so the palette offers only what works here
        listed = await palette(app, pilot, "step", "Step: run the next node")
        assert "Open the step debugger" not in [title for title, _help in listed]
        assert await press_and_wait(app, pilot, "enter") is screen
        assert [r.node for r in screen.live.records] == ["extract"]


@pytest.mark.usefixtures("workdir")
async def test_the_editors_keymap_remaps_the_debugger_it_opens() -> None:
    """`dagtui edit` applies the user's remaps to its whole app: after F5 they reach the
    debugger's bindings too, and its F1 list shows them."""
    app = editor()
    app.set_keymap({"debugger.step": "s", "debugger.help": "f2"})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = await press_and_wait(app, pilot, "f5")
        assert isinstance(screen, DebuggerScreen)
        await press_and_wait(app, pilot, "n", "s")
        assert [r.node for r in screen.live.records] == ["extract"]
        keys = await press_and_wait(app, pilot, "f2")
        assert isinstance(keys, KeysScreen)
        assert keys.key_for("debugger.step") == "s"
        assert keys.key_for("debugger.help") == "F2"

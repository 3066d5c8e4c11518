"""The collector `dagtui edit` pauses before its imports runs again at the app's first frame
(dagtui/tui/startup.py), and never when somebody else had switched it off; the app runs with
a short GIL switch interval, and puts the interpreter's back; a small terminal's size
classes cost the first frame no extra restyle."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from dagtui.tui import startup
from tui.conftest import make_app

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    """Every test leaves the collector as it found it (on), whatever it asserted."""
    yield
    startup._paused = False
    gc.enable()


def test_pause_then_resume_switches_the_collector_off_and_on() -> None:
    startup.pause_collector()
    assert not gc.isenabled()
    startup.resume_collector()
    assert gc.isenabled()
    startup.resume_collector()  # a second resume changes nothing
    assert gc.isenabled()


def test_resume_leaves_a_collector_someone_else_switched_off() -> None:
    gc.disable()
    startup.pause_collector()  # already off: not this module's to turn back on
    startup.resume_collector()
    assert not gc.isenabled()


async def test_the_app_resumes_the_collector_once_its_first_frame_is_shown(
        graph_file: Path) -> None:
    startup.pause_collector()
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert gc.isenabled()


def test_edit_resumes_the_collector_when_it_refuses_to_start(
        graph_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dagtui.cli import main

    # no terminal under pytest: `dagtui edit` refuses after pausing the collector
    assert main(["edit", str(graph_file)]) == 2
    assert "needs an interactive terminal" in capsys.readouterr().err
    assert gc.isenabled()


def test_the_app_runs_with_a_short_switch_interval_and_puts_it_back(graph_file: Path) -> None:
    seen: list[float] = []

    async def look(pilot: Pilot[None]) -> None:
        await pilot.pause()
        seen.append(sys.getswitchinterval())
        pilot.app.exit()

    before = sys.getswitchinterval()
    make_app(graph_file).run(headless=True, size=(80, 24), auto_pilot=look)
    assert seen == [startup.SWITCH_INTERVAL]
    assert sys.getswitchinterval() == before


def test_prompt_frames_never_lengthens_a_shorter_interval() -> None:
    before = sys.getswitchinterval()
    sys.setswitchinterval(startup.SWITCH_INTERVAL / 2)
    try:
        with startup.prompt_frames():
            assert sys.getswitchinterval() == startup.SWITCH_INTERVAL / 2
    finally:
        sys.setswitchinterval(before)


async def _screen_restyles_before_first_frame(graph_file: Path, size: tuple[int, int]) -> int:
    """How often the editor's whole screen was restyled before its first frame, at `size`."""
    from textual import events

    restyled: list[object] = []
    ready = False
    app = make_app(graph_file)
    update_styles, post_message = app.update_styles, app.post_message

    def spy_update(node: object = None, **how: object) -> None:
        if not ready:
            restyled.append(node)
        update_styles(node, **how)  # type: ignore[arg-type]

    def spy_post(message: object) -> bool:
        nonlocal ready
        ready = ready or isinstance(message, events.Ready)
        return post_message(message)  # type: ignore[arg-type]

    app.update_styles = spy_update  # type: ignore[method-assign]
    app.post_message = spy_post  # type: ignore[method-assign]
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert ready
        assert screen.has_class("narrow") == (size[0] < 110)
        assert screen.has_class("short") == (size[1] < 32)
        assert app.query_one("#tree").compact == (size[0] < 110)  # type: ignore[attr-defined]
    return restyled.count(screen)


async def test_a_small_terminal_costs_the_first_frame_no_extra_restyle(graph_file: Path) -> None:
    """The size classes (`short`, `narrow`) are in place before the widgets are styled:
    set on mount instead, they restyled the whole screen before its first frame (twice at
    80x24, against Textual's own once when the screen is shown, as at 120x36)."""
    roomy = await _screen_restyles_before_first_frame(graph_file, (120, 36))
    assert await _screen_restyles_before_first_frame(graph_file, (80, 24)) == roomy
    assert await _screen_restyles_before_first_frame(graph_file, (120, 24)) == roomy

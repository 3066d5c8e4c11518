"""The collector `dagtui edit` pauses before its imports runs again at the app's first frame
(dagtui/tui/startup.py), and never when somebody else had switched it off; the app runs with
a short GIL switch interval, and puts the interpreter's back."""

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

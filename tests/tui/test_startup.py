"""The collector `dagtui edit` pauses before its imports runs again at the app's first frame
(dagtui/tui/startup.py), and never when somebody else had switched it off."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

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

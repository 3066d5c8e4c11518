"""`dagtui step` in a real terminal: tmux runs the installed command at 120×36, the test
presses `c` and reads the result off the screen with capture-pane.

Skipped (with the reason) when tmux or the venv's `dagtui` script is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DAGTUI = ROOT / ".venv" / "bin" / "dagtui"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _tmux(socket: str, *args: str) -> str:
    out = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True,
                         timeout=20)
    return out.stdout


def _wait_for(socket: str, needle: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux(socket, "capture-pane", "-p", "-t", "dbg")
        if needle in screen:
            return screen
        time.sleep(0.25)
    raise AssertionError(f"{needle!r} never appeared; last screen:\n{screen}")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.skipif(not DAGTUI.exists(), reason=f"{DAGTUI} is missing (pip install -e .)")
def test_dagtui_step_in_tmux_runs_to_the_result() -> None:
    socket = f"dagtui-test-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    cmd = f"{DAGTUI} step graphs/meeting_summary.toml --judge labels --case 0"
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "dbg", "-x", "120",
                    "-y", "36", cmd], cwd=ROOT, env=env, check=True, timeout=20)
    try:
        first = _wait_for(socket, "ready: n steps into extract")
        assert "dagtui step" in first and "all headings in order" in first
        _tmux(socket, "send-keys", "-t", "dbg", "c")
        screen = _wait_for(socket, "Result 1.00")
        assert "passes" in screen and "(>= 0.5)" in screen
        assert "step 3/3" in screen
        assert "Correct order" in screen
        _tmux(socket, "send-keys", "-t", "dbg", "Escape")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if "dbg" not in _tmux(socket, "list-sessions"):
                break
            time.sleep(0.25)
        else:
            raise AssertionError("esc did not quit dagtui step")
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=20)

"""The editor in a real terminal: tmux runs `dagtui edit`, we read the screen, type, save,
quit, and diff the file (only the edited line changes; every comment stays)."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tui.conftest import GRAPHS, ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TMUX = shutil.which("tmux")
DAGTUI = ROOT / ".venv" / "bin" / "dagtui"


#: a private tmux server (own socket, no user config) so other sessions cannot resize us
SOCKET = f"dagtui-edit-{uuid.uuid4().hex[:8]}"


def tmux(*args: str) -> str:
    out = subprocess.run(["tmux", "-L", SOCKET, "-f", "/dev/null", *args],
                         capture_output=True, text=True, timeout=10)
    return out.stdout


def wait_for(session: str, predicate, timeout: float = 30.0) -> str:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", session)
        if predicate(screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"timed out; the screen was:\n{screen}")


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)")
@pytest.mark.skipif(not DAGTUI.exists(), reason=f"{DAGTUI} missing: pip install -e . first")
def test_edit_save_quit_in_a_real_terminal(tmp_path: Path) -> None:
    graph = tmp_path / "meeting_summary.toml"
    shutil.copy(GRAPHS / "meeting_summary.toml", graph)
    original = graph.read_text()
    session = f"dagtui-test-{uuid.uuid4().hex[:8]}"
    # start a shell, make sure the window really is 120×36, then start the editor in it
    tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "36", "-c", str(tmp_path))
    try:
        tmux("resize-window", "-t", session, "-x", "120", "-y", "36")
        deadline = time.monotonic() + 10
        while tmux("display", "-p", "-t", session, "#{window_width}x#{window_height}").strip() \
                != "120x36" and time.monotonic() < deadline:
            time.sleep(0.1)
        tmux("send-keys", "-t", session, f"exec {DAGTUI} edit {graph.name}", "Enter")
        wait_for(session, lambda s: all(n in s for n in ("extract", "present", "order"))
                 and "valid" in s)
        tmux("send-keys", "-t", session, "/")
        wait_for(session, lambda s: "Go to node" in s)
        tmux("send-keys", "-t", session, "-l", "order")
        time.sleep(0.5)
        tmux("send-keys", "-t", session, "Enter")
        wait_for(session, lambda s: "order  ·  non_binary" in s and "Go to node" not in s)
        # enter focuses the form; tab moves from `type` to `label`
        tmux("send-keys", "-t", session, "Enter")
        time.sleep(0.3)
        tmux("send-keys", "-t", session, "Tab")
        time.sleep(0.5)
        tmux("send-keys", "-t", session, "End")
        time.sleep(0.2)
        tmux("send-keys", "-t", session, "-l", " (tmux)")
        wait_for(session, lambda s: "Heading order (tmux)" in s and "modified" in s)
        tmux("send-keys", "-t", session, "C-s")
        wait_for(session, lambda s: "saved" in s and "modified" not in s)
        tmux("send-keys", "-t", session, "C-q")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and session in tmux("list-sessions", "-F",
                                                              "#{session_name}"):
            time.sleep(0.2)
    finally:
        tmux("kill-server")
    saved = graph.read_text()
    before, after = original.splitlines(), saved.splitlines()
    assert len(before) == len(after)
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [('label = "Heading order"', 'label = "Heading order (tmux)"')]
    for line in before:
        if line.lstrip().startswith("#"):
            assert line in after

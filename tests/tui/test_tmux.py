"""The editor in a real terminal: tmux runs `dagtui edit`, we read the screen, type, save,
quit, and diff the file (only the edited line changes; every comment stays)."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tui.conftest import GRAPHS, ROOT

#: every wait is on what the screen shows, never a fixed sleep: a busy machine only makes
#: the editor slower to get there, so the deadlines are generous and the test ends sooner
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TMUX = shutil.which("tmux")
DAGTUI = ROOT / ".venv" / "bin" / "dagtui"
#: how long the editor may take to get to each screen on a loaded machine
DEADLINE = 90.0


#: a private tmux server (own socket, no user config) so other sessions cannot resize us
SOCKET = f"dagtui-edit-{uuid.uuid4().hex[:8]}"

#: one SGR escape (`capture-pane -e`): its parameters, `;`-separated
SGR = re.compile(r"\x1b\[([0-9;:]*)m")
#: SGR parameters that carry arguments (colours): how many each takes after `5` or `2`
_COLOUR = {"38", "48", "58"}


def tmux(*args: str) -> str:
    out = subprocess.run(["tmux", "-L", SOCKET, "-f", "/dev/null", *args],
                         capture_output=True, text=True, timeout=60)
    return out.stdout


def wait_for(session: str, predicate: Callable[[str], bool], what: str, *,
             escapes: bool = False, timeout: float = DEADLINE) -> str:
    """The captured pane once `predicate` holds for it (`escapes`: with its SGR escapes,
    `capture-pane -e`); fails saying `what` it waited for and the last screen."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", session)
        if predicate(screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; the screen was:\n"
                         f"{SGR.sub('', screen)}")


def wait_gone(session: str, what: str, *, timeout: float = DEADLINE) -> None:
    """Until `session` has ended (its one pane's program exited); fails saying `what` it
    waited for and the last screen seen."""
    deadline = time.monotonic() + timeout
    screen = ""
    while session in tmux("list-sessions", "-F", "#{session_name}").split():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; the screen was:\n{screen}")
        screen = tmux("capture-pane", "-p", "-t", session) or screen
        time.sleep(0.2)


def bold_runs(screen: str) -> set[str]:
    """The runs of text drawn bold on a `capture-pane -e` screen, stripped. The editor
    draws the name of the focused field bold (editor.tcss), so this says where typing lands
    without reading colours, which a theme may change."""
    runs: set[str] = set()
    bold = False
    for line in screen.splitlines():
        run: list[str] = []
        pos = 0
        for match in [*SGR.finditer(line), None]:
            end = match.start() if match else len(line)
            if bold:
                run.append(line[pos:end])
            if match is None:
                break
            pos = match.end()
            codes = match.group(1).replace(":", ";").split(";")
            i = 0
            while i < len(codes):
                code = codes[i] or "0"
                if code in _COLOUR and i + 1 < len(codes):
                    i += 3 if codes[i + 1] == "5" else 5 if codes[i + 1] == "2" else 1
                    continue
                if code == "1":
                    bold = True
                elif code in ("0", "22"):
                    if bold and "".join(run).strip():
                        runs.add("".join(run).strip())
                    bold, run = False, []
                i += 1
        if bold and "".join(run).strip():
            runs.add("".join(run).strip())
    return runs


def focused_field(name: str) -> Callable[[str], bool]:
    """The form's field `name` has the focus (its name is drawn bold)."""
    return lambda screen: name in bold_runs(screen)


def test_bold_runs_reads_the_sgr_escapes() -> None:
    """Bold on and off, colours whose arguments hold a 1 (not bold), a reset at line end."""
    line = ("\x1b[38;5;1mred\x1b[1m\x1b[38;5;222mtype\x1b[0m  \x1b[38;2;1;1;1mlabel"
            "\x1b[1m order \x1b[22mplain\x1b[1mtail")
    assert bold_runs(line) == {"type", "order", "tail"}


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
        deadline = time.monotonic() + DEADLINE
        while (size := tmux("display", "-p", "-t", session,
                            "#{window_width}x#{window_height}").strip()) != "120x36":
            assert time.monotonic() < deadline, f"the window stayed {size}, not 120x36"
            time.sleep(0.1)
        tmux("send-keys", "-t", session, f"exec {DAGTUI} edit {graph.name}", "Enter")
        wait_for(session, lambda s: all(n in s for n in ("extract", "present", "order"))
                 and "valid" in s, "the editor with the graph drawn and checked")
        tmux("send-keys", "-t", session, "/")
        wait_for(session, lambda s: "Go to node" in s, "the go-to-node palette")
        tmux("send-keys", "-t", session, "-l", "order")
        # enter picks the highlighted match: only once the list shows `order` alone
        wait_for(session, lambda s: "go to node order" in s and "go to node present" not in s
                 and "go to node extract" not in s, "the palette listing node order alone")
        tmux("send-keys", "-t", session, "Enter")
        wait_for(session, lambda s: "order  ·  non_binary" in s and "Go to node" not in s,
                 "node order in the form, the palette closed")
        # enter focuses the form (its first field, `type`); tab moves on to `label`
        tmux("send-keys", "-t", session, "Enter")
        wait_for(session, focused_field("type"), "the focus on the field type", escapes=True)
        tmux("send-keys", "-t", session, "Tab")
        wait_for(session, focused_field("label"), "the focus on the field label",
                 escapes=True)
        # tabbing in selected the label's text, so what is typed replaces it; the keys go
        # straight to the field, in order (no `end` first: the field's `end` binding acts
        # only after the key has bubbled up to the app, so text typed right behind it on a
        # busy machine can land before it, over the selection)
        tmux("send-keys", "-t", session, "-l", "Heading order (tmux)")
        wait_for(session, lambda s: "Heading order (tmux)" in s and "modified" in s,
                 "the edited label, unsaved")
        tmux("send-keys", "-t", session, "C-s")
        wait_for(session, lambda s: "saved" in s and "modified" not in s, "the save")
        tmux("send-keys", "-t", session, "C-q")
        # the editor was exec'd in place of the shell, so quitting ends the pane and with it
        # the session; a question or a hang would leave the screen up
        wait_gone(session, "ctrl+q after the save to end the editor")
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

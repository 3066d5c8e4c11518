"""SVG snapshots of the editor's main states at a fixed 120×36 size, cursor blink off.

Regenerate after an intended visual change with
`.venv/bin/pytest tests/tui/test_snapshots.py --snapshot-update` and review the SVGs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tui.conftest import GRAPHS, SIZE

pytestmark = pytest.mark.timeout(120)

BROKEN_REFS = """\
# references that do not resolve, and a binary node with two true verdicts
[metric]
name = "Broken"
threshold = 0.5

[nodes.extract]
type = "task"
instructions = "List the claims."
output_label = "Claims"
params = ["actual_output"]
children = ["judge", "missing_child"]

[nodes.judge]
type = "binary"
criteria = "Are the claims supported?"
verdicts = [
  { verdict = true, score = 10 },
  { verdict = true, then = "nowhere" },
]
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(GRAPHS / "meeting_summary.toml", tmp_path / "meeting_summary.toml")
    (tmp_path / "broken.toml").write_text(BROKEN_REFS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def app_for(name: str):  # type: ignore[no-untyped-def]
    from dagtui.tui.app import editor_app

    return editor_app(name, poll_interval=0, cursor_blink=False)


async def checked(pilot) -> None:  # type: ignore[no-untyped-def]
    """Before the keys: wait for the first validation (it runs right after the first
    frame), so the picture never depends on timing."""
    await pilot.app.editor.first_check_done.wait()
    await pilot.pause()


def test_editor_meeting_summary(workdir: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app_for("meeting_summary.toml"), terminal_size=SIZE,
                        run_before=checked, press=["j", "j"])


def test_problems_on_a_broken_graph(workdir: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app_for("broken.toml"), terminal_size=SIZE,
                        run_before=checked, press=["j", "j"])


def test_graph_view(workdir: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app_for("meeting_summary.toml"), terminal_size=SIZE, run_before=checked,
                        press=["g", "g"])


def test_help(workdir: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app_for("meeting_summary.toml"), terminal_size=SIZE, run_before=checked,
                        press=["f1"])


def test_editor_at_80x24(workdir: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    """A small terminal: the panels give way to the tree and the form; the footer fits."""
    assert snap_compare(app_for("meeting_summary.toml"), terminal_size=(80, 24),
                        run_before=checked, press=["j", "j"])

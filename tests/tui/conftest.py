"""Shared fixtures for the editor tests: a temp copy of an example graph and an app driver."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GRAPHS = ROOT / "graphs"
SIZE = (120, 36)


@pytest.fixture
def graph_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of graphs/meeting_summary.toml in a temp dir that is also the cwd (so the
    header shows a short, stable relative path)."""
    target = tmp_path / "meeting_summary.toml"
    shutil.copy(GRAPHS / "meeting_summary.toml", target)
    monkeypatch.chdir(tmp_path)
    return target


def make_app(path: Path | str, **kwargs):  # type: ignore[no-untyped-def]
    from dagtui.tui.app import editor_app

    kwargs.setdefault("poll_interval", 0)
    kwargs.setdefault("cursor_blink", False)
    return editor_app(Path(path).name if Path(path).parent == Path.cwd() else path, **kwargs)

"""`dagtui edit` opens graphs in the graph editor and suite files in the suite view."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dagtui import cli

ROOT = Path(__file__).resolve().parents[1]


class _Tty:
    def isatty(self) -> bool:
        return True


def test_suite_file_routes_to_the_suite_view(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    import dagtui.tui.app as tui_app

    class Started:
        def run(self) -> None:
            return None

    monkeypatch.setattr(tui_app, "suite_app",
                        lambda path, **_: opened.append(str(path)) or Started())
    monkeypatch.setattr(sys, "stdin", _Tty())
    monkeypatch.setattr(sys, "stdout", _Tty())
    suite = str(ROOT / "graphs" / "suites" / "spans.toml")
    assert cli.main(["edit", suite]) == 0
    assert opened == [suite]


def test_edit_without_a_terminal_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["edit", str(ROOT / "graphs" / "meeting_summary.toml")]) == 2
    assert "interactive terminal" in capsys.readouterr().err

"""`dagtui serve`: the command line around textual-serve (the browser itself:
tests/tui/test_serve_browser.py)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from dagtui.cli import main
from dagtui.commands.serve import MISSING, edit_command


def test_without_textual_serve_it_names_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "textual_serve", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    assert main(["serve", str(tmp_path / "g.toml")]) == 2
    err = capsys.readouterr().err
    assert MISSING in err and "pip install 'dagtui[serve]'" in err


def test_bad_port_and_unknown_starter_are_usage_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["serve", "g.toml", "--port", "0"])
    assert exc.value.code == 2
    assert "--port: must be a port number 1..65535, got '0'" in capsys.readouterr().err
    assert main(["serve", str(tmp_path / "g.toml"), "--starter", "nope"]) == 2
    assert "unknown starter 'nope'" in capsys.readouterr().err


def test_each_page_runs_dagtui_edit_with_the_same_options() -> None:
    args = argparse.Namespace(graph="my graph.toml", starter="blank", allow_python=True,
                              python_path=["lib"])
    assert edit_command(args) == [sys.executable, "-m", "dagtui", "edit", "my graph.toml",
                                  "--starter", "blank", "--allow-python", "--python-path", "lib"]


def test_the_page_is_served(tmp_path: Path) -> None:
    pytest.importorskip("textual_serve", reason="textual-serve is not installed (dagtui[serve])")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "dagtui", "serve", "g.toml", "--port",
                             str(port)], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as r:
                    page = r.read().decode()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                assert time.monotonic() < deadline, "dagtui serve did not answer"
                time.sleep(0.2)
        assert "textual.js" in page  # the terminal in the page; the app starts when it connects
    finally:
        proc.terminate()
        proc.wait(timeout=10)

"""`dagtui serve`: the command line around textual-serve (who may drive it:
tests/test_serve_guard.py; the browser itself: tests/tui/test_serve_browser.py)."""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from serve_helpers import serving, wait_http

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
    # -P: the working directory stays off the import path (tests/test_serve_guard.py)
    assert edit_command(args) == [sys.executable, "-P", "-m", "dagtui", "edit", "my graph.toml",
                                  "--starter", "blank", "--allow-python", "--python-path", "lib"]


def test_the_page_is_served_at_the_printed_address(tmp_path: Path) -> None:
    pytest.importorskip("textual_serve", reason="textual-serve is not installed (dagtui[serve])")
    with serving(tmp_path, "g.toml") as served:
        assert served.url.startswith(f"http://127.0.0.1:{served.port}/?token=")
        # the terminal in the page; the app starts when it connects
        assert "textual.js" in wait_http(served.url, 10)


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("textual_serve", reason="textual-serve is not installed (dagtui[serve])")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-P", "-m", "dagtui", "serve", "g.toml",
                               "--port", str(port)], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert f"dagtui serve: cannot listen on 127.0.0.1:{port}:" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "http://" not in done.stdout  # no address that would not answer

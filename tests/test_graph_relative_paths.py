"""Paths a graph or a suite names (issue #21, 11e; docs/format.md "Paths a graph or suite file
names"): they may leave the file's folder (`../`, absolute), and each is read through the one
input reader, so a FIFO there is refused unread, as on the command line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from stub_server import StubServer

from dagtui.cli import main

pytestmark = pytest.mark.timeout(60)  # a FIFO read would block: fail, do not wait

ROOT = Path(__file__).resolve().parent.parent
MEETING = ROOT / "graphs" / "meeting_summary.toml"
CASES = ROOT / "graphs" / "meeting_summary.cases.jsonl"
MODEL = "openai/gpt-4.1-mini"


def _graph(tmp_path: Path, cases: str) -> Path:
    (tmp_path / "graphs").mkdir(exist_ok=True)
    graph = tmp_path / "graphs" / "g.toml"
    graph.write_text(MEETING.read_text().replace("meeting_summary.cases.jsonl", cases))
    return graph


def _run(stub: StubServer, target: Path) -> int:
    return main(["run", str(target), "--model", MODEL, "--api-base", stub.base_url,
                 "--no-cache", "-q"])


def test_cases_outside_the_graph_folder_are_read(tmp_path: Path, capsys,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    (tmp_path / "data").mkdir()
    shutil.copy(CASES, tmp_path / "data" / "c.jsonl")
    with StubServer() as stub:
        assert _run(stub, _graph(tmp_path, "../data/c.jsonl")) == 0
        assert _run(stub, _graph(tmp_path, str(tmp_path / "data" / "c.jsonl"))) == 0
        assert stub.calls > 0
    assert capsys.readouterr().out.count("6 cases, 6 passed") == 2


def test_a_fifo_reached_through_dotdot_is_refused_unread(tmp_path: Path, capsys) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    with StubServer() as stub:
        code = _run(stub, _graph(tmp_path, "../pipe.jsonl"))
        assert stub.calls == 0
    err = capsys.readouterr().err
    assert code == 2 and "pipe.jsonl" in err and "FIFO" in err, err


def test_a_suite_graph_and_cases_outside_its_folder(tmp_path: Path, capsys,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    (tmp_path / "common").mkdir()
    shutil.copy(MEETING, tmp_path / "common" / "meeting.toml")
    shutil.copy(CASES, tmp_path / "common" / "c.jsonl")
    (tmp_path / "suites").mkdir()
    suite = tmp_path / "suites" / "s.toml"
    suite.write_text('[suite]\nname = "s"\ncases = "../common/c.jsonl"\n\n'
                     '[rules.meeting]\ngraph = "../common/meeting.toml"\n')
    with StubServer() as stub:
        assert _run(stub, suite) == 0
        assert stub.calls > 0
    os.mkfifo(tmp_path / "common" / "pipe.toml")
    suite.write_text(suite.read_text().replace("meeting.toml", "pipe.toml"))
    with StubServer() as stub:
        code = _run(stub, suite)
        assert stub.calls == 0
    out = capsys.readouterr()
    assert code in (1, 2) and "pipe.toml" in out.err and "FIFO" in out.err, out.err

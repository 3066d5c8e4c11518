"""What `dagtui run` writes: `X.results.jsonl` goes through the safe writer (a FIFO or a
read-only file there is refused before any judge call, a full disk while it is put in place is
one line and exit 2), and no output may be an input or another output (issue #21, 9 and 11b).
Judge calls go to the loopback stub and are counted there."""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from stub_server import StubServer
from test_hostile_io import CASES, MEETING, MODEL, SUITE, cli

from dagtui import safewrite
from dagtui.report.stream import ResultsStream
from dagtui.report.trace import RunResult

pytestmark = pytest.mark.timeout(90)  # a regression blocks on a FIFO: fail, do not wait


def run_graph(capsys: pytest.CaptureFixture[str], stub: StubServer, *extra: object,
              graph: object = MEETING) -> tuple[int, str]:
    return cli(capsys, "run", graph, "--model", MODEL, "--api-base", stub.base_url,
               "--no-cache", "-q", *extra)


# -- 9: the results file --------------------------------------------------------------------

def test_a_fifo_at_the_results_file_is_refused_before_any_call(capsys, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "out.results.jsonl")
    with StubServer() as stub:
        code, out = run_graph(capsys, stub, "--json", tmp_path / "out.json")
        assert stub.calls == 0
    assert code == 2
    assert "results file" in out and "is a FIFO" in out, out
    assert stat.S_ISFIFO(os.stat(tmp_path / "out.results.jsonl").st_mode)
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("via_link", [False, True], ids=["file", "symlink"])
def test_a_read_only_results_file_is_not_overwritten(capsys, tmp_path: Path,
                                                     via_link: bool) -> None:
    kept = tmp_path / "kept.jsonl"
    kept.write_text("precious\n")
    kept.chmod(0o444)
    target = tmp_path / "out.results.jsonl"
    if via_link:
        target.symlink_to(kept)
    else:
        kept.rename(target)
        kept = target
    with StubServer() as stub:
        code, out = run_graph(capsys, stub, "--json", tmp_path / "out.json")
        assert stub.calls == 0
    assert code == 2 and "read-only" in out, out
    assert kept.read_text() == "precious\n"
    assert target.is_symlink() is via_link


def test_a_full_disk_while_the_results_file_is_put_in_place_is_one_line(
        capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC from the results file's last fsync (the moment the old open() printed a
    traceback on close): exit 2 with a message, the previous file left whole."""
    target = tmp_path / "out.results.jsonl"
    target.write_text("the previous run\n")
    real_fsync = os.fsync

    def full_disk(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp") and ".results.jsonl" in \
                os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(safewrite.os, "fsync", full_disk)
    with StubServer() as stub:
        code, out = run_graph(capsys, stub, "--json", tmp_path / "out.json")
    assert code == 2
    assert "cannot write a report" in out and "No space left on device" in out, out
    assert "Traceback" not in out
    assert target.read_text() == "the previous run\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_run_writes_its_results_file_through_the_safe_writer(capsys, tmp_path: Path) -> None:
    """A symlinked results file is followed (the link stays), its mode is kept, and no
    temp file is left beside it."""
    real = tmp_path / "elsewhere.jsonl"
    real.write_text("old\n")
    real.chmod(0o640)
    (tmp_path / "out.results.jsonl").symlink_to(real)
    with StubServer() as stub:
        code, _ = run_graph(capsys, stub, "--json", tmp_path / "out.json")
    assert code == 0
    lines = [json.loads(line) for line in real.read_text().splitlines()]
    assert len(lines) == 6 and all("steps" in line for line in lines)
    assert (tmp_path / "out.results.jsonl").is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "elsewhere.jsonl", "out.json", "out.results.jsonl"]


def test_a_stopped_run_keeps_every_finished_case(tmp_path: Path) -> None:
    """Ctrl-C on its way up: `close` still puts the lines written so far in place."""
    target = tmp_path / "r.results.jsonl"
    with pytest.raises(KeyboardInterrupt), ResultsStream(target) as stream:
        stream.write(RunResult(case="one", score=1.0, success=True))
        stream.write(RunResult(case="two", score=0.0, success=False))
        assert not target.exists()  # lines go to the temp file beside it meanwhile
        raise KeyboardInterrupt
    assert [json.loads(line)["case"] for line in target.read_text().splitlines()] == [
        "one", "two"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.results.jsonl"]


def test_a_suite_run_refuses_a_fifo_at_its_results_file(capsys, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "s.results.jsonl")
    with StubServer() as stub:
        code, out = cli(capsys, "run", SUITE, "--model", MODEL, "--api-base", stub.base_url,
                        "--no-cache", "-q", "--json", tmp_path / "s.json")
        assert stub.calls == 0
    assert code == 2 and "is a FIFO" in out, out


# -- 11b: an output that is an input, or another output -------------------------------------

@pytest.fixture
def graph_dir(tmp_path: Path) -> Path:
    """The example graph and its cases, copied: a test that fails must not eat them."""
    shutil.copy(MEETING, tmp_path / "g.toml")
    text = (tmp_path / "g.toml").read_text()
    (tmp_path / "g.toml").write_text(text.replace("meeting_summary.cases.jsonl", "c.jsonl"))
    shutil.copy(CASES, tmp_path / "c.jsonl")
    return tmp_path


def test_run_outputs_that_name_an_input_or_each_other_are_refused(capsys,
                                                                  graph_dir: Path) -> None:
    graph, cases = graph_dir / "g.toml", graph_dir / "c.jsonl"
    before = {p: p.read_bytes() for p in (graph, cases)}
    (graph_dir / "link.json").symlink_to(cases)
    attempts = [
        (["--json", graph], "--json", "is the graph file"),
        (["--junit", cases], "--junit", "is the cases file"),
        (["--json", graph_dir / "link.json"], "--json", "is the cases file"),
        (["--json", graph_dir / "sub" / ".." / "c.jsonl"], "--json", "is the cases file"),
        (["--json", graph_dir / "r.json", "--junit", graph_dir / "r.json"], "--junit",
         "is the same file as --json"),
        (["--json", graph_dir / "r.json", "--junit", graph_dir / "r.results.jsonl"],
         "--json's results file", "is the same file as --junit"),
        (["--cases", cases, "--json", graph_dir / "c.json"], None, None),  # c.results.jsonl
    ]
    (graph_dir / "sub").mkdir()
    with StubServer() as stub:
        for extra, flag, words in attempts[:-1]:
            code, out = run_graph(capsys, stub, *extra, graph=graph)
            assert code == 2, (extra, out)
            assert flag in out and words in out, (extra, out)
        assert stub.calls == 0
        for p, data in before.items():
            assert p.read_bytes() == data
        # /dev/null may take every report; a file next to an input is no clash
        code, out = run_graph(capsys, stub, "--json", "/dev/null", "--junit", "/dev/null",
                              graph=graph)
        assert code == 0, out


def test_other_commands_refuse_an_output_that_is_an_input(capsys, graph_dir: Path) -> None:
    graph, cases = graph_dir / "g.toml", graph_dir / "c.jsonl"
    before = {p: p.read_bytes() for p in (graph, cases)}
    code, out = cli(capsys, "export", graph, "--to", "mermaid", "-o", graph)
    assert code == 2 and "-o" in out and "is the graph file" in out, out
    with StubServer() as stub:
        code, out = cli(capsys, "calibrate", graph, "--model", MODEL, "--api-base",
                        stub.base_url, "--no-cache", "--markdown", cases)
        assert code == 2 and "--markdown" in out and "is the cases file" in out, out
        code, out = cli(capsys, "calibrate", graph, "--model", MODEL, "--api-base",
                        stub.base_url, "--no-cache", "--markdown", graph_dir / "x",
                        "--json", graph_dir / "x")
        assert code == 2 and "is the same file as --json" in out, out
        assert stub.calls == 0
    for p, data in before.items():
        assert p.read_bytes() == data
    report = graph_dir / "s1.json"
    report.write_text('{"metric": "m", "results": []}')
    code, out = cli(capsys, "merge", report, "--json", report)
    assert code == 2 and "is the report #1" in out, out
    assert report.read_text() == '{"metric": "m", "results": []}'

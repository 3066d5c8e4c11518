"""One process reads a graph file once, parses it once, validates it once and analyses its
paths once (`dagtui.graph.analysed`): counted for `dagtui run` (graphs and suites) and `dagtui
calibrate` against the loopback stub, `dagtui test`, `dagtui validate`, `dagtui step`, the
editor's F5 and the Python API."""

from __future__ import annotations

import collections
import contextlib
import os
import sys
import threading
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from stub_server import StubServer

import dagtui.graph.paths
import dagtui.graph.validate.driver
import dagtui.inputs
from dagtui.cli import main

ROOT = Path(__file__).resolve().parent.parent
GRAPH = ROOT / "graphs" / "meeting_summary.toml"
CASES = ROOT / "graphs" / "meeting_summary.cases.jsonl"


@contextlib.contextmanager
def counting(*files: Path, key: Callable[[str, str], Any] = lambda what, name: (what, name)
             ) -> Iterator[collections.Counter[Any]]:
    """Reads of `files`, parses of their text, validations and path analyses of the graphs
    they hold, counted under `key(what, file name)` by a profile hook on the functions themselves, so
    no way of calling them (an imported name, a default argument, a worker thread) escapes
    the count. A validation or analysis of a graph from none of the files (built in memory,
    its path unset) counts under the name ""."""
    tally: collections.Counter[Any] = collections.Counter()
    names = {str(f): f.name for f in files}
    texts = {f.read_text(encoding="utf-8").lstrip("\ufeff"): f.name for f in files}
    codes = {dagtui.inputs.read_bytes_stat.__code__: "read", tomllib.loads.__code__: "parse",
             dagtui.graph.validate.driver._run.__code__: "validate",
             dagtui.graph.paths.analyze.__code__: "analyze"}

    def hook(frame: FrameType, event: str, arg: object) -> None:
        what = codes.get(frame.f_code) if event == "call" else None
        if what == "read":
            name = names.get(os.path.abspath(frame.f_locals["path"]))
        elif what == "parse":
            name = texts.get(frame.f_locals["s"].lstrip("\ufeff"))
        elif what in ("validate", "analyze"):
            path = getattr(frame.f_locals["graph"], "path", None)
            name = names.get(os.path.abspath(path), "") if path else ""
        else:
            return
        if name is not None:
            tally[key(what, name)] += 1

    sys.setprofile(hook)
    threading.setprofile(hook)
    try:
        yield tally
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


@pytest.fixture
def counts() -> Iterator[collections.Counter[str]]:
    """Reads of GRAPH, parses of its text, validations and path analyses (of any graph), by
    what alone."""
    with counting(GRAPH, key=lambda what, name: what) as tally:
        yield tally


ONCE = {"read": 1, "parse": 1, "validate": 1, "analyze": 1}


@pytest.mark.parametrize("extra", [[], ["--cases", str(CASES)]], ids=["metric-cases", "cases"])
def test_run_reads_parses_and_analyses_the_graph_once(
        counts: collections.Counter[str], extra: list[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    with StubServer() as stub:
        code = main(["run", str(GRAPH), "--model", "openai/gpt-4.1-mini", "--api-base",
                     stub.base_url, "--no-cache", "-q", *extra])
    assert code == 0
    assert dict(counts) == ONCE


def test_validate_reads_parses_and_analyses_once(counts: collections.Counter[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--paths", str(GRAPH)]) == 0
    assert dict(counts) == ONCE


def test_the_api_checks_once_and_its_engines_trust_it(counts: collections.Counter[str]
                                                      ) -> None:
    import dagtui

    graph = dagtui.load(GRAPH)
    report = dagtui.evaluate(graph, judge="labels")
    assert report.results and graph.engine("labels").graph is graph.graph
    assert dict(counts) == ONCE


def test_a_directory_search_reads_each_graph_once(counts: collections.Counter[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`dagtui validate DIR` reads a file to know it is a graph, then checks that read."""
    main(["validate", str(GRAPH.parent)])
    assert (counts["read"], counts["parse"]) == (1, 1)


def test_labels_test_reads_parses_and_analyses_the_graph_once(
        counts: collections.Counter[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The labels test's engine trusts the check `dagtui test` made."""
    main(["test", str(GRAPH)])
    assert dict(counts) == ONCE


@pytest.mark.parametrize("extra", [["--dry-run"], []], ids=["dry-run", "full"])
def test_calibrate_reads_parses_and_analyses_the_graph_once(
        counts: collections.Counter[str], extra: list[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A full calibration's three engines (free, forced, labels) trust one check."""
    monkeypatch.chdir(tmp_path)  # the saved result goes under .dagtui/ here
    monkeypatch.setenv("CI", "1")
    with StubServer() as stub:
        code = main(["calibrate", str(GRAPH), "--model", "openai/gpt-4.1-mini", "--api-base",
                     stub.base_url, "--no-cache", *extra])
    assert code == 0
    assert dict(counts) == ONCE


def test_assert_graph_checks_the_file_once(counts: collections.Counter[str], tmp_path: Path
                                           ) -> None:
    from dagtui.integrations.common import _GRAPHS
    from dagtui.testing import assert_graph

    _GRAPHS.clear()  # loaded once per file version: start from none
    case = {"name": "weekly", "actual_output": "# Intro\n# Body\n# Conclusion",
            "expected": {"extract": "Intro, Body, Conclusion", "present": True,
                         "order": "Correct order"}}
    for _ in range(2):
        assert_graph(GRAPH, case, judge="labels", trace_dir=tmp_path)
    assert dict(counts) == ONCE


async def test_step_checks_once_up_to_the_open_debugger(counts: collections.Counter[str]
                                                        ) -> None:
    import argparse

    from dagtui.commands.step import prepare
    from dagtui.tui.app import debugger_app

    ready, code = prepare(argparse.Namespace(
        graph=str(GRAPH), case=None, cases=None, judge="labels", model=None, api_base=None,
        no_cache=True, refresh=False, trace=None, allow_python=False, python_path=None))
    assert ready is not None and code == 0
    app = debugger_app(ready.pop("graph"), ready.pop("graph_path"), **ready)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert app.screen.live is not None
    assert dict(counts) == ONCE


SUITE = ROOT / "graphs" / "suites" / "spans.toml"
RULE_GRAPHS = [SUITE.parent / "correctness.toml", SUITE.parent / "deep_analysis.toml"]
#: a suite command's counts: the suite file read and parsed once, each rule graph checked once
SUITE_ONCE = {("read", SUITE.name): 1, ("parse", SUITE.name): 1,
              **{(what, g.name): 1 for g in RULE_GRAPHS for what in ONCE}}


def test_a_suite_run_reads_parses_and_analyses_each_file_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    """`dagtui run SUITE`: the suite file read and parsed once (the run command's read,
    handed to the suite loader), each rule graph read, parsed and analysed once (the
    suite's facts about a rule come from its validation's path report)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    with counting(SUITE, *RULE_GRAPHS) as tally, StubServer() as stub:
        code = main(["run", str(SUITE), "--model", "openai/gpt-4.1-mini", "--api-base",
                     stub.base_url, "--no-cache", "-q"])
    assert code in (0, 1)  # some spans fail their rules: the counts are the point
    assert dict(tally) == SUITE_ONCE


async def test_f5_trusts_the_editors_current_check(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The editor validated the graph (in its worker) when it opened: the debugger F5 opens
    runs on that check. After an edit whose validation has not run yet, F5 validates
    (once: the editor settles it and the debugger trusts that)."""
    import shutil

    from dagtui.tui.app import editor_app
    from dagtui.tui.debugger.screen import DebuggerScreen

    graph = tmp_path / GRAPH.name
    shutil.copy(GRAPH, graph)
    shutil.copy(CASES, tmp_path / CASES.name)
    monkeypatch.chdir(tmp_path)
    with counting(graph, key=lambda what, name: what) as tally:
        app = editor_app(GRAPH.name, poll_interval=0, cursor_blink=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("f5")
            await pilot.pause()
            assert isinstance(app.screen, DebuggerScreen) and app.screen.live is not None
            assert dict(tally) == ONCE
            await pilot.press("escape")
            await pilot.pause()
            app.editor.state.check_later = lambda: None  # an edit whose worker has not run yet
            app.editor.state.set_field("present", "criteria", "Are all three headings there?")
            assert app.editor.state.stale
            await pilot.press("f5")
            await pilot.pause()
            assert isinstance(app.screen, DebuggerScreen) and app.screen.live is not None
    assert tally["validate"] == 2


def test_a_suite_labels_test_reads_and_parses_the_suite_once(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`dagtui test SUITE`: the read that told the command it is a suite is the one the
    suite loader uses; each rule graph read, parsed, validated and analysed once."""
    with counting(SUITE, *RULE_GRAPHS) as tally:
        assert main(["test", str(SUITE)]) == 0
    assert dict(tally) == SUITE_ONCE


def test_validating_a_suite_reads_and_parses_it_once(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`dagtui validate SUITE`: the read that told it the file is a suite is validated."""
    with counting(SUITE, *RULE_GRAPHS) as tally:
        assert main(["validate", str(SUITE)]) == 0
    assert dict(tally) == SUITE_ONCE


def test_run_compiles_the_graph_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Engine takes the Topology its CheckedGraph's validation built (`dagtui.graph.analysed`),
    so one `dagtui run` compiles the graph's edges once."""
    import dagtui.run.schedule

    built: list[object] = []
    of = dagtui.run.schedule.Topology.of.__func__  # type: ignore[attr-defined]

    def counted(cls, graph, parents=None):  # type: ignore[no-untyped-def]
        built.append(graph)
        return of(cls, graph, parents)

    monkeypatch.setattr(dagtui.run.schedule.Topology, "of", classmethod(counted))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    with StubServer() as stub:
        code = main(["run", str(GRAPH), "--model", "openai/gpt-4.1-mini", "--api-base",
                     stub.base_url, "--no-cache", "-q"])
    assert code == 0
    assert len(built) == 1

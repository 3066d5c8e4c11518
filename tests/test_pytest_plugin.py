"""`dagtui.testing.assert_graph` and the pytest plugin's `dagtui_graph` fixture.

The plugin is exercised by pytest itself (`pytester`): a test file using the fixture runs in a
fresh pytest session against the loopback stub judge (tests/stub_server.py), and the report
it prints must show the path taken, every node's verdict and reason, and the trace file; the
stub counts the calls, and a second session is served from the cache.
"""

from __future__ import annotations

import json
import shutil
import textwrap
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from meeting_judge import BAD, GOOD, MEETING, headings_judge
from stub_server import StubServer

from dagtui.testing import GraphAssertionError, assert_graph

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent


def test_assert_graph_passes_and_returns_the_result(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    case = {**GOOD, "expected": {"extract": "Intro\nBody\nConclusion", "present": True,
                                 "order": "Correct order"}}
    result = assert_graph(MEETING, case, judge="labels")
    assert result.score == 1.0 and result.calls == 0
    assert (tmp_path / ".dagtui" / "traces" / "meeting_summary.good.trace.json").is_file()


def test_a_failure_explains_the_path_verdicts_reasons_and_trace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with StubServer(headings_judge()) as stub, pytest.raises(GraphAssertionError) as info:
        assert_graph(MEETING, BAD, judge="openai/gpt-4.1-mini", api_base=stub.base_url,
                     api_key="test", cache=False)
    message = str(info.value)
    assert "case 'bad one' failed the graph" in message
    assert "score 0.00 (threshold 0.5)" in message
    assert "path: extract ; present=false → score 0" in message
    assert "present (binary): false — the Conclusion heading is missing" in message
    assert "extract (task): Intro ⏎ Body — headings found" in message
    trace = tmp_path / ".dagtui" / "traces" / "meeting_summary.bad-one.trace.json"
    assert "trace: .dagtui/traces/meeting_summary.bad-one.trace.json" in message
    assert json.loads(trace.read_text())["result"]["score"] == 0.0
    assert info.value.result.calls == stub.calls == 2


def test_expectations_other_than_passing() -> None:
    case = {**BAD, "expected": {"extract": "Intro\nBody", "present": False}}
    assert_graph(MEETING, case, judge="labels", passes=False, score=0.0, trace_dir=None)
    with pytest.raises(GraphAssertionError, match="passed the graph, wanted it to fail"):
        assert_graph(MEETING, {**GOOD, "expected": {"extract": "x", "present": True,
                                                    "order": "Correct order"}},
                     judge="labels", passes=False)
    with pytest.raises(GraphAssertionError, match="score 0.4, wanted 1"):
        assert_graph(MEETING, {**GOOD, "expected": {"extract": "x", "present": True,
                                                    "order": "Two headings swapped"}},
                     judge="labels", passes=None, score=1.0)


#: an installed dagtui brings the plugin by its entry point; a checkout that was not
#: reinstalled since the entry point was added needs it named (naming it twice is an error)
INSTALLED = any(ep.name == "dagtui" for ep in entry_points(group="pytest11"))
#: the inner sessions leave out the snapshot plugin, whose session-end hook assumes it is alone
INNER = (*(() if INSTALLED else ("-p", "dagtui.integrations.pytest_plugin")),
         "-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-p", "no:asyncio")

TEST_FILE = """
    GRAPH = {graph!r}

    def test_good(dagtui_graph):
        result = dagtui_graph(GRAPH).check({good!r}, api_key="test")
        assert result.score == 1.0

    def test_bad(dagtui_graph):
        dagtui_graph(GRAPH).check({bad!r}, api_key="test")
"""


def test_the_plugin_under_pytest(pytester: pytest.Pytester,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # the graph's own .dagtui/ (beside it: none above) keeps the traces and the cache
    monkeypatch.delenv("DAGTUI_DIR")
    graph = pytester.path / "meeting_summary.toml"
    shutil.copy(MEETING, graph)
    pytester.makepyfile(test_summary=textwrap.dedent(TEST_FILE).format(
        graph=str(graph), good=GOOD, bad=BAD))
    with StubServer(headings_judge()) as stub:
        args = (*INNER, "--dagtui-model", "openai/gpt-4.1-mini", "--dagtui-api-base", stub.base_url)
        run = pytester.runpytest(*args)
        run.assert_outcomes(passed=1, failed=1)
        assert stub.calls == 2 + 3  # bad: extract + gate; good: extract + gate + order
        run.stdout.fnmatch_lines([
            "*GraphAssertionError: case 'bad one' failed the graph",
            "*Format Correctness: case 'bad one' failed: score 0.00 (threshold 0.5)",
            "*path: extract ; present=false → score 0",
            "*extract (task): Intro ⏎ Body — headings found",
            "*present (binary): false — the Conclusion heading is missing",
            "*trace: .dagtui/traces/meeting_summary.bad-one.trace.json (dagtui step *",
        ])
        shown = run.stdout.str()  # the helper's and the event loop's frames are hidden
        assert "def assert_graph" not in shown and "base_events.py" not in shown
        assert (pytester.path / ".dagtui" / "traces" / "meeting_summary.bad-one.trace.json"
                ).is_file()
        # the second session is answered from the cache in .dagtui/: no call reaches the stub
        pytester.runpytest(*args).assert_outcomes(passed=1, failed=1)
        assert stub.calls == 5
        pytester.runpytest(*args, "--dagtui-no-cache").assert_outcomes(passed=1, failed=1)
        assert stub.calls == 10


def test_the_plugin_does_nothing_unless_used(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    run = pytester.runpytest(*INNER)
    run.assert_outcomes(passed=1)
    assert not (pytester.path / ".dagtui").exists()


def test_the_plugin_is_declared_for_pytest() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    entry = project["project"]["entry-points"]["pytest11"]
    assert entry == {"dagtui": "dagtui.integrations.pytest_plugin"}

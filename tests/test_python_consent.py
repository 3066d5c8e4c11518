"""Python check nodes run code only from a module beside the graph, and only with consent.

A graph (say, from an untrusted pull request) must not run code by being tested: the
module is a file beside the graph loaded by path (never `os`, `subprocess`, `builtins` or an
installed package), and running it takes `--allow-python`, DAGTUI_ALLOW_PYTHON=1,
`allow_python=True` or a "yes" in the TUI — never anything the file says. Without consent
the module is not even imported. Every mode is covered: `dagtui test`, `dagtui run` (stub
judge, in process and in workers), suites, the Python API, `validate` and the debugger.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pytest
from stub_server import StubServer
from tui.debugger_helpers import settle

import dagtui
from dagtui.cli import main
from dagtui.graph.checks import ALLOW_ENV, CheckError, PythonConsent, run_check
from dagtui.graph.loader import load_file
from dagtui.judges.labels import LabelsJudge
from dagtui.run.engine import Engine

GRAPH = """\
[metric]
name = "py"
model = "openai/gpt-4.1-mini"
cases = "g.cases.jsonl"

[nodes.code]
type = "check"
check = "python"
function = "{function}"
param = "actual_output"
verdicts = [
  {{ verdict = false, score = 0 }},
  {{ verdict = true, then = "polite" }},
]

[nodes.polite]
type = "binary"
criteria = "Is the answer polite?"
params = ["actual_output"]
verdicts = [
  {{ verdict = true, score = 10 }},
  {{ verdict = false, score = 0 }},
]
"""

#: writes one marker when imported and another when called: either one means code ran
HELPER = """\
from pathlib import Path
from os import system

Path(__file__).with_name("imported.txt").write_text("imported")


def grade(value):
    Path(__file__).with_name("marker.txt").write_text(value)
    return True
"""


@pytest.fixture(autouse=True)
def no_env_consent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's environment never decides a test."""
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    monkeypatch.delenv("DAGTUI_PYTHON_PATH", raising=False)


def make_graph(folder: Path, function: str = "helper:grade", *, command: str = "hello",
               helper: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "g.toml"
    path.write_text(GRAPH.format(function=function))
    case = {"name": "a", "actual_output": command, "expected": {"polite": True},
            "expected_score": 1}
    (folder / "g.cases.jsonl").write_text(json.dumps(case) + "\n")
    if helper:
        (folder / "helper.py").write_text(HELPER)
    return path


def ran(folder: Path) -> bool:
    return (folder / "marker.txt").exists() or (folder / "imported.txt").exists()


def assert_refusal_message(text: str) -> None:
    for part in ("'code'", "helper:grade", "--allow-python", f"{ALLOW_ENV}=1"):
        assert part in text, text


# -- where: never outside the graph's folder ----------------------------------------------

OUTSIDE = ["os:system", "subprocess:getoutput", "builtins:exec", "pytest:main",
           "stub_server:smart_answer"]


@pytest.mark.parametrize("function", OUTSIDE)
def test_a_module_not_beside_the_graph_is_refused_even_with_consent(tmp_path, capsys,
                                                                     function) -> None:
    touched = tmp_path / "pwned"
    path = make_graph(tmp_path / "g", function, command=f"touch {touched}", helper=False)
    graph = load_file(path).graph
    node = graph.nodes["code"]
    with pytest.raises(CheckError, match="no module file") as err:
        run_check(node, graph, {"actual_output": f"touch {touched}"}, {},
                  PythonConsent(allow=True))
    assert "never installed or standard-library modules" in str(err.value)
    assert main(["test", str(path), "--allow-python"]) == 1
    assert "no module file" in capsys.readouterr().out
    result = dagtui.load(path, allow_python=True).measure(
        {"name": "a", "actual_output": f"touch {touched}"}, judge="labels")
    assert result.error and "no module file" in result.error
    assert not touched.exists()


def test_names_that_leave_the_folder_are_refused(tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text(HELPER)
    folder = tmp_path / "g"
    make_graph(folder, helper=False)
    (folder / "link.py").symlink_to(outside / "evil.py")
    (folder / "helper.py").write_text(HELPER)
    graph = load_file(folder / "g.toml").graph
    allowed = PythonConsent(allow=True)
    for function, why in [("link:grade", "no module file 'link'"),
                          ("..outside.evil:grade", "must look like 'module:function'"),
                          ("helper:system", "is not defined in")]:
        node = graph.nodes["code"].replace(function=function)
        with pytest.raises(CheckError, match=why):
            run_check(node, graph, {"actual_output": "x"}, {}, allowed)
    assert not (outside / "marker.txt").exists() and not (outside / "imported.txt").exists()


def test_python_path_names_another_folder(tmp_path, capsys) -> None:
    path = make_graph(tmp_path / "g", helper=False)
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helper.py").write_text(HELPER)
    assert main(["test", str(path), "--allow-python"]) == 1
    assert not ran(lib)
    assert main(["test", str(path), "--allow-python", "--python-path", str(lib)]) == 0
    assert (lib / "marker.txt").read_text() == "hello"


# -- who: only the user's consent -----------------------------------------------------------


def test_dagtui_test_without_consent_fails_and_imports_nothing(tmp_path, capsys) -> None:
    path = make_graph(tmp_path)
    before = set(sys.modules)
    assert main(["test", str(path)]) == 1
    out = capsys.readouterr().out
    assert_refusal_message(out)
    assert not ran(tmp_path)
    assert not any(name.startswith("_dagtui_check_") for name in set(sys.modules) - before)


def test_dagtui_test_with_flag_or_env_runs_it(tmp_path, capsys, monkeypatch) -> None:
    path = make_graph(tmp_path)
    assert main(["test", str(path), "--allow-python"]) == 0
    assert (tmp_path / "marker.txt").read_text() == "hello"
    (tmp_path / "marker.txt").unlink()
    monkeypatch.setenv(ALLOW_ENV, "1")
    assert main(["test", str(path)]) == 0
    assert (tmp_path / "marker.txt").exists()


def test_dagtui_run_against_the_stub(tmp_path, capsys, monkeypatch) -> None:
    path = make_graph(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    with StubServer() as stub:
        args = ["run", str(path), "--api-base", stub.base_url, "--retries", "0", "--no-cache"]
        assert main(args) == 3  # no verdict: the case ends in an error, not a failure
        assert_refusal_message(capsys.readouterr().out)
        assert not ran(tmp_path) and stub.calls == 0
        assert main([*args, "--allow-python"]) == 0
        assert (tmp_path / "marker.txt").exists() and stub.calls == 1


def test_worker_processes_get_the_consent_from_the_parent(tmp_path, monkeypatch) -> None:
    from dagtui.api import make_judge
    from dagtui.run.cases import load_cases
    pytest.importorskip("distributed", reason="--workers needs dagtui[dask]")
    from dagtui.run.cluster import Cluster, evaluate_in_workers

    path = make_graph(tmp_path)
    monkeypatch.chdir(tmp_path)
    graph = load_file(path).graph
    cases = load_cases(tmp_path / "g.cases.jsonl") * 2
    with StubServer() as stub, Cluster(2) as pool:
        judge = make_judge("openai/gpt-4.1-mini", graph, api_base=stub.base_url,
                           api_key="test", cache=False, retries=0)
        refused = evaluate_in_workers(Engine(graph, judge, python=PythonConsent()), cases,
                                      workers=2, cluster=pool)
        assert all(r.error and "--allow-python" in r.error for r in refused.results)
        assert not ran(tmp_path)
        allowed = evaluate_in_workers(Engine(graph, judge, python=PythonConsent(allow=True)),
                                      cases, workers=2, cluster=pool)
        assert [r.score for r in allowed.results] == [1.0, 1.0]
        assert (tmp_path / "marker.txt").exists()


def test_consent_crosses_to_a_process_without_its_dialog() -> None:
    async def ask(target: object) -> bool:
        return True

    consent = PythonConsent(allow=True, dirs=["/x"], ask=ask)
    copy = pickle.loads(pickle.dumps(consent))
    assert copy.allow and copy.dirs == consent.dirs and copy.ask is None


def test_python_api(tmp_path) -> None:
    path = make_graph(tmp_path)
    case = {"name": "a", "actual_output": "hello", "expected": {"polite": True}}
    result = dagtui.load(path).measure(case, judge="labels")
    assert result.score is None
    assert_refusal_message(result.error)
    assert not ran(tmp_path)
    assert dagtui.load(path, allow_python=True).measure(case, judge="labels").score == 1.0
    (tmp_path / "marker.txt").unlink()
    report = dagtui.evaluate(path, judge="labels", allow_python=True)
    assert [r.score for r in report.results] == [1.0]
    assert (tmp_path / "marker.txt").exists()
    assert dagtui.evaluate(path, judge="labels").results[0].error


def make_suite(folder: Path) -> str:
    """An inline python check gating a graph rule whose graph has one too."""
    make_graph(folder)
    (folder / "s.toml").write_text(
        '[suite]\nname = "s"\ncases = "s.cases.jsonl"\n\n[rules.code]\n'
        'check = { check = "python", param = "actual_output", function = "helper:grade" }\n\n'
        '[rules.graph]\ngraph = "g.toml"\ndepends_on = ["code"]\n')
    (folder / "s.cases.jsonl").write_text(
        '{"name": "a", "actual_output": "hello", "expected": {"code": true, '
        '"graph": {"code": true, "polite": true, "expected_score": 1}}}\n')
    return str(folder / "s.toml")


def test_suite_labels_test_needs_the_same_consent(tmp_path, capsys) -> None:
    suite = make_suite(tmp_path)
    assert main(["test", suite]) == 1
    assert "--allow-python" in capsys.readouterr().out
    assert not ran(tmp_path)
    assert main(["test", suite, "--allow-python"]) == 0, capsys.readouterr().out
    assert (tmp_path / "marker.txt").exists()


def test_suite_run_needs_the_same_consent(tmp_path, capsys, monkeypatch) -> None:
    suite = make_suite(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    with StubServer() as stub:
        args = ["run", suite, "--model", "openai/gpt-4.1-mini", "--api-base", stub.base_url,
                "--retries", "0", "--no-cache"]
        assert main(args) != 0
        assert "--allow-python" in capsys.readouterr().out
        assert not ran(tmp_path) and stub.calls == 0
        assert main([*args, "--allow-python"]) == 0, capsys.readouterr().out
        assert (tmp_path / "marker.txt").exists() and stub.calls == 1


def test_validate_warns_that_the_graph_runs_code(tmp_path, capsys) -> None:
    path = make_graph(tmp_path)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "DAG114" in out and "'code'" in out and "helper:grade" in out
    assert str(tmp_path / "helper.py") in out
    assert main(["validate", str(path), "--strict"]) == 1
    capsys.readouterr()
    bad = make_graph(tmp_path / "bad", "os:system", helper=False)
    main(["validate", str(bad)])
    out = capsys.readouterr().out
    assert "DAG115" in out and "os:system" in out
    assert not ran(tmp_path)


# -- the debugger asks ----------------------------------------------------------------------


def debugger(path: Path, python: PythonConsent | None = None):  # noqa: ANN201
    from dagtui.run.cases import load_cases
    from dagtui.tui.app import debugger_app

    graph = load_file(path).graph
    cases = load_cases(path.parent / "g.cases.jsonl")
    return debugger_app(graph, str(path), cases=cases, judge=LabelsJudge(), cursor_blink=False,
                       python=python)


async def step(app, pilot, *, finish: bool = True) -> None:  # noqa: ANN001
    """Press `n`; with `finish`, wait for the step's worker and the redraw."""
    await pilot.press("n")
    if finish:
        await settle(app, pilot)
    else:
        await pilot.pause()


@pytest.mark.parametrize("choice", ["allow", "deny"])
async def test_debugger_asks_once_naming_module_and_function(tmp_path, choice) -> None:
    from textual.widgets import Label

    from dagtui.tui.screens.dialogs import PickScreen

    path = make_graph(tmp_path)
    app = debugger(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await step(app, pilot, finish=False)
        assert isinstance(app.screen, PickScreen)
        title = str(app.screen.query_one(".dialog-title", Label).render())
        assert f"Run python check code: helper:grade from {tmp_path / 'helper.py'}?" in title
        assert not ran(tmp_path)  # asking imports nothing
        await pilot.press("enter" if choice == "allow" else "escape")
        await settle(app, pilot)
        run = app.debugger.live
        (record,) = run.records
        if choice == "allow":
            assert record.error is None and record.answer is True
            assert (tmp_path / "marker.txt").exists()
        else:
            assert "denied for this session" in record.error and "helper:grade" in record.error
            assert not ran(tmp_path)
        # the answer holds for the session: a restart asks nothing
        await pilot.press("r")
        await pilot.pause()
        await step(app, pilot)
        assert not isinstance(app.screen, PickScreen)
        assert (app.debugger.live.records[0].error is None) is (choice == "allow")


async def test_debugger_with_consent_asks_nothing(tmp_path) -> None:
    from dagtui.tui.screens.dialogs import PickScreen

    path = make_graph(tmp_path)
    app = debugger(path, PythonConsent(allow=True))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await step(app, pilot)
        assert not isinstance(app.screen, PickScreen)
        assert app.debugger.live.records[0].answer is True
        assert (tmp_path / "marker.txt").exists()


async def test_editor_f5_asks_once_for_the_whole_session(tmp_path, monkeypatch) -> None:
    from dagtui.tui.app import editor_app
    from dagtui.tui.debugger.screen import DebuggerScreen
    from dagtui.tui.screens.dialogs import PickScreen

    make_graph(tmp_path)
    monkeypatch.chdir(tmp_path)
    app = editor_app("g.toml", poll_interval=0, cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        for attempt in range(2):  # the second F5 of the session asks nothing
            await pilot.pause()
            await pilot.press("f5")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, DebuggerScreen)
            await pilot.press("n")
            await pilot.pause()
            if attempt == 0:
                assert isinstance(app.screen, PickScreen)
                assert not ran(tmp_path)
                await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert app.screen is screen
            assert screen.live.records[0].answer is True
            await pilot.press("escape")
        assert (tmp_path / "marker.txt").exists()

"""Every shipped example (graphs/**) through every command the README shows, from the CLI.

`test_examples.py` checks the four graph examples as data (clean, canonical, labels drive
the engine to each expected score); this file runs the commands a user types on every file
below graphs/, the suite and its rule graphs included: validate (text, --paths, json,
github, --strict, the directory), fmt --check, test (each file and the directory), export to
each format (a DeepEval refusal must name a check node), an export imported back, run
against the loopback stub, step's checks before its screen opens, and edit --list-starters.
A new example is picked up without touching this file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from stub_server import StubServer
from test_cli_walkthrough import cli

from dagtui.commands.validate import file_kind
from dagtui.graph.loader import load_file
from dagtui.graph.model import CheckNode

ROOT = Path(__file__).resolve().parent.parent
GRAPHS = ROOT / "graphs"
FILES = sorted(GRAPHS.rglob("*.toml"))
GRAPH_FILES = [p for p in FILES if file_kind(p) == "graph"]
SUITE_FILES = [p for p in FILES if file_kind(p) == "suite"]
#: graphs with their own cases file (a suite's rule graphs are tested through the suite)
TESTABLE = [p for p in GRAPH_FILES if load_file(p).graph.metric.cases]  # type: ignore[union-attr]
FORMATS = ("deepeval-json", "deepeval-python", "mermaid", "dot")


def name(path: Path) -> str:
    return path.relative_to(GRAPHS).as_posix()


def test_the_examples_are_all_here() -> None:
    assert len(TESTABLE) >= 4 and SUITE_FILES and len(GRAPH_FILES) > len(TESTABLE)


# -- validate ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=name)
def test_validate_every_form_is_clean(capsys, path: Path) -> None:
    code, out, err = cli(capsys, "validate", "--strict", str(path))
    assert code == 0, out + err
    assert "0 errors, 0 warnings" in out
    code, out, _ = cli(capsys, "validate", "--format", "json", str(path))
    doc = json.loads(out)
    assert code == 0 and doc["summary"]["errors"] == doc["summary"]["warnings"] == 0
    code, out, _ = cli(capsys, "validate", "--format", "github", str(path))
    assert code == 0 and "::error" not in out and "::warning" not in out


@pytest.mark.parametrize("path", GRAPH_FILES, ids=name)
def test_validate_paths_lists_every_path(capsys, path: Path) -> None:
    code, out, _ = cli(capsys, "validate", "--paths", str(path))
    assert code == 0
    assert "verdict paths" in out and "judge calls:" in out and "invalid paths" not in out
    code, out, _ = cli(capsys, "validate", "--paths", "--format", "json", str(path))
    (entry,) = json.loads(out)["files"]
    assert code == 0 and entry["paths"]["proven"] and entry["paths"]["paths"]


def test_validate_and_fmt_the_whole_directory(capsys) -> None:
    code, out, err = cli(capsys, "validate", "--strict", str(GRAPHS))
    assert code == 0, out + err
    # a directory holds its suites too (issue 28)
    assert f"{len(GRAPH_FILES) + len(SUITE_FILES)} files checked: 0 errors, 0 warnings" in out
    code, out, err = cli(capsys, "fmt", "--check", str(GRAPHS))
    assert code == 0, out + err


@pytest.mark.parametrize("path", FILES, ids=name)
def test_fmt_check_and_diff_change_nothing(capsys, path: Path) -> None:
    before = path.read_bytes()
    code, out, err = cli(capsys, "fmt", "--check", str(path))
    assert code == 0, out + err
    code, out, _ = cli(capsys, "fmt", "--diff", str(path))
    assert code == 0 and out == ""
    assert path.read_bytes() == before


# -- test -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", TESTABLE + SUITE_FILES, ids=name)
def test_logic_test_passes(capsys, path: Path) -> None:
    code, out, err = cli(capsys, "test", "-v", str(path))
    assert code == 0, out + err
    assert " 0 failed (labels judge, 0 LLM calls)" in out


def test_logic_test_of_the_directory(capsys) -> None:
    code, out, err = cli(capsys, "test", str(GRAPHS))
    assert code == 0, out + err
    # the graphs with cases and the suites (issue 28: a directory finds them too)
    assert out.count(" 0 failed (labels judge") == len(TESTABLE) + len(SUITE_FILES)


# -- export / import --------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("path", GRAPH_FILES, ids=name)
def test_export_each_format(tmp_path, capsys, path: Path, fmt: str) -> None:
    graph = load_file(path).graph
    assert graph is not None
    checks = [nid for nid, node in graph.nodes.items() if isinstance(node, CheckNode)]
    out_file = tmp_path / f"out.{fmt}"
    code, out, err = cli(capsys, "export", str(path), "--to", fmt, "-o", str(out_file))
    if fmt.startswith("deepeval") and checks:  # documented: refused, naming the node
        assert code == 1 and "DeepEval cannot express" in err
        assert any(f"'{nid}'" in err for nid in checks)
        assert not out_file.exists()
        return
    assert code == 0, err
    text = out_file.read_text(encoding="utf-8")
    assert all(nid in text for nid in graph.nodes) or fmt == "deepeval-python"
    if fmt == "deepeval-json":
        imported = tmp_path / "imported.toml"
        code, _, err = cli(capsys, "import", str(out_file), "-o", str(imported))
        assert code == 0, err
        assert cli(capsys, "validate", str(imported))[0] == 0


@pytest.mark.parametrize("path", SUITE_FILES, ids=name)
def test_export_of_a_suite_says_what_export_takes(capsys, path: Path) -> None:
    code, _, err = cli(capsys, "export", str(path), "--to", "mermaid")
    assert code == 2 and "is a suite file" in err


# -- run against the stub, step's checks, edit --list-starters ---------------------------


@pytest.fixture(scope="module")
def stub():
    with StubServer() as server:
        yield server


@pytest.mark.parametrize("path", TESTABLE + SUITE_FILES, ids=name)
def test_run_against_the_stub(tmp_path, monkeypatch, capsys, stub, path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # the cache goes here, not into the repository
    monkeypatch.setenv("CI", "1")
    code, out, err = cli(capsys, "run", str(path), "--model", "openai/gpt-4.1-mini",
                         "--api-base", stub.base_url, "--retries", "1", "-q",
                         "--json", "report.json")
    assert code in (0, 1), out + err  # pass or fail as judged: no input or judge error
    assert "judge error" not in err
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", TESTABLE, ids=name)
def test_step_is_ready_on_every_case(path: Path) -> None:
    from dagtui.commands.step import prepare
    from dagtui.run.cases import load_cases

    graph = load_file(path).graph
    assert graph is not None
    cases = load_cases(path.parent / graph.metric.cases)
    for index in range(len(cases)):
        args = argparse.Namespace(graph=str(path), case=str(index), cases=None, judge=None,
                                  model=None, api_base=None, no_cache=True, trace=None,
                                  allow_python=False, python_path=None)
        ready, code = prepare(args)
        assert ready is not None and code == 0
        assert ready["case"].name == cases[index].name


def test_edit_lists_the_starters(capsys) -> None:
    code, out, _ = cli(capsys, "edit", "--list-starters")
    assert code == 0 and "blank" in out.split()

"""`dagtui step` from the outside: everything checkable before the UI opens is checked, with
a one-line message and the documented exit code (2 usage/input, 1 invalid graph)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from dagtui.cli import build_parser, main
from dagtui.commands.step import prepare

ROOT = Path(__file__).resolve().parent.parent
GRAPH = str(ROOT / "graphs" / "meeting_summary.toml")


def args_for(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["step", *argv])


def test_defaults_pick_the_labels_judge_and_the_first_case() -> None:
    ready, code = prepare(args_for(GRAPH))
    assert code == 0 and ready is not None
    assert ready["judge"].name == "labels"  # the cases carry labels: offline by default
    assert ready["case"] is None and len(ready["cases"]) == 6
    assert ready["cases_source"].endswith("meeting_summary.cases.jsonl")


def test_case_by_name_and_by_index() -> None:
    by_name, _ = prepare(args_for(GRAPH, "--case", "missing conclusion"))
    by_index, _ = prepare(args_for(GRAPH, "--case", "4"))
    assert by_name["case"].name == by_index["case"].name == "missing conclusion"


def test_model_means_the_litellm_judge_without_importing_litellm() -> None:
    import sys

    had = "litellm" in sys.modules
    ready, code = prepare(args_for(GRAPH, "--model", "openai/gpt-4.1-mini",
                                   "--api-base", "http://127.0.0.1:9/v1", "--no-cache"))
    assert code == 0 and ready["judge"].name == "litellm"
    assert ready["judge"].model == "openai/gpt-4.1-mini"
    assert ready["judge"].api_base == "http://127.0.0.1:9/v1"
    assert ("litellm" in sys.modules) == had


def test_human_judge_by_flag() -> None:
    ready, _ = prepare(args_for(GRAPH, "--judge", "human"))
    assert ready["judge"].name == "human"


@pytest.mark.parametrize("argv, message", [
    (["--case", "no such case"], "no case named"),
    (["--cases", "/nonexistent/cases.jsonl"], "no such cases file"),
    (["--judge", "replay"], "needs a saved trace"),
    (["--trace", "/nonexistent/trace.json"], "cannot read trace"),
])
def test_usage_errors_exit_2_with_a_message(argv: list[str], message: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["step", GRAPH, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_missing_graph_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["step", "/nonexistent/graph.toml"]) == 2
    assert "DAG022" in capsys.readouterr().err


def test_invalid_graph_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[metric]\nname = "x"\n\n[nodes.j]\ntype = "binary"\ncriteria = "?"\n'
                   'verdicts = [{ verdict = true, then = "nowhere" }]\n')
    assert main(["step", str(bad)]) == 1
    assert "error" in capsys.readouterr().err


def test_replay_judge_reads_a_saved_trace(tmp_path: Path) -> None:
    from dagtui.api import load
    from dagtui.report.trace import Trace
    from dagtui.run.cases import load_cases

    graph = load(GRAPH)
    case = load_cases(ROOT / "graphs" / "meeting_summary.cases.jsonl")[2]
    result = graph.measure(case, judge="labels")
    path = Trace.of(graph.graph, case, graph.engine("labels").judge, result).save(
        tmp_path / "t.json")
    assert json.loads(path.read_text())["result"]["score"] == 0.4
    ready, code = prepare(args_for(GRAPH, "--judge", "replay", "--trace", str(path)))
    assert code == 0 and ready["judge"].name == "replay" and ready["trace"] is None
    shown, _ = prepare(args_for(GRAPH, "--trace", str(path)))
    assert shown["trace"] is not None and shown["trace"].result.score == 0.4


def test_without_a_terminal_it_refuses_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["step", GRAPH, "--case", "0"]) == 2
    assert "interactive terminal" in capsys.readouterr().err


def test_a_misspelled_debugger_remap_is_refused_naming_it(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`dagtui step` reads the debugger.* remaps; a typo is an error, not a silent no-op."""
    monkeypatch.setenv("DAGTUI_KEYS", "debugger.stpe=s;editor.save=ctrl+w")
    assert main(["step", GRAPH, "--case", "0"]) == 2
    assert "debugger.stpe" in capsys.readouterr().err

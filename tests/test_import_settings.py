"""`dagtui import --name/--threshold/--model/--include-reason`: the metric settings DeepEval's
JSON does not carry are given on the command line or named as defaults, never lost silently;
the Python export then writes `include_reason` as the graph says."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from dagtui.cli import main
from dagtui.export import export_graph
from dagtui.graph.loader import load_file

DOC = {"nodes": {
    "gate": {"type": "BinaryJudgementNode", "criteria": "Is it polite?", "label": None,
             "evaluation_params": ["actual_output"], "children": ["gate.true", "gate.false"]},
    "gate.true": {"type": "VerdictNode", "verdict": True, "score": 10},
    "gate.false": {"type": "VerdictNode", "verdict": False, "score": 2.5},
}}


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "polite_dag.json"
    src.write_text(json.dumps(DOC), encoding="utf-8")
    return src


def test_flags_are_written_to_metric(tmp_path: Path, capsys) -> None:
    out = tmp_path / "g.toml"
    code = main(["import", str(_source(tmp_path)), "-o", str(out), "--name", "Politeness",
                 "--threshold", "0.75", "--model", "openai/gpt-4.1", "--no-include-reason"])
    assert code == 0
    metric = tomllib.loads(out.read_text(encoding="utf-8"))["metric"]
    assert metric["name"] == "Politeness" and metric["threshold"] == 0.75
    assert metric["model"] == "openai/gpt-4.1" and metric["include_reason"] is False
    assert "note:" not in capsys.readouterr().err  # everything was given


def test_defaults_are_named_when_flags_are_missing(tmp_path: Path, capsys) -> None:
    out = tmp_path / "g.toml"
    assert main(["import", str(_source(tmp_path)), "-o", str(out), "--threshold", "0.6"]) == 0
    err = capsys.readouterr().err
    assert "DeepEval's JSON does not carry the metric's settings" in err
    assert "--name" in err and "--model" in err and "--no-include-reason" in err
    assert "--threshold" not in err
    metric = tomllib.loads(out.read_text(encoding="utf-8"))["metric"]
    assert metric["name"] == "Polite dag" and metric["threshold"] == 0.6
    assert "include_reason" not in metric  # the default, left out of the file


@pytest.mark.parametrize("value", ["1.5", "-0.1", "nan", "high"])
def test_bad_threshold_is_refused_by_the_parser(tmp_path: Path, capsys, value: str) -> None:
    with pytest.raises(SystemExit) as info:
        main(["import", str(_source(tmp_path)), "--threshold", value])
    assert info.value.code == 2
    assert f"argument --threshold: must be a number from 0 to 1, got '{value}'" in \
        capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--include-reason", "--no-include-reason"])
def test_python_export_carries_include_reason(tmp_path: Path, flag: str) -> None:
    out = tmp_path / "g.toml"
    assert main(["import", str(_source(tmp_path)), "-o", str(out), flag]) == 0
    graph = load_file(out).graph
    assert graph is not None
    module = export_graph(graph, "deepeval-python")
    wanted = flag == "--include-reason"
    assert f"INCLUDE_REASON = {wanted}" in module
    assert "include_reason=INCLUDE_REASON" in module
    assert "include_reason=True" not in module

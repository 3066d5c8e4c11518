"""`dagtui schema`: the JSON Schemas editors use to complete and check dagtui's TOML files.

Checked with a real JSON Schema validator (jsonschema, installed with litellm): every
shipped example (graphs, suites, cases files, the starters, the graph example of
docs/getting-started.md) is valid, and a misspelt key anywhere — the hidden `critera` typo
above all — is refused, since closed tables are what make an editor underline it.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from test_cli_walkthrough import cli

from dagtui.commands.schema import build_schema
from dagtui.commands.validate import file_kind
from dagtui.graph.starters import STARTERS, starter_text

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parent.parent
GRAPHS = ROOT / "graphs"
TOML_FILES = sorted(GRAPHS.rglob("*.toml"))
CASES_FILES = sorted(GRAPHS.rglob("*.jsonl"))


@pytest.fixture(scope="module")
def validators() -> dict[str, Any]:
    out = {}
    for kind in ("graph", "cases", "suite"):
        schema = build_schema(kind)
        jsonschema.Draft202012Validator.check_schema(schema)
        out[kind] = jsonschema.Draft202012Validator(schema)
    return out


def errors(validator: Any, data: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(data)]


def test_the_examples_are_here() -> None:
    kinds = {file_kind(p) for p in TOML_FILES}
    assert {"graph", "suite"} <= kinds and CASES_FILES


@pytest.mark.parametrize("path", TOML_FILES, ids=lambda p: p.relative_to(GRAPHS).as_posix())
def test_every_shipped_toml_file_is_valid(validators: dict[str, Any], path: Path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert errors(validators[file_kind(path)], data) == []


@pytest.mark.parametrize("path", CASES_FILES, ids=lambda p: p.relative_to(GRAPHS).as_posix())
def test_every_shipped_cases_file_is_valid(validators: dict[str, Any], path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    assert errors(validators["cases"], {"cases": cases}) == []


@pytest.mark.parametrize("name", sorted(STARTERS))
def test_every_starter_is_valid(validators: dict[str, Any], name: str) -> None:
    assert errors(validators["graph"], tomllib.loads(starter_text(name))) == []


def test_the_getting_started_example_is_valid(validators: dict[str, Any]) -> None:
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    block = re.search(r"## A graph file\n\n.*?```toml\n(.*?)```", page, re.S)
    assert block, "the graph example of docs/getting-started.md moved"
    assert errors(validators["graph"], tomllib.loads(block.group(1))) == []


def _meeting() -> dict[str, Any]:
    return tomllib.loads((GRAPHS / "meeting_summary.toml").read_text(encoding="utf-8"))


def test_the_hidden_key_typo_is_refused(validators: dict[str, Any]) -> None:
    data = _meeting()
    node = data["nodes"]["present"]
    node["critera"] = node.pop("criteria")
    found = errors(validators["graph"], data)
    assert found, "a misspelt 'criteria' passed the schema"
    assert any("critera" in e for e in found), found


@pytest.mark.parametrize("where, key", [
    (("metric",), "treshold"),
    (("nodes", "extract"), "childern"),
    (("nodes", "present", "verdicts", 0), "scor"),
    ((), "node"),
])
def test_every_table_is_closed(validators: dict[str, Any], where: tuple, key: str) -> None:
    data = _meeting()
    table: Any = data
    for step in where:
        table = table[step]
    table[key] = 1
    assert any(key in e for e in errors(validators["graph"], data))


def test_wrong_types_and_ranges_are_refused(validators: dict[str, Any]) -> None:
    data = _meeting()
    bad = copy.deepcopy(data)
    bad["nodes"]["present"]["verdicts"][0]["score"] = 11
    assert errors(validators["graph"], bad)
    bad = copy.deepcopy(data)
    bad["nodes"]["present"]["type"] = "binray"
    assert errors(validators["graph"], bad)
    bad = copy.deepcopy(data)
    bad["nodes"]["extract"]["params"] = ["actual_outptu"]
    assert errors(validators["graph"], bad)


def test_suite_and_cases_typos_are_refused(validators: dict[str, Any]) -> None:
    suite = tomllib.loads((GRAPHS / "suites" / "spans.toml").read_text(encoding="utf-8"))
    suite["rules"]["correctness"]["depends"] = ["has_output"]
    assert any("depends" in e for e in errors(validators["suite"], suite))
    suite["rules"]["correctness"].pop("depends")
    suite["rules"]["has_output"]["check"]["pattrn"] = "x"
    assert any("pattrn" in e for e in errors(validators["suite"], suite))
    case = {"name": "a", "actual_ouput": "text"}
    assert any("actual_ouput" in e for e in errors(validators["cases"], {"cases": [case]}))


def test_the_command_prints_and_writes(capsys: Any, tmp_path: Path) -> None:
    code, out, _ = cli(capsys, "schema")
    assert code == 0 and json.loads(out)["title"] == "dagtui graph file"
    target = tmp_path / "suite.schema.json"
    code, _, err = cli(capsys, "schema", "suite", "-o", str(target))
    assert code == 0 and "wrote" in err
    assert json.loads(target.read_text())["title"] == "dagtui suite file"
    code, _, err = cli(capsys, "schema", "graph", "-o", str(tmp_path / "no" / "such" / "dir.json"))
    assert code == 2 and "cannot write" in err
    code, _, err = cli(capsys, "schema", "graf")
    assert code == 2 and "did you mean 'graph'" in err


def test_pydantic_only_when_the_command_runs() -> None:
    """The command module is imported by every CLI start; pydantic must wait for it to run."""
    probe = ("import sys, dagtui.cli, dagtui.commands.schema; dagtui.cli.build_parser(); "
             "print(any(m.split('.')[0] == 'pydantic' for m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


def test_fractional_scores_and_a_metric_leaf_are_valid(validators: dict[str, Any]) -> None:
    data = tomllib.loads(
        '[metric]\nname = "m"\n'
        '[nodes.gate]\ntype = "binary"\ncriteria = "ok?"\nparams = ["actual_output"]\n'
        'verdicts = [{ verdict = false, score = 3.33 }, { verdict = true, then = "rel" }]\n'
        '[nodes.rel]\ntype = "metric"\nmetric = "AnswerRelevancyMetric"\n'
        'args = { threshold = 0.7 }\n')
    assert errors(validators["graph"], data) == []
    data["nodes"]["rel"]["arg"] = {}
    assert any("arg" in e for e in errors(validators["graph"], data))

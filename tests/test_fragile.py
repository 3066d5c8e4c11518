"""Fragile outcomes (issue 25): a run with a fresh calibration lists the cases whose pass/fail
rests on one weak node, and the expected number of misjudged outcomes, from the path table
and each node's measured error rate (dagtui/calibration/fragile.py). A real litellm judge
against the loopback stub, scripted per case and node."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from stub_server import StubServer, prompt_kind

from dagtui.calibration.fragile import PathIndex
from dagtui.cli import main
from dagtui.graph.loader import load_text
from dagtui.graph.paths import analyze
from dagtui.report.documents import document_schema

MODEL = "openai/gpt-4.1-mini"
GRAPH = """\
[metric]
name = "Fragile"
threshold = 0.5

[nodes.gate]
type = "binary"
criteria = "Is the output on topic?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "kind" }]

[nodes.kind]
type = "non_binary"
criteria = "Which kind of output is it?"
params = ["actual_output"]
verdicts = [{ verdict = "A", score = 10 }, { verdict = "B", score = 5 }, { verdict = "C", score = 0 }]
"""

# calibration: people say gate true for l01-l16 (kind A for l01-l08, C for l09-l16), false
# for l17-l20. The judge errs at gate once (l17): agreement 19/20, error rate 0.05; and at
# kind four times (l01, l09, l10, l11): agreement 12/16, error rate 0.25
LABELS = {f"l{i:02d}": (i <= 16, ("A" if i <= 8 else "C") if i <= 16 else None)
          for i in range(1, 21)}
SAYS: dict[str, tuple[bool, str]] = {}
for _name, (_gate, _kind) in LABELS.items():
    _wrong_kind = {"A": "C", "C": "A"}
    SAYS[_name] = (True if _name == "l17" else _gate,
                   _wrong_kind.get(_kind or "", "A") if _name in ("l01", "l09", "l10", "l11")
                   else _kind or "A")
# the run: what the judge says of each unlabelled case
RUN = {"r1": (True, "A"), "r2": (True, "A"), "r3": (True, "C"), "r4": (False, "A"),
       "r5": (True, "B"), "r6": (False, "C")}
SAYS.update(RUN)
SCORE = {"A": 1.0, "B": 0.5, "C": 0.0}


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    name = re.search(r"CASE-(\w+)", text).group(1)  # type: ignore[union-attr]
    gate, kind = SAYS[name]
    return {"reason": "scripted", "verdict": gate if prompt_kind(body) == "binary" else kind}


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    (tmp_path / "g.toml").write_text(GRAPH)
    rows = []
    for name, (gate, kind) in LABELS.items():
        expected: dict[str, Any] = {"gate": gate}
        if kind is not None:
            expected["kind"] = kind
        rows.append({"name": name, "actual_output": f"CASE-{name}", "expected": expected,
                     "expected_score": SCORE[kind] if gate and kind else 0.0})
    (tmp_path / "labelled.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "run.jsonl").write_text("".join(
        json.dumps({"name": n, "actual_output": f"CASE-{n}"}) + "\n" for n in RUN))
    return tmp_path


def test_fragile_cases_and_expected_misjudged_outcomes_are_the_scripted_ones(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with StubServer(_answer) as stub:
        judge = ["--model", MODEL, "--api-base", stub.base_url, "--retries", "0", "--no-cache"]
        assert main(["calibrate", "g.toml", "--cases", "labelled.jsonl", *judge]) == 0
        saved = json.loads((work / ".dagtui" / "calibration" / "g.json").read_text())
        assert saved["nodes"]["gate"]["agreement"] == pytest.approx(19 / 20)
        assert saved["nodes"]["kind"]["agreement"] == pytest.approx(12 / 16)
        capsys.readouterr()
        main(["run", "g.toml", "--cases", "run.jsonl", *judge, "-q", "--json", "r.json"])
    out = " ".join(capsys.readouterr().out.split())
    report = json.loads((work / "r.json").read_text())
    jsonschema.validate(report, document_schema("report"))
    fragile = report["calibration"]["fragile"]
    # by hand, from the path table: gate=false ends at 0 (fail); gate=true goes to kind,
    # A (1.0) and B (0.5) pass, C fails. r1, r2 (true, A) and r5 (true, B) pass and flip to
    # fail if either node alone is wrong; r3 (true, C) fails and flips only at kind (gate
    # false fails too); r4, r6 (gate false) fail whatever kind would say: not fragile
    both = 1 - (1 - 0.05) * (1 - 0.25)
    by_case = {c["case"]: c for c in fragile["cases"]}
    assert list(by_case) == ["r1", "r2", "r3", "r5"]
    assert [by_case[n]["fragile"] for n in by_case] == [["gate", "kind"]] * 2 + [["kind"]] \
        + [["gate", "kind"]]
    assert all(c["weak"] == ["kind"] for c in fragile["cases"])  # gate errs 5 %: not weak
    assert [by_case[n]["chance"] for n in by_case] == pytest.approx([both, both, 0.25, both])
    assert fragile["expected_misjudged"] == pytest.approx(3 * both + 0.25)  # 1.1125
    assert (fragile["judged"], fragile["weak_cases"], fragile["unknown"]) == (6, 4, 0)
    assert fragile["nodes"]["kind"] == {"cases": 4, "error_rate": pytest.approx(0.25)}
    assert fragile["nodes"]["gate"]["cases"] == 3
    assert ("fragile outcomes: 4 of 6 cases rest on one weak node (a single wrong verdict "
            "there flips pass/fail; error rate ≥ 10%); expected misjudged outcomes in the "
            "run: 1.1") in out
    assert "r1: pass, rests on kind (25%) r2: pass, rests on kind (25%) r3: fail, rests on " \
           "kind (25%) r5: pass, rests on kind (25%)" in out


def test_a_stale_calibration_reports_no_fragile_outcomes(work: Path, capsys) -> None:
    with StubServer(_answer) as stub:
        judge = ["--model", MODEL, "--api-base", stub.base_url, "--retries", "0", "--no-cache"]
        assert main(["calibrate", "g.toml", "--cases", "labelled.jsonl", *judge]) == 0
        (work / "g.toml").write_text(GRAPH.replace("on topic?", "on the topic?"))
        capsys.readouterr()
        main(["run", "g.toml", "--cases", "run.jsonl", *judge, "-q", "--json", "r.json"])
    assert "fragile" not in capsys.readouterr().out
    assert "fragile" not in json.loads((work / "r.json").read_text())["calibration"]


def test_a_case_off_the_path_table_is_unknown_not_fragile() -> None:
    graph = load_text(GRAPH).graph
    index = PathIndex(analyze(graph))
    assert index.fragile([("gate", True), ("kind", "B")]) == ["gate", "kind"]
    assert index.fragile([("gate", False)]) == []
    assert index.fragile([("gate", True), ("kind", "Z")]) is None

"""Several annotators: labels kept per person in a case's `annotations`, checked like every
label, and `calibrate` reporting each pair's agreement and kappa (the ceiling) beside the
judge's, the judge compared with the adjudicated labels or with `--annotator NAME`;
"unsure" labels are kept but left out of every kappa."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score
from stub_server import StubServer, prompt_kind

import dagtui
from dagtui.calibration.annotators import human_agreement
from dagtui.cli import main
from dagtui.judges.base import CallbackJudge
from dagtui.labels.check import UNSURE, LabelChecker, LabelError, check_cases
from dagtui.run.cases import CaseError, case_from_dict, load_cases, parse_jsonl, parse_toml

GRAPH = """\
[metric]
name = "Two"
threshold = 0.5
cases = "two.cases.jsonl"

# two people label each node: the gate first, then (when it passes) the kind
[nodes.gate]
type = "binary"
params = ["actual_output"]
criteria = "Does the reply answer the question that was asked?"
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "kind" }]

[nodes.kind]
params = ["actual_output"]
type = "non_binary"
criteria = "How does the reply answer: A direct, B hedged, C evasive?"
verdicts = [{ verdict = "A", score = 10 }, { verdict = "B", score = 5 }, { verdict = "C", score = 0 }]
"""

# case -> (ana's gate, ana's kind, ben's gate, ben's kind); None: that person gave no label
SCRIPT: dict[str, tuple[Any, Any, Any, Any]] = {
    "c01": (True, "A", True, "A"),
    "c02": (True, "A", True, "B"),
    "c03": (True, "B", True, "B"),
    "c04": (True, "C", True, "C"),
    "c05": (True, "A", False, None),
    "c06": (True, "B", False, None),
    "c07": (False, None, False, None),
    "c08": (False, None, False, None),
    "c09": (False, None, False, None),
    "c10": (False, None, True, "A"),
    "c11": (UNSURE, None, True, "A"),   # ana unsure: left out of the pair's figures
    "c12": (True, "A", None, None),     # only ana labelled it
}
# gate, on the ten cases both labelled with a verdict: agree on 7 (TT x4, FF x3), ana says
# true 6 times and ben 5, so p_e = (6*5 + 4*5) / 100 = 0.5 and kappa = (0.7 - 0.5) / 0.5
GATE_KAPPA = 0.4
# kind, on the four cases both labelled: agree on 3; ana A2 B1 C1, ben A1 B2 C1, so
# p_e = (2 + 2 + 1) / 16 and kappa = (12/16 - 5/16) / (11/16)
KIND_KAPPA = 7 / 11


def rows() -> list[dict[str, Any]]:
    out = []
    for name, (ag, ak, bg, bk) in SCRIPT.items():
        annotations = []
        for by, gate, kind in (("ana", ag, ak), ("ben", bg, bk)):
            if gate is None:
                continue
            expected: dict[str, Any] = {"gate": gate}
            if kind is not None:
                expected["kind"] = kind
            annotations.append({"by": by, "expected": expected})
        # the adjudicated labels: ben's where he gave any, else ana's
        adjudicated = annotations[-1]["expected"]
        if adjudicated.get("gate") == UNSURE:
            adjudicated = {"gate": True, "kind": "A"}
        out.append({"name": name, "actual_output": f"CASE-{name} output",
                    "expected": adjudicated, "annotations": annotations})
    return out


def _graph() -> Any:
    return dagtui.load_text(GRAPH).graph


def test_two_annotators_give_the_hand_computed_kappa():
    cases = parse_jsonl("".join(json.dumps(r) + "\n" for r in rows()), "two.cases.jsonl")
    pairs = human_agreement(_graph(), cases)
    (gate,), (kind,) = pairs["gate"], pairs["kind"]
    assert (gate.first, gate.second, gate.cases, gate.unsure) == ("ana", "ben", 10, 1)
    assert gate.agreement == pytest.approx(0.7)
    assert gate.kappa == pytest.approx(GATE_KAPPA)
    assert (kind.cases, kind.unsure) == (4, 0)
    assert kind.agreement == pytest.approx(0.75)
    assert kind.kappa == pytest.approx(KIND_KAPPA)
    # an independent implementation gives the same figures
    both = [(a, b) for a, _, b, _ in SCRIPT.values()
            if a is not None and b is not None and UNSURE not in (a, b)]
    assert cohen_kappa_score([a for a, _ in both], [b for _, b in both]) \
        == pytest.approx(GATE_KAPPA)
    assert cohen_kappa_score(list("AABC"), list("ABBC")) == pytest.approx(KIND_KAPPA)
    lo, hi = gate.kappa_ci
    assert lo <= GATE_KAPPA <= hi
    # seeded: the same data gives the same interval
    assert human_agreement(_graph(), cases)["gate"][0].kappa_ci == gate.kappa_ci


def test_calibrate_compares_the_judge_with_the_annotator_asked_for():
    cases = [case_from_dict(r) for r in rows()]
    said = {"gate": True, "kind": "A"}  # a judge that always says true, A

    def judge(ask: Any) -> Any:
        return said[ask.node.id]

    graph = _graph()
    default = dagtui.calibrate(graph, cases, judge=CallbackJudge(judge))
    assert default.annotator is None
    assert default.human_agreement["gate"][0].kappa == pytest.approx(GATE_KAPPA)
    ana = dagtui.calibrate(graph, cases, judge=CallbackJudge(judge), annotator="ana")
    assert ana.annotator == "ana"
    gate = ana.nodes["gate"]
    # ana's gate labels: true 7, false 4, unsure 1 (left out): the judge agrees on 7 of 11
    assert (gate.cases, gate.unsure) == (11, 1)
    assert gate.agreement == pytest.approx(7 / 11)
    assert "c11" not in gate.unlabelled
    assert not any(p.startswith("c11:") for p in ana.label_problems)
    with pytest.raises(CaseError, match=r"no case is annotated by 'cy' \(annotators: 'ana', "
                                        r"'ben'\)"):
        dagtui.calibrate(graph, cases, judge=CallbackJudge(judge), annotator="cy")


def test_cli_prints_the_ceiling_beside_the_judge(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    graph_file = tmp_path / "two.toml"
    graph_file.write_text(GRAPH)
    lines = [json.dumps(r) for r in rows()]
    (tmp_path / "two.cases.jsonl").write_text("\n".join(lines) + "\n")

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        verdict = True if prompt_kind(body) == "binary" else "A"
        return {"reason": "always the same", "verdict": verdict}

    with StubServer(reply) as stub:
        args = ["calibrate", str(graph_file), "--model", "openai/gpt-4.1-mini",
                "--api-base", stub.base_url, "--no-cache", "--retries", "0"]
        assert main([*args, "--annotator", "ben", "--json", "c.json"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the judge is compared with annotator 'ben' (--annotator)" in out
    assert re.search(r"gate -?\d\.\d\d ana / ben 10 70% 0\.40 \[-?\d\.\d\d, \d\.\d\d\] 1", out)
    assert re.search(r"kind -?\d\.\d\d ana / ben 4 75% 0\.64 ", out)
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["annotator"] == "ben"
    assert data["human_agreement"]["gate"][0]["kappa"] == pytest.approx(GATE_KAPPA)
    assert main(["calibrate", str(graph_file), "--annotator", "nobody", "--dry-run"]) == 2
    assert "no case is annotated by 'nobody'" in capsys.readouterr().err


def test_annotations_are_checked_like_every_label_with_file_line_and_annotator(tmp_path):
    path = tmp_path / "bad.cases.jsonl"
    path.write_text(
        json.dumps({"name": "ok", "expected": {"gate": False}}) + "\n"
        + json.dumps({"name": "bad", "expected": {"gate": False},
                      "annotations": [{"by": "ana", "expected": {"gate": "yes"}},
                                      {"by": "ben", "expected": {"gaet": True,
                                                                 "kind": UNSURE}}]}) + "\n")
    cases = load_cases(path)
    with pytest.raises(LabelError) as info:
        check_cases(_graph(), cases)
    text = str(info.value)
    assert f"{path}:2: case 'bad': annotator 'ana': node 'gate': 'yes' is not one of its " \
           "verdicts (false, true); did you mean true?" in text
    assert f"{path}:2: case 'bad': annotator 'ben': a label for 'gaet'" in text
    assert "did you mean 'gate'?" in text
    # ben's "unsure" on kind is a label, not a problem: only his unknown node is
    assert [(p.annotator, p.key, p.kind) for p in info.value.problems] == [
        ("ana", "gate", "not_a_verdict"), ("ben", "gaet", "unknown_node")]
    # lenient: each bad label leaves its own annotation, the rest stays
    kept, ignored = check_cases(_graph(), cases, lenient=True)
    assert len(ignored) == 2
    assert [(a.by, a.expected) for a in kept[1].annotations] == [
        ("ana", {}), ("ben", {"kind": UNSURE})]
    assert kept[1].expected == {"gate": False}


def test_unsure_is_a_label_on_every_node_kind_and_opens_the_branches_below():
    checker = LabelChecker(_graph())
    case = case_from_dict({"name": "u", "expected": {"gate": UNSURE, "kind": "B"}})
    assert checker.check(case) == []  # kind is reachable: the unsure gate opens both ways
    closed = case_from_dict({"name": "v", "expected": {"gate": False, "kind": UNSURE}})
    assert [p.kind for p in checker.check(closed)] == ["off_path"]


def test_annotation_entries_are_read_strictly(tmp_path):
    def one(entry: Any) -> str:
        with pytest.raises(CaseError) as info:
            case_from_dict({"name": "x", "annotations": entry}, file="f.jsonl", line=3)
        return str(info.value)

    assert one({"by": "ana"}).startswith("f.jsonl:3: case 'x': 'annotations' must be a list")
    assert "annotation 1 needs 'by'" in one([{"expected": {}}])
    assert "'expcted' is no annotation field (did you mean 'expected'?)" in one(
        [{"by": "ana", "expcted": {}}])
    assert "a second annotation by the same person" in one([{"by": "a"}, {"by": "a"}])
    assert "annotator 'a': 'expected_score' must be a number from 0 to 1" in one(
        [{"by": "a", "expected_score": 3}])
    toml = parse_toml('''
# the adjudicated label and each person's
[[cases]]
name = "t"
expected = { gate = true }

[[cases.annotations]]
by = "ana"
expected = { gate = true, kind = "A" }
expected_score = 1.0

[[cases.annotations]]
by = "ben"
expected = { gate = "unsure" }
''', "t.toml")
    (case,) = toml
    assert [(a.by, a.expected, a.expected_score) for a in case.annotations] == [
        ("ana", {"gate": True, "kind": "A"}, 1.0), ("ben", {"gate": UNSURE}, None)]
    assert case.to_dict()["annotations"][1] == {"by": "ben", "expected": {"gate": UNSURE}}

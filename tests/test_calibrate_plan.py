"""`dagtui calibrate --plan`: with no call, from the saved calibration and the judge cache
of the last run, the labels each node still needs and the unlabelled cases to label first
(`dagtui.calibration.plan`); the same calibration, cases and cache give the same plan."""

from __future__ import annotations

import json
from typing import Any

import pytest
from stub_server import StubServer
from test_annotators import GRAPH
from test_calibrate import PerSample

import dagtui
from dagtui.calibration.plan import MIN_CASES, more_cases, plan, uncertain_order
from dagtui.calibration.saved import read_saved
from dagtui.cli import main
from dagtui.judges.cache import open_cache
from dagtui.judges.factory import make_judge
from dagtui.run.cases import load_cases

MODEL = "openai/gpt-4.1-mini"
# what the judge says per case (gate, then kind; per sample, the last one repeats).
# c01-c11 are labelled gate = false (so `kind` is never measured); c11's samples split.
JUDGE: dict[str, dict[str, list[Any]]] = {
    **{f"c{i:02d}": {"gate": [False], "kind": ["A"]} for i in range(1, 9)},
    "c09": {"gate": [True], "kind": ["A"]},
    "c10": {"gate": [True], "kind": ["B"]},
    "c11": {"gate": [False, True], "kind": ["A"]},
    "c20": {"gate": [True], "kind": ["A"]},
    "c21": {"gate": [False], "kind": ["A"]},
    "c22": {"gate": [True], "kind": ["C"]},
    "c23": {"gate": [False], "kind": ["A"]},
}


def _rows(labelled: set[str]) -> str:
    rows = []
    for name in JUDGE:
        row: dict[str, Any] = {"name": name, "actual_output": f"CASE-{name} output"}
        if name in labelled:
            row["expected"] = {"gate": False}
        rows.append(json.dumps(row))
    return "\n".join(rows) + "\n"


def test_more_cases_scales_the_width_as_one_over_root_n():
    # 20 cases measured an interval 0.6 wide: 0.2 needs 20 * 3^2 = 180 cases, 160 more
    assert more_cases(20, 0.6, 0.2) == 160
    assert more_cases(40, 0.1, 0.2) == 0  # already narrow enough
    assert more_cases(4, 0.0, 0.2) == MIN_CASES - 4  # four agreeing cases say little
    assert more_cases(0, None, 0.2) == MIN_CASES  # never measured


def test_plan_orders_close_calls_then_the_neediest_nodes_and_is_deterministic(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    graph_file = tmp_path / "two.toml"
    graph_file.write_text(GRAPH)
    cases_file = tmp_path / "two.cases.jsonl"
    labelled = {f"c{i:02d}" for i in range(1, 12)}
    cases_file.write_text(_rows(labelled))
    cache = str(tmp_path / "cache")
    with StubServer(PerSample(JUDGE)) as stub:
        assert main(["calibrate", str(graph_file), "--model", MODEL, "--api-base",
                     stub.base_url, "--cache-dir", cache, "--retries", "0",
                     "--samples", "2"]) == 0
        base = stub.base_url
        calls = stub.calls
    capsys.readouterr()
    # c11's labels are taken back (its cached samples split); c24 is new, never run
    cases_file.write_text(_rows(labelled - {"c11"})
                          + json.dumps({"name": "c24", "actual_output": "CASE-c24"}) + "\n")
    args = ["calibrate", str(graph_file), "--plan", "--model", MODEL, "--api-base", base,
            "--cache-dir", cache, "--json", "plan.json"]
    assert main(args) == 0  # the stub is gone: a single call would fail the replay
    out = capsys.readouterr().out
    data = json.loads((tmp_path / "plan.json").read_text())
    assert [c["case"] for c in data["cases"]] == ["c11", "c20", "c22", "c21", "c23", "c24"]
    assert data["cases"][0] == {"case": "c11", "nodes": ["gate"], "close": ["gate"],
                                "placed": True}
    assert data["cases"][1]["nodes"] == ["kind", "gate"]  # never-measured kind ranks first
    assert data["cases"][-1]["placed"] is False
    kind, gate = data["nodes"]
    assert (kind["node"], kind["cases"], kind["width"], kind["more"]) == ("kind", 0, None,
                                                                          MIN_CASES)
    saved = read_saved(tmp_path / ".dagtui" / "calibration" / "two.json")
    assert saved is not None and calls > 0
    lo, hi = saved["nodes"]["gate"]["kappa_ci"]
    assert (gate["cases"], gate["width"]) == (11, pytest.approx(hi - lo))
    assert gate["more"] == more_cases(11, hi - lo, 0.2) > 0
    flat = " ".join(out.split())
    assert "1. c11 (close call on gate; crosses gate)" in flat
    assert "6. c24 (not in the judge cache)" in flat
    assert f"kind non_binary 0 - - - {MIN_CASES}" in flat
    assert "1 unlabelled case not in the judge cache" in flat
    # deterministic: the same inputs, the same plan, to the byte
    assert main(args) == 0
    assert capsys.readouterr().out == out
    assert main([*args[:-2], "--target-width", "0.9"]) == 0
    assert "more for 0.9" in capsys.readouterr().out
    # the core function `dagtui label --order uncertain` follows: the plan, then the rest
    graph = dagtui.load(str(graph_file)).graph
    judge = make_judge(MODEL, graph, api_base=base, cache=open_cache(cache), temperature=0.0)
    cases = load_cases(cases_file)
    first = plan(graph, saved, cases, judge)
    assert first.order == ["c11", "c20", "c22", "c21", "c23", "c24"]
    assert first.to_dict() == plan(graph, saved, cases, judge).to_dict()
    assert uncertain_order(graph, cases, saved, judge) == first.order + [
        f"c{i:02d}" for i in range(1, 11)]


def test_plan_flags_are_refused_where_they_mean_nothing(tmp_path, capsys):
    graph_file = tmp_path / "two.toml"
    graph_file.write_text(GRAPH)
    (tmp_path / "two.cases.jsonl").write_text(_rows({"c01"}))
    assert main(["calibrate", str(graph_file), "--plan", "--dry-run"]) == 2
    assert "--plan makes no call and measures nothing: it does not take --dry-run" \
        in capsys.readouterr().err
    assert main(["calibrate", str(graph_file), "--target-width", "0.3"]) == 2
    assert "--target-width needs --plan" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["calibrate", str(graph_file), "--plan", "--target-width", "0"])
    # no calibration saved yet: still a plan, every node never measured
    assert main(["calibrate", str(graph_file), "--plan", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "no calibration saved" in out and f"gate binary 0 - - - {MIN_CASES}" in " ".join(
        out.split())

"""Honest figures (issue 25, items 1 and 2): a saved calibration knows what it measured and
says when it went stale (`dagtui calibrate --check`, `dagtui run`'s summary), and a run with
a fresh calibration reports the pass rate corrected for the judge's measured errors, with its
95 % interval (docs/calibration.md). A real litellm judge against the loopback stub, scripted
per case."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from stub_server import StubServer, prompt_kind
from test_calibrate import GRAPH, JUDGE, PerSample, case_rows

from dagtui.calibration.correction import MIN_YOUDEN, correct
from dagtui.cli import main
from dagtui.report.documents import document_schema

MODEL = "openai/gpt-4.1-mini"
SAVED = Path(".dagtui") / "calibration" / "calib.json"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    (tmp_path / "calib.toml").write_text(GRAPH)
    (tmp_path / "calib.cases.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in case_rows()))
    return tmp_path


def _judge(stub: StubServer, model: str = MODEL) -> list[str]:
    return ["--model", model, "--api-base", stub.base_url, "--retries", "0"]


def _check(stub: StubServer, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["calibrate", "calib.toml", "--check", *_judge(stub), *extra])
    return code, capsys.readouterr().out


def _row(out: str, node: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(f"  {node} "))


def _relabel(path: Path, cases: list[str], node: str = "gate") -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        if r["name"] in cases:
            r["expected"][node] = not r["expected"][node]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_check_is_fresh_after_calibrate_and_names_what_went_stale(work: Path, capsys) -> None:
    script = PerSample(JUDGE)
    with StubServer(script) as stub:
        assert main(["calibrate", "calib.toml", *_judge(stub)]) == 0
        capsys.readouterr()
        calls = stub.calls
        code, out = _check(stub, capsys)
        assert code == 0
        assert out.splitlines()[-1] == f"calibration: fresh ({Path.cwd() / SAVED})"
        assert re.search(r"^  gate +fresh +κ 0\.58$", out, re.M)

        # another model: every judge-asked node is stale, for that reason only
        code = main(["calibrate", "calib.toml", "--check", *_judge(stub, "openai/other")])
        out = capsys.readouterr().out
        assert code == 1
        assert all(_row(out, n).endswith("stale" + " " * 20 + "model changed")
                   or _row(out, n).endswith("model changed") for n in ("extract", "gate", "kind"))
        assert "calibration: stale: 3 nodes (extract: model changed;" in out
        # another endpoint, another temperature
        code = main(["calibrate", "calib.toml", "--check", "--model", MODEL,
                     "--api-base", stub.base_url + "/v2", "--temperature", "0.7"])
        out = capsys.readouterr().out
        assert code == 1 and _row(out, "gate").endswith("endpoint changed, temperature changed")

        # one node's criteria edited: that node only
        graph = work / "calib.toml"
        graph.write_text(GRAPH.replace("Which kind of output is it?", "Which kind is it?"))
        code, out = _check(stub, capsys)
        assert code == 1
        assert _row(out, "kind").endswith("stale    κ 0.71              criteria changed")
        assert "fresh" in _row(out, "gate") and "fresh" in _row(out, "extract")
        assert out.splitlines()[-1] == "calibration: stale: 1 node (kind: criteria changed)"
        # verdict options reordered: the prompt lists them in that order
        graph.write_text(GRAPH.replace('{ verdict = "A", score = 10 }, { verdict = "B", '
                                       'score = 5 }', '{ verdict = "B", score = 5 }, '
                                       '{ verdict = "A", score = 10 }'))
        code, out = _check(stub, capsys)
        assert code == 1 and _row(out, "kind").endswith("verdict options changed")
        # the upstream task node's output label: both nodes that read its evidence
        graph.write_text(GRAPH.replace('output_label = "Items"', 'output_label = "Things"'))
        code, out = _check(stub, capsys)
        assert code == 1
        assert _row(out, "gate").endswith("upstream output labels changed")
        assert _row(out, "kind").endswith("upstream output labels changed")
        # a verdict's score: no node's prompt changes, the end-to-end figures do
        graph.write_text(GRAPH.replace('{ verdict = "B", score = 5 }',
                                       '{ verdict = "B", score = 4 }'))
        code, out = _check(stub, capsys)
        assert code == 1 and "fresh" in _row(out, "kind")
        assert "end to end: stale (graph changed (scores, routes, checks or threshold))" in out
        graph.write_text(GRAPH)

        # labels: one changed, then three
        cases = work / "calib.cases.jsonl"
        _relabel(cases, ["c01"])
        code, out = _check(stub, capsys)
        assert code == 1 and _row(out, "gate").endswith("1 label changed")
        assert "fresh" in _row(out, "kind")
        _relabel(cases, ["c02", "c03"])
        code, out = _check(stub, capsys)
        assert code == 1 and _row(out, "gate").endswith("3 labels changed")
        assert "calibration: stale: 1 node (gate: 3 labels changed)" in out
        _relabel(cases, ["c01", "c02", "c03"])  # back to what was calibrated
        rows = [json.loads(line) for line in cases.read_text().splitlines()]
        for r in rows[:2]:
            r["expected_score"] = 0.25
        cases.write_text("".join(json.dumps(r) + "\n" for r in rows))
        code, out = _check(stub, capsys)
        assert code == 1 and "fresh" in _row(out, "gate")
        assert out.splitlines()[-1] == ("calibration: stale: end to end (2 expected scores "
                                        "or check labels changed)")
        assert stub.calls == calls  # --check never asks the judge

        # recalibrated on the labels of now: fresh again
        script.seen.clear()
        assert main(["calibrate", "calib.toml", *_judge(stub)]) == 0
        capsys.readouterr()
        code, out = _check(stub, capsys)
        assert code == 0 and out.splitlines()[-1].startswith("calibration: fresh")
        # --min-kappa: fresh, but a node below the floor still fails the gate
        code, out = _check(stub, capsys, "--min-kappa", "0.9")
        assert code == 1 and "below --min-kappa 0.9: gate" in out


def test_a_new_node_is_missing_and_an_old_file_is_stale_without_a_crash(work: Path,
                                                                         capsys) -> None:
    with StubServer(PerSample(JUDGE)) as stub:
        assert main(["calibrate", "calib.toml", *_judge(stub)]) == 0
        capsys.readouterr()
        (work / "calib.toml").write_text(
            GRAPH.replace('{ verdict = true, then = "kind" }', '{ verdict = true, then = '
                          '"extra" }') + '\n[nodes.extra]\ntype = "binary"\ncriteria = "Also '
            'fine?"\nparams = ["actual_output"]\nverdicts = [{ verdict = false, score = 0 }, '
            '{ verdict = true, then = "kind" }]\n')
        code, out = _check(stub, capsys)
        assert code == 1 and re.search(r"^  extra +missing +not calibrated$", out, re.M)
        assert "fresh" in _row(out, "kind")  # its own prompt is the same
        assert "end to end: stale" not in out  # a node is stale already: that says it
        (work / "calib.toml").write_text(GRAPH)
        # a calibration written before fingerprints existed
        data = json.loads(SAVED.read_text())
        del data["provenance"]
        SAVED.write_text(json.dumps(data))
        code, out = _check(stub, capsys)
        assert code == 1
        assert out.splitlines()[-1] == "calibration: stale: no fingerprint (recalibrate)"
        assert main(["run", "calib.toml", *_judge(stub), "-q", "--no-cache",
                     "--json", "r.json"]) == 1
        out = capsys.readouterr().out
        assert "calibration: stale: no fingerprint (recalibrate)" in out
        report = json.loads((work / "r.json").read_text())
        assert report["calibration"]["state"] == "stale"
        assert report["calibration"]["corrected_pass_rate"] is None
        # no calibration at all
        SAVED.unlink()
        code, out = _check(stub, capsys)
        assert code == 1 and out.startswith("calibration: none")
        main(["run", "calib.toml", *_judge(stub), "-q", "--no-cache", "--json", "r.json",
              "--junit", "r.xml"])
        assert "\ncalibration: none\n" in capsys.readouterr().out
        assert "calibration" not in json.loads((work / "r.json").read_text())
        assert "<properties>" not in (work / "r.xml").read_text()


def test_check_imports_no_judge_client(work: Path) -> None:
    with StubServer(PerSample(JUDGE)) as stub:
        assert main(["calibrate", "calib.toml", *_judge(stub), "--no-cache"]) == 0
        probe = ("import sys; from dagtui.cli import main; "
                 f"code = main(['calibrate', 'calib.toml', '--check', '--model', '{MODEL}', "
                 f"'--api-base', '{stub.base_url}']); "
                 "print(code, 'litellm' in sys.modules)")
        proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              timeout=120, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "0 False"


# --------------------------------------------------------------------------- corrected rate

ONE_NODE = """\
[metric]
name = "Gate"
threshold = 0.5

[nodes.ok]
type = "binary"
criteria = "Is the answer acceptable?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, score = 10 }]
"""


def _write_cases(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _scripted_run(work: Path, capsys, says: dict[str, bool], labels: dict[str, bool],
                  run_cases: list[str]) -> tuple[str, dict[str, Any], str, str]:
    """Calibrate the one-node graph on `labels` with a judge saying `says`, then run it on
    `run_cases` (unlabelled); (run summary, JSON report, JUnit XML, calibration report)."""
    (work / "g.toml").write_text(ONE_NODE)
    _write_cases(work / "labelled.jsonl", [
        {"name": n, "actual_output": f"CASE-{n}", "expected": {"ok": v},
         "expected_score": 1.0 if v else 0.0} for n, v in labels.items()])
    _write_cases(work / "run.jsonl", [{"name": n, "actual_output": f"CASE-{n}"}
                                      for n in run_cases])

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        assert prompt_kind(body) == "binary"
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        name = re.search(r"CASE-(\w+)", text).group(1)  # type: ignore[union-attr]
        return {"reason": "scripted", "verdict": says[name]}

    with StubServer(answer) as stub:
        judge = ["--model", MODEL, "--api-base", stub.base_url, "--retries", "0", "--no-cache"]
        assert main(["calibrate", "g.toml", "--cases", "labelled.jsonl", *judge]) == 0
        calibrated = capsys.readouterr().out
        main(["run", "g.toml", "--cases", "run.jsonl", *judge, "-q",
              "--json", "r.json", "--junit", "r.xml"])
    out = capsys.readouterr().out
    return (out, json.loads((work / "r.json").read_text()), (work / "r.xml").read_text(),
            calibrated)


def test_corrected_pass_rate_and_interval_equal_the_hand_computed_values(work: Path,
                                                                           capsys) -> None:
    # calibration: people pass p01-p10 (the judge passes 8 of them), fail f01-f10 (the judge
    # fails 9): sensitivity q1 = 8/10, specificity q0 = 9/10
    labels = {**{f"p{i:02d}": True for i in range(1, 11)},
              **{f"f{i:02d}": False for i in range(1, 11)}}
    says = {**{f"p{i:02d}": i <= 8 for i in range(1, 11)},
            **{f"f{i:02d}": i == 10 for i in range(1, 11)}}
    # the run: 20 unlabelled cases, the judge passes 12 (p = 0.6)
    run = [f"r{i:02d}" for i in range(1, 21)]
    says.update({name: i < 12 for i, name in enumerate(run)})
    out, report, junit, calibrated = _scripted_run(work, capsys, says, labels, run)
    assert "pass/fail 85%, sensitivity 80% (8/10), specificity 90% (9/10)" in calibrated
    corrected = report["calibration"]["corrected_pass_rate"]
    # by hand: theta = (0.6 + 0.9 - 1) / (0.9 + 0.8 - 1) = 0.5 / 0.7
    assert corrected["estimate"] == pytest.approx(5 / 7)
    assert (corrected["raw"], corrected["n"]) == (pytest.approx(0.6), 20)
    assert (corrected["sensitivity"], corrected["specificity"]) == (0.8, 0.9)
    # the interval: smoothed counts (z^2/2 passes and fails added to the run, one agreeing
    # and one disagreeing case to each half of the calibration), delta-method variance
    z = 1.959963984540054
    n, m0, m1 = 20 + z * z, 12, 12
    p, q0, q1 = (12 + z * z / 2) / n, 10 / 12, 9 / 12
    j = q0 + q1 - 1
    theta = (p + q0 - 1) / j
    var = (p * (1 - p) / n + (1 - theta) ** 2 * q0 * (1 - q0) / m0
           + theta ** 2 * q1 * (1 - q1) / m1) / j ** 2
    lo, hi = theta - z * math.sqrt(var), theta + z * math.sqrt(var)
    assert corrected["ci"] == [pytest.approx(lo), pytest.approx(min(1.0, hi))]
    assert 0.2 < lo < 5 / 7 < hi  # a real interval, around the estimate
    flat = " ".join(out.split())  # the summary wraps at 80 columns
    assert f"calibration: fresh ({work / '.dagtui' / 'calibration' / 'g.json'})" in flat
    assert (f"corrected pass rate: 71% (95% CI {lo:.0%}–{min(1.0, hi):.0%}; judge's raw 60%), "
            "from its sensitivity 0.80 and specificity 0.90 on 10 + 10 labelled cases") in flat
    assert '<property name="calibration" value="fresh"/>' in junit
    assert f'<property name="corrected_pass_rate" value="{5 / 7:.6f}"/>' in junit
    assert f'<property name="corrected_pass_rate_ci_low" value="{lo:.6f}"/>' in junit
    jsonschema.validate(report, document_schema("report"))
    saved = json.loads((work / ".dagtui" / "calibration" / "g.json").read_text())
    jsonschema.validate(saved, document_schema("calibration"))
    assert saved["end_to_end"]["outcomes"] == {"human_pass": 10, "judge_pass": 8,
                                               "human_fail": 10, "judge_fail": 9}


def test_a_judge_at_chance_is_said_to_be_unusable(work: Path, capsys) -> None:
    # the judge passes half of what people pass and half of what they fail: q0 + q1 - 1 = 0
    labels = {f"c{i:02d}": i <= 10 for i in range(1, 21)}
    says = {f"c{i:02d}": i % 2 == 0 for i in range(1, 21)}
    says.update({f"r{i}": True for i in range(5)})
    out, report, junit, _ = _scripted_run(work, capsys, says, labels,
                                          [f"r{i}" for i in range(5)])
    corrected = report["calibration"]["corrected_pass_rate"]
    assert corrected["estimate"] is None and corrected["ci"] is None
    assert corrected["youden"] == pytest.approx(0.0)
    assert "corrected pass rate: unusable — the judge is close to chance (sensitivity + " \
           f"specificity - 1 = 0.00, below {MIN_YOUDEN:g})" in " ".join(out.split())
    assert '<property name="corrected_pass_rate_unusable"' in junit
    jsonschema.validate(report, document_schema("report"))


def test_correction_refuses_what_it_cannot_know() -> None:
    assert correct(5, 10, 8, 10, 0, 0).unusable == \
        "the calibration has no case people failed: specificity unknown"
    assert correct(5, 10, 0, 0, 8, 10).unusable == \
        "the calibration has no case people passed: sensitivity unknown"
    assert correct(0, 0, 8, 10, 8, 10).unusable == "no case of the run was judged pass or fail"
    # a perfect judge: the estimate is the raw rate, the interval still carries the
    # calibration's size (20 cases), wider than the run's alone
    perfect = correct(30, 100, 10, 10, 10, 10)
    assert perfect.estimate == pytest.approx(0.3)
    lo, hi = perfect.ci  # type: ignore[misc]
    run_only = 1.96 * math.sqrt(0.3 * 0.7 / 100)
    assert hi - lo > 2 * run_only
    # clipped: a raw rate below the judge's false-pass rate corrects to 0, not below
    assert correct(0, 10, 9, 10, 8, 10).estimate == 0.0

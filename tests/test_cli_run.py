"""`dagtui run` and `dagtui test` end to end (in-process CLI, loopback stub)."""

from __future__ import annotations

import glob
import json
import shutil
from pathlib import Path

import pytest
from stub_server import Fault, Script, StubServer

from dagtui.cli import main

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
CASES = str(ROOT / "graphs" / "meeting_summary.cases.jsonl")


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def run_args(stub, *extra):
    return ["run", MEETING, "--cases", CASES, "--model", "openai/gpt-4.1-mini",
            "--api-base", stub.base_url, "--retries", "1", *extra]


def test_run_passes_writes_outputs_and_caches_in_cwd(stub, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    code = main(run_args(stub, "--junit", "out/j.xml", "--json", "out/r.json",
                         "--trace-dir", "traces"))
    out = capsys.readouterr().out
    assert code == 0
    n = len(Path(CASES).read_text().splitlines())
    assert f"[{n}/{n}] PASS" in out and "pass rate 100%" in out
    assert "extract" in out and "p50" in out
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    assert report["cases"] == n and report["calls"] == stub.calls
    assert report["nodes"]["present"]["verdicts"] == {"true": n}
    assert "<testsuites" in (tmp_path / "out" / "j.xml").read_text()
    traces = sorted((tmp_path / "traces").glob("*.json"))
    assert len(traces) == n and json.loads(traces[0].read_text())["dagtui_trace"] == 1
    assert (tmp_path / ".dagtui" / "cache.sqlite").exists()
    before = stub.calls
    assert main(run_args(stub)) == 0
    assert stub.calls == before  # everything from the cache
    assert main(run_args(stub, "--no-cache")) == 0
    assert stub.calls > before


def test_run_exit_1_on_failing_case(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    responder = Script([("true or false", {"reason": "a heading is missing", "verdict": False})])
    with StubServer(responder) as stub:
        code = main(run_args(stub))
    out = capsys.readouterr().out
    assert code == 1 and "failing cases" in out and "present=false → score 0" in out


def test_run_exit_3_on_judge_errors_only(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with StubServer(Script([("true or false", Fault("500"))])) as stub:
        code = main(run_args(stub, "--no-cache"))
    out = capsys.readouterr().out
    assert code == 3
    assert "judge errors (cases without a verdict, not failures): 5xx:" in out
    assert "retried" in out


def test_run_missing_fields_exit_2_before_any_call(stub, tmp_path, capsys):
    cases = tmp_path / "c.jsonl"
    cases.write_text('{"name": "ok", "actual_output": "x"}\n{"name": "bare", "input": "q"}\n')
    code = main(["run", MEETING, "--cases", str(cases), "--api-base", stub.base_url,
                 "--model", "openai/gpt-4.1-mini", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and stub.calls == 0
    assert "c.jsonl:2" in err and "'bare'" in err and "'actual_output'" in err


def test_run_bad_inputs(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.toml"), "--cases", CASES]) == 2
    bad = tmp_path / "bad.toml"
    bad.write_text('[nodes.a]\ntype = "binary"\ncriteria = "x"\n'
                   'verdicts = [{ verdict = true, score = 10 }]\n')
    assert main(["run", str(bad), "--cases", CASES]) == 1
    assert "DAG010" in capsys.readouterr().err
    assert main(["run", MEETING, "--cases", str(tmp_path / "none.jsonl")]) == 2


def test_dagtui_test_passes_for_every_shipped_example(capsys):
    graphs = sorted(glob.glob(str(ROOT / "graphs" / "*.toml")))
    assert len(graphs) >= 3
    assert main(["test", *graphs]) == 0
    out = capsys.readouterr().out
    assert "0 LLM calls" in out and "failed" in out


def test_dagtui_test_fails_with_the_diverging_path(tmp_path, capsys):
    graph = tmp_path / "m.toml"
    shutil.copy(MEETING, graph)
    (tmp_path / "meeting_summary.cases.jsonl").write_text(
        '{"name": "wrong", "expected": {"present": true, "order": "Two headings swapped"}, '
        '"expected_score": 0.5}\n'
        '{"name": "unlabelled", "expected": {"present": true}, "expected_score": 1.0}\n'
        '{"name": "right", "expected": {"present": false, "order": "Correct order"}, '
        '"expected_score": 0.0}\n'
    )
    # "right" labels `order`, which its own labels (present=false) never reach: a bad label
    # (dagtui.labels.check), exit 2 before the test; it used to pass silently, counted in the
    # table's "unused labels" column
    assert main(["test", str(graph)]) == 2
    err = capsys.readouterr().err
    assert ("meeting_summary.cases.jsonl:3: case 'right': node 'order' is labelled 'Correct "
            "order', but the case's own labels never reach it (their path: present=false)") in err
    code = main(["test", str(graph), "--lenient"])  # the label is dropped, with a warning
    captured = capsys.readouterr()
    out = captured.out
    assert "warning: label ignored: " in captured.err and "case 'right'" in captured.err
    assert code == 1
    assert "FAIL 0.40 wrong" in out and "expected_score is 0.50" in out
    assert "present=true → order ; order=Two headings swapped → score 4" in out
    assert "no label for node 'order'" in out
    assert "3 cases, 1 passed, 2 failed" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("order"))
    assert row.split()[-1] == "0"
    assert "1 label ignored (--lenient): 1 off the labelled path" in out

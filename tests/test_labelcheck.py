"""Bad labels are never dropped silently (`dagtui.labels.check`).

Every class of bad label — a node id the graph lacks, a verdict none of the node's, a label
of another node kind's shape, a score out of range, a label off the case's own labelled
path — is refused by `calibrate`, `test` and `run` with file:line and the case name, exit 2,
before any judge call (the loopback stub counts zero requests). `--lenient` makes each a
warning, counted in the summary, and the command behaves as if the label were absent. The
Python API raises `LabelError`, or with `lenient=True` warns; suites check each rule's labels
against its graph the same way.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from stub_server import StubServer

import dagtui
from dagtui.cli import main
from dagtui.graph.analysed import CheckedGraph
from dagtui.judges.labels import LabelsJudge
from dagtui.labels.check import (
    LabelError,
    LabelWarning,
    LenientCases,
    check_cases,
    label_problems,
)
from dagtui.run.cases import Case, load_cases

ROOT = Path(__file__).resolve().parent.parent

GRAPH = """\
[metric]
name = "Doc"
threshold = 0.5
cases = "doc.cases.jsonl"

[nodes.headings]
type = "task"
instructions = "List the headings of actual_output."
output_label = "Headings"
params = ["actual_output"]
children = ["present"]

[nodes.present]
type = "binary"
criteria = "Are there headings?"
params = ["actual_output"]
verdicts = [{ verdict = false, score = 0 }, { verdict = true, then = "order" }]

[nodes.order]
type = "non_binary"
criteria = "Are the headings in order?"
params = ["actual_output"]
verdicts = [{ verdict = "Correct order", then = "style" },
            { verdict = "Two headings swapped", score = 5 }]

[nodes.style]
type = "geval"
name = "Style"
params = ["actual_output"]
evaluation_steps = ["Is the prose clear?"]
"""

GOOD = {"headings": ["Intro"], "present": True, "order": "Correct order", "style": 7}

#: class -> (the bad case's labels, what the message says after "case 'bad': ")
BAD: dict[str, tuple[dict[str, Any], str]] = {
    "unknown_node": (
        {**GOOD, "presnt": True},
        "a label for 'presnt' (true), which is no node of the graph (did you mean 'present'?)"),
    "not_a_verdict": (
        {**GOOD, "order": "Correct Order"},
        "node 'order': 'Correct Order' is not one of its verdicts ('Correct order', 'Two "
        "headings swapped'); did you mean 'Correct order' (it differs only in case or "
        "spacing)?"),
    "items_on_a_judgement": (
        {**GOOD, "present": ["Intro"]},
        "node 'present' is a binary judgement, labelled with task items ['Intro']"),
    "verdict_on_a_task": (
        {**GOOD, "headings": True},
        "task node 'headings' is labelled true, a verdict; a task's label is its evidence "
        "text, a list of items"),
    "score_out_of_range": (
        {**GOOD, "style": 15},
        "scored leaf 'style': the score 15 is outside 0..10"),
    "off_path": (
        {"headings": ["Intro"], "present": False, "order": "Correct order"},
        "node 'order' is labelled 'Correct order', but the case's own labels never reach it "
        "(their path: present=false)"),
}


def _rows(bad: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": "good", "actual_output": "# Intro\ntext", "expected": GOOD},
            {"name": "bad", "actual_output": "# Intro\nmore", "expected": bad}]


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    path = tmp_path / "doc.toml"
    path.write_text(GRAPH)
    return path


def _write(tmp_path: Path, rows: list[dict[str, Any]], name: str = "doc.cases.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _judged(command: str, graph: Path, cases: Path, stub: StubServer, *extra: str) -> int:
    args = [command, str(graph), "--cases", str(cases), *extra]
    if command != "test":
        args += ["--model", "openai/gpt-4.1-mini", "--api-base", stub.base_url, "--no-cache",
                 "--retries", "0"]
    return main(args)


# --------------------------------------------------------------------------- refused


@pytest.mark.parametrize("command", ["calibrate", "test", "run"])
@pytest.mark.parametrize("which", sorted(BAD))
def test_each_bad_label_is_exit_2_with_file_line_and_case_before_any_call(
        graph, tmp_path, monkeypatch, capsys, command, which):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    labels, message = BAD[which]
    cases = _write(tmp_path, _rows(labels))
    with StubServer() as stub:
        code = _judged(command, graph, cases, stub)
        assert stub.calls == 0
    captured = capsys.readouterr()
    assert code == 2
    assert f"{cases}:2: case 'bad': {message}" in captured.err
    assert "1 bad label (--lenient ignores them with a warning each)" in captured.err
    assert "Traceback" not in captured.err
    assert "case 'good'" not in captured.err


def test_every_bad_label_of_a_file_is_listed_at_once(graph, tmp_path, capsys):
    rows = [{"name": f"bad-{k}", "actual_output": "x", "expected": v[0]}
            for k, v in sorted(BAD.items())]
    cases = _write(tmp_path, rows)
    assert main(["test", str(graph), "--cases", str(cases)]) == 2
    err = capsys.readouterr().err
    assert f"{len(BAD)} bad labels" in err
    for line, (k, (_, message)) in enumerate(sorted(BAD.items()), start=1):
        assert f"{cases}:{line}: case 'bad-{k}': {message}" in err


def test_json_and_toml_cases_files_name_the_line_of_the_case(graph, tmp_path, capsys):
    as_json = tmp_path / "doc.cases.json"
    as_json.write_text(json.dumps(_rows(BAD["not_a_verdict"][0]), indent=2))
    line = next(i for i, text in enumerate(as_json.read_text().splitlines(), start=1)
                if '"name": "bad"' in text) - 1  # the object's opening brace
    assert main(["test", str(graph), "--cases", str(as_json)]) == 2
    assert f"{as_json}:{line}: case 'bad': node 'order'" in capsys.readouterr().err
    as_toml = tmp_path / "doc.cases.toml"
    as_toml.write_text(
        '# labelled by hand\n[[cases]]\nname = "good"\nactual_output = "x"\n'
        '[cases.expected]\nheadings = ["Intro"]\npresent = false\n\n'
        '[[cases]]\nname = "bad"\nactual_output = "y"\n'
        '[cases.expected]\npresnt = true\n')
    assert main(["test", str(graph), "--cases", str(as_toml)]) == 2
    assert (f"{as_toml}:9: case 'bad': a label for 'presnt' (true), which is no node of "
            "the graph (did you mean 'present'?)") in capsys.readouterr().err


def test_calibrate_dry_run_refuses_bad_labels_too(graph, tmp_path, capsys):
    cases = _write(tmp_path, _rows(BAD["off_path"][0]))
    assert main(["calibrate", str(graph), "--cases", str(cases), "--dry-run",
                 "--model", "openai/gpt-4.1-mini"]) == 2
    assert "case 'bad': node 'order' is labelled" in capsys.readouterr().err


# --------------------------------------------------------------------------- --lenient


def _mixed(tmp_path: Path) -> tuple[Path, Path]:
    """A cases file with three bad labels, and the same file without them."""
    rows = [
        {"name": "c1", "actual_output": "# A", "expected": {**GOOD, "presnt": True}},
        {"name": "c2", "actual_output": "# B", "expected": {**GOOD, "order": "Correct Order"}},
        {"name": "c3", "actual_output": "# C", "expected": {
            "headings": ["C"], "present": False, "order": "Two headings swapped"}},
        {"name": "c4", "actual_output": "# D", "expected": GOOD, "expected_score": 0.7},
    ]
    clean = [dict(rows[0], expected=GOOD),
             dict(rows[1], expected={k: v for k, v in GOOD.items() if k != "order"}),
             dict(rows[2], expected={"headings": ["C"], "present": False}), rows[3]]
    return _write(tmp_path, rows, "bad.jsonl"), _write(tmp_path, clean, "clean.jsonl")


SUMMARY = ("3 labels ignored (--lenient): 1 unknown node, 1 not a verdict, "
           "1 off the labelled path")


def test_lenient_test_warns_counts_and_runs_as_if_the_labels_were_absent(graph, tmp_path,
                                                                         capsys):
    bad, clean = _mixed(tmp_path)
    want = main(["test", str(graph), "--cases", str(clean)])
    expected_out = capsys.readouterr().out
    code = main(["test", str(graph), "--cases", str(bad), "--lenient"])
    captured = capsys.readouterr()
    assert code == want == 1  # c2 lost its `order` label: that path has none
    assert captured.out.replace(str(bad), str(clean)) == expected_out + SUMMARY + "\n"
    assert captured.err.count("dagtui: warning: label ignored: ") == 3
    assert f"{bad}:2: case 'c2': node 'order': 'Correct Order'" in captured.err


def test_lenient_calibrate_measures_what_the_clean_file_measures(graph, tmp_path,
                                                                monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    bad, clean = _mixed(tmp_path)
    with StubServer() as stub:
        assert _judged("calibrate", graph, clean, stub, "--json", "clean.json") == 0
        assert _judged("calibrate", graph, bad, stub, "--json", "bad.json", "--lenient") == 0
    out = capsys.readouterr().out
    got, want = (json.loads((tmp_path / f).read_text()) for f in ("bad.json", "clean.json"))
    assert got["nodes"] == want["nodes"] and got["outcomes"] == want["outcomes"]
    assert got["nodes"]["order"]["cases"] == 2  # c1 and c4: c2's bad label is not counted
    assert len(got["ignored_labels"]) == 3 and want["ignored_labels"] == []
    assert f"note: {SUMMARY}" in out
    assert f"label ignored: {bad}:1: case 'c1': a label for 'presnt'" in out


def test_lenient_run_streams_the_cases_without_their_bad_labels(graph, tmp_path, monkeypatch,
                                                               capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    bad, clean = _mixed(tmp_path)
    with StubServer() as stub:
        want = _judged("run", graph, clean, stub, "-q")
        clean_out = capsys.readouterr().out
        code = _judged("run", graph, bad, stub, "-q", "--lenient", "--json", "r.json")
        captured = capsys.readouterr()
    assert code == want
    assert " ".join(captured.out.split()).endswith(SUMMARY)  # wrapped at 80 columns
    # the agreement lines (labels against the judge's answers) are the clean file's
    agreement = clean_out[clean_out.index("agreement"):] if "agreement" in clean_out else ""
    assert agreement and agreement in captured.out
    assert captured.err.count("dagtui: warning: label ignored: ") == 3
    results = [json.loads(line) for line in (tmp_path / "r.results.jsonl").read_text()
               .splitlines()]
    assert len(results) == 4


def test_a_bad_label_in_run_is_found_in_a_large_streamed_file(graph, tmp_path, monkeypatch,
                                                              capsys):
    monkeypatch.setenv("CI", "1")
    rows = [{"name": f"c{i}", "actual_output": "x", "expected": GOOD} for i in range(300)]
    rows[250]["expected"] = {**GOOD, "style": -1}
    cases = _write(tmp_path, rows)
    with StubServer() as stub:
        assert _judged("run", graph, cases, stub, "--shard", "1/1") == 2
        assert stub.calls == 0
    assert (f"{cases}:251: case 'c250': scored leaf 'style': the score -1 is outside 0..10"
            in capsys.readouterr().err)


def test_lenient_lists_the_first_20_warnings_and_counts_them_all(graph, tmp_path, capsys):
    rows = [{"name": f"c{i}", "actual_output": "x", "expected": {**GOOD, "stlye": 7}}
            for i in range(25)]
    cases = _write(tmp_path, rows)
    assert main(["test", str(graph), "--cases", str(cases), "--lenient"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("dagtui: warning: label ignored: ") == 20
    assert "dagtui: warning: ... and 5 more labels ignored" in captured.err
    assert "25 labels ignored (--lenient): 25 unknown node" in captured.out
    assert "(did you mean 'style'?)" in captured.err


# --------------------------------------------------------------------------- the API


def test_api_evaluate_and_calibrate_raise_before_any_call_or_warn_when_lenient(graph,
                                                                               tmp_path):
    bad, clean = _mixed(tmp_path)
    loaded = dagtui.load(graph)
    problems = dagtui.check_labels(loaded, str(bad))
    assert [(p.case, p.key, p.kind) for p in problems] == [
        ("c1", "presnt", "unknown_node"), ("c2", "order", "not_a_verdict"),
        ("c3", "order", "off_path")]
    with StubServer() as stub:
        opts: dict[str, Any] = {"judge": "openai/gpt-4.1-mini", "api_base": stub.base_url,
                                "cache": False, "retries": 0}
        with pytest.raises(LabelError) as exc:
            dagtui.evaluate(loaded, str(bad), **opts)
        assert f"{bad}:1: case 'c1': a label for 'presnt'" in str(exc.value)
        assert len(exc.value.problems) == 3
        with pytest.raises(LabelError):
            dagtui.calibrate(loaded, str(bad), **opts)
        assert stub.calls == 0
        with pytest.warns(LabelWarning) as caught:
            cal = dagtui.calibrate(loaded, str(bad), lenient=True, **opts)
        # only LabelWarnings: pytest.warns records every warning raised inside it (an
        # unclosed socket's ResourceWarning from an earlier test can land here)
        ours = [w for w in caught if issubclass(w.category, LabelWarning)]
        assert len(ours) == 3 and "case 'c3'" in str(ours[2].message)
        assert len(cal.ignored_labels) == 3 and SUMMARY in cal.notes
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the clean file warns of nothing
            want = dagtui.calibrate(loaded, str(clean), **opts)
    assert cal.to_dict()["nodes"] == want.to_dict()["nodes"]
    # a list of dicts, labels judge: the ignored labels are gone from the cases run
    rows = [json.loads(line) for line in bad.read_text().splitlines()]
    with pytest.warns(LabelWarning):
        report = dagtui.evaluate(loaded, rows, judge=LabelsJudge(), lenient=True)
    assert [r.status for r in report.results] == ["pass", "error", "fail", "pass"]


def test_label_problems_checks_one_case_for_a_streamed_loop(graph):
    graph = dagtui.load(graph).graph
    ok = Case("ok", {"actual_output": "x"}, dict(GOOD), 0.7)
    assert label_problems(graph, ok) == []
    # a Case built in Python is not checked by the cases-file loader: its score is here
    score = Case("s", {}, {"present": False}, 7.0)
    [p] = label_problems(graph, score)
    assert (p.kind, p.key) == ("out_of_range", "expected_score")
    assert p.format() == ("case 's': expected_score 7 is outside 0..1 (the graph's score; a "
                          "leaf's 0..10 score divided by 10)")
    # a verdict on a scored leaf, "yes" on a binary node, a malformed task table
    odd = Case("o", {}, {"headings": {"contain": ["x"]}, "present": "yes"})
    kinds = [(p.key, p.kind) for p in label_problems(graph, odd)]
    assert kinds == [("headings", "wrong_shape"), ("present", "not_a_verdict")]
    assert "did you mean true?" in label_problems(graph, odd)[1].message
    leaf = Case("l", {}, {**GOOD, "style": "good"})
    assert "its label is a score from 0 to 10" in label_problems(graph, leaf)[0].message
    # a judgement without a usable label opens every branch: nothing below it is off-path
    open_case = Case("u", {}, {"order": "Two headings swapped"})
    assert label_problems(graph, open_case) == []
    kept, ignored = check_cases(graph, [ok, score, odd], lenient=True)
    assert kept[0] is ok and kept[1].expected_score is None and kept[2].expected == {}
    assert len(ignored) == 3


def test_lenient_cases_wrap_a_stream_and_keep_its_length(graph, tmp_path):
    bad, _ = _mixed(tmp_path)
    from dagtui.run.case_stream import open_cases

    stream = LenientCases(dagtui.load(graph).graph, open_cases(bad))
    assert len(stream) == 4
    first, second = list(stream), list(stream)  # read again per pass
    assert [c.expected for c in first] == [c.expected for c in second]
    assert "presnt" not in first[0].expected and "order" not in first[1].expected
    assert [c.line for c in first] == [1, 2, 3, 4]


def test_shipped_examples_have_no_bad_labels():
    for graph_path in sorted((ROOT / "graphs").glob("*.toml")):
        checked = CheckedGraph.read(graph_path)
        if checked.is_suite or checked.graph is None or not checked.graph.metric.cases:
            continue
        graph = checked.graph
        cases = load_cases(graph_path.parent / str(graph.metric.cases))
        assert check_cases(graph, cases) == (cases, []), graph_path.name


# --------------------------------------------------------------------------- suites

def test_a_suite_rule_label_for_an_unknown_node_is_exit_2_with_a_did_you_mean(tmp_path,
                                                                             capsys):
    suite = ROOT / "graphs" / "suites" / "spans.toml"
    rows = [json.loads(line) for line in _suite_labels(suite).read_text().splitlines()]
    rule = next(k for k, v in rows[0]["expected"].items() if isinstance(v, dict))
    node = next(n for n in rows[0]["expected"][rule] if n != "expected_score")
    rows[0]["expected"][rule][node + "x"] = rows[0]["expected"][rule].pop(node)
    cases = _write(tmp_path, rows, "suite.jsonl")
    assert main(["test", str(suite), "--cases", str(cases)]) == 2
    err = capsys.readouterr().err
    assert (f"{cases}:1: case '{rows[0]['name']}': rule '{rule}': a label for '{node}x'"
            in err and f"(did you mean '{node}'?)" in err)
    code = main(["test", str(suite), "--cases", str(cases), "--lenient"])
    out = capsys.readouterr().out
    assert code in (0, 1)
    assert "1 label ignored (--lenient): 1 unknown node" in out


def _suite_labels(suite: Path) -> Path:
    from dagtui.suite import load_suite_file

    load = load_suite_file(suite)
    assert load.suite is not None
    return suite.parent / (load.suite.meta.labels or load.suite.meta.cases or "")



def test_a_true_string_on_a_check_node_is_accepted_and_agrees_with_its_code(tmp_path, capsys):
    """"true" labels a boolean check as true wherever labels are read: the checker accepts
    it, and `dagtui test` compares it as true (it used to count a disagreement)."""
    graph = tmp_path / "c.toml"
    graph.write_text('[metric]\nname = "C"\n[nodes.is_json]\ntype = "check"\ncheck = "json"\n'
                     'param = "actual_output"\n'
                     'verdicts = [{ verdict = false, score = 0 }, { verdict = true, score = 10 }]\n')
    cases = _write(tmp_path, [{"name": "a", "actual_output": "{}",
                               "expected": {"is_json": "true"}, "expected_score": 1}])
    assert main(["test", str(graph), "--cases", str(cases)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "is_json" in line)
    assert row.split()[-2] == "1/1"

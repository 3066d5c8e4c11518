"""What a user met walking through the README, each now a one-line answer (issue #12).

In-process CLI (`dagtui.cli.main`): a suite's labels file used by `test`, `test DIR`,
`edit --list-starters` without a file, one exit code for a file that does not parse, flag
errors that name the flag and value, a suggestion for a misspelt flag, `--case` out of
range, DeepEval JSON refused with the way forward, a missing cases file reported with its
line, and the Python snippet's result attributes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_cli_validate import GOOD as VALIDATE_GOOD

from dagtui.cli import main
from dagtui.run.cluster import max_workers

ROOT = Path(__file__).resolve().parent.parent
GRAPHS = ROOT / "graphs"
MEETING = str(GRAPHS / "meeting_summary.toml")

GOOD = VALIDATE_GOOD.replace('model = "gpt-4.1-mini"\n',
                            'model = "gpt-4.1-mini"\ncases = "polite.cases.jsonl"\n')
CASE = {"name": "c1", "actual_output": "Thanks!", "expected": {"j": True},
        "expected_score": 1.0}


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit code, stdout, stderr of `dagtui ARGV`; argparse's SystemExit becomes a code."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def write_graph(folder: Path, name: str = "polite.toml", *, cases: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(GOOD, encoding="utf-8")
    if cases:
        (folder / "polite.cases.jsonl").write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    return path


# -- a) the shipped suite tests against its labels file ------------------------------------


def test_suite_test_uses_the_labels_file_it_declares(capsys) -> None:
    code, out, err = cli(capsys, "test", str(GRAPHS / "suites" / "spans.toml"))
    assert code == 0, out + err
    assert "7 cases, 7 passed, 0 failed" in out


def test_suite_cases_flag_still_wins(capsys) -> None:
    suite = GRAPHS / "suites"
    code, out, err = cli(capsys, "test", str(suite / "spans.toml"),
                         "--cases", str(suite / "spans.cases.jsonl"))
    assert code == 1 and "no label" in out  # the unlabelled run file, as asked
    assert "none of the 50 cases has labels" in err and "[suite].labels" in err


def test_graph_test_on_unlabelled_cases_says_so_once(tmp_path, capsys) -> None:
    graph = write_graph(tmp_path)
    bare = {k: v for k, v in CASE.items() if k not in ("expected", "expected_score")}
    (tmp_path / "polite.cases.jsonl").write_text(json.dumps(bare) + "\n", encoding="utf-8")
    code, _, err = cli(capsys, "test", str(graph))
    assert code == 1
    assert err.count("its one case has no labels") == 1 and "[metric].cases" in err


def test_suite_missing_labels_file_is_a_warning_with_its_line(tmp_path, capsys) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text('[suite]\nname = "s"\nlabels = "gone.jsonl"\n\n[rules.a]\n'
                     'check = { check = "regex", param = "actual_output", pattern = "x" }\n',
                     encoding="utf-8")
    code, out, _ = cli(capsys, "validate", str(suite))
    assert code == 0
    assert f"{suite}:3:10: warning SUI104" in out and "gone.jsonl" in out


# -- b) validate reports a [metric].cases file that does not exist --------------------------


def test_missing_cases_file_is_dag113_at_its_line(tmp_path, capsys) -> None:
    graph = write_graph(tmp_path, cases=False)
    code, out, _ = cli(capsys, "validate", str(graph))
    assert code == 0  # a warning: --cases can still name another file
    assert f"{graph}:4:9: warning DAG113" in out and "polite.cases.jsonl" in out
    assert cli(capsys, "validate", "--strict", str(graph))[0] == 1
    (tmp_path / "polite.cases.jsonl").write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    code, out, _ = cli(capsys, "validate", str(graph))
    assert code == 0 and "DAG113" not in out


# -- c) test DIR, edit --list-starters ----------------------------------------------------


def test_test_directory_tests_every_graph_below(tmp_path, capsys) -> None:
    write_graph(tmp_path / "a")
    write_graph(tmp_path / "b" / "deeper")
    write_graph(tmp_path / "rules", "rule.toml", cases=False)
    (tmp_path / "rules" / "rule.toml").write_text(GOOD.replace('cases = "polite.cases.jsonl"\n',
                                                               ""), encoding="utf-8")
    code, out, err = cli(capsys, "test", str(tmp_path))
    assert code == 0, out + err
    assert out.count("1 case, 1 passed, 0 failed") == 2
    assert "rule.toml: skipped: no [metric].cases" in out


def test_test_directory_failure_and_empty_directory(tmp_path, capsys) -> None:
    folder = tmp_path / "g"
    write_graph(folder)
    bad = dict(CASE, expected_score=0.0)
    (folder / "polite.cases.jsonl").write_text(json.dumps(bad) + "\n", encoding="utf-8")
    assert cli(capsys, "test", str(tmp_path))[0] == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = cli(capsys, "test", str(empty))
    assert code == 2 and "no graph files" in err


def test_test_named_graph_without_cases_is_still_an_error(tmp_path, capsys) -> None:
    path = tmp_path / "g.toml"
    path.write_text(GOOD.replace('cases = "polite.cases.jsonl"\n', ""), encoding="utf-8")
    code, _, err = cli(capsys, "test", str(path))
    assert code == 2 and "[metric].cases is not set" in err


def test_edit_list_starters_needs_no_file(capsys) -> None:
    code, out, _ = cli(capsys, "edit", "--list-starters")
    names = [line.split()[0] for line in out.splitlines() if not line.startswith(" ")]
    assert code == 0 and names == ["extract-judge", "blank", "gate-geval",
                                   "extract-classify", "check-first", "claims"]
    # each with what the editor's chooser says of it (issue 28), within 80 columns
    from dagtui.graph.starters import starter_description

    assert " ".join(out.split()).count(" ".join(starter_description("blank").split())) == 1
    assert max(map(len, out.splitlines())) <= 80
    code, _, err = cli(capsys, "edit")
    assert code == 2 and "--list-starters" in err


# -- d) one exit code for a file that does not parse ------------------------------------


@pytest.mark.parametrize("argv", [
    ["validate"], ["test"], ["run"], ["step"], ["export", "--to", "dot"], ["fmt", "--check"],
    ["calibrate"],
])
@pytest.mark.parametrize("text", ["[metric\nname = 1\n", '[suite]\nname = "s"\n[rules.a\n'])
def test_a_file_that_does_not_parse_exits_2_everywhere(tmp_path, capsys, argv, text) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(text, encoding="utf-8")
    code, out, err = cli(capsys, argv[0], str(path), *argv[1:])
    assert code == 2, (argv, out, err)
    assert f"{path}:" in out + err and "TOML syntax" in out + err


def test_import_of_json_that_does_not_parse_exits_2(tmp_path, capsys) -> None:
    path = tmp_path / "dag.json"
    path.write_text('{"nodes": {', encoding="utf-8")
    code, _, err = cli(capsys, "import", str(path))
    assert code == 2 and str(path) in err


# -- e) flags -----------------------------------------------------------------------------


@pytest.mark.parametrize("flag, value, words", [
    ("--concurrency", "abc", "a whole number >= 1"),
    ("--concurrency", "0", "a whole number >= 1"),
    ("--workers", "0", f"a whole number from 1 to {max_workers()} (twice this machine's "
                       "cores, at least 8) or 'auto'"),
    ("--workers", "100000", f"a whole number from 1 to {max_workers()} (twice this "
                            "machine's cores, at least 8) or 'auto'"),
    ("--rpm", "1e-300", "a number of requests a minute from 0.1 to 1,000,000"),
    ("--timeout", "-1", "a number above 0"),
    ("--timeout", "nan", "a number above 0"),
    ("--retries", "-2", "a whole number >= 0"),
])
def test_bad_flag_value_names_flag_and_value(capsys, flag, value, words) -> None:
    code, _, err = cli(capsys, "run", MEETING, flag, value)
    assert code == 2
    assert f"argument {flag}: must be {words}, got '{value}'" in err


def test_misspelt_flag_suggests_the_right_one(capsys) -> None:
    code, _, err = cli(capsys, "run", MEETING, "--concurency", "3")
    assert code == 2
    assert "unrecognized arguments: --concurency 3 (did you mean '--concurrency'?)" in err
    code, _, err = cli(capsys, "run", MEETING, "--tmeout=3", "--concurency", "3")
    assert "--tmeout (did you mean '--timeout'?)" in err
    assert "--concurency (did you mean '--concurrency'?)" in err
    code, _, err = cli(capsys, "valdate", MEETING)
    assert code == 2 and "(did you mean 'validate'?)" in err


def test_flags_are_not_abbreviated(capsys) -> None:
    code, _, err = cli(capsys, "run", MEETING, "--conc", "3")
    assert code == 2 and "(did you mean '--concurrency'?)" in err


def test_step_case_index_out_of_range_says_how_many(capsys) -> None:
    code, _, err = cli(capsys, "step", MEETING, "--case", "99")
    assert code == 2
    n = len((GRAPHS / "meeting_summary.cases.jsonl").read_text().splitlines())
    assert f"case index 99 is out of range: there are {n} cases, numbered 0 to {n - 1}" in err
    code, _, err = cli(capsys, "step", MEETING, "--case", "no such")
    assert code == 2 and f"no case named 'no such' ({n} cases:" in err


@pytest.fixture(scope="module")
def deepeval_json(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dj") / "dag.json"
    assert main(["export", MEETING, "--to", "deepeval-json", "-o", str(path)]) == 0
    return path


@pytest.mark.parametrize("command", ["validate", "test", "run", "step", "edit", "calibrate"])
def test_deepeval_json_says_import_it_first(capsys, deepeval_json, command) -> None:
    code, out, err = cli(capsys, command, str(deepeval_json))
    assert code == 2
    assert "this is DeepEval JSON" in out + err and "`dagtui import` it first" in out + err


# -- g) the Python snippet of docs/api.md (it was the README's) ---------------------------


def test_api_page_result_attributes_exist() -> None:
    import dagtui
    from dagtui.run.cases import load_cases

    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert "result.status" in page and "result.error" in page
    graph = dagtui.load(MEETING)
    case = load_cases(GRAPHS / "meeting_summary.cases.jsonl")[0]
    result = graph.measure(case, judge="labels")
    assert result.status == "pass" and result.error is None and result.error_kind is None
    assert result.success is True and result.score == 1.0 and result.path
    assert result.reason is not None and result.steps
    cases = load_cases(GRAPHS / "meeting_summary.cases.jsonl")
    report = dagtui.evaluate(graph, cases, judge="labels", concurrency=16)
    assert len(report.results) == len(cases) and all(r.error is None for r in report.results)
    from dagtui.graph.validate import check_file

    r = check_file(MEETING)
    assert r.ok and r.errors == [] and "calls" in r.paths.calls_text()


def test_shipped_suite_copy_keeps_working_elsewhere(tmp_path, capsys) -> None:
    """The labels path is relative to the suite file, not the working directory."""
    copy = tmp_path / "suites"
    shutil.copytree(GRAPHS / "suites", copy)
    code, out, _ = cli(capsys, "test", str(copy / "spans.toml"))
    assert code == 0 and "7 passed" in out

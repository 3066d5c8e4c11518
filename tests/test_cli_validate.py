"""`dagtui validate` from the outside: exit codes, output formats, and no tracebacks ever."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dagtui.cli import main

ROOT = Path(__file__).resolve().parent.parent

GOOD = """[metric]
name = "Polite"
model = "gpt-4.1-mini"

[nodes.j]
type = "binary"
criteria = "Is the answer polite?"
params = ["actual_output"]
verdicts = [
  { verdict = true, score = 10 },
  { verdict = false, score = 0 },
]
"""
BROKEN = GOOD.replace('{ verdict = false, score = 0 }', '{ verdict = false, then = "nxt" }')
WARNED = GOOD.replace('model = "gpt-4.1-mini"\n', "")


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["validate", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def test_clean_graph_exits_0(capsys, tmp_path) -> None:
    code, out, _ = run_cli(capsys, str(write(tmp_path, "g.toml", GOOD)))
    assert code == 0
    assert out.strip() == "1 file checked: 0 errors, 0 warnings"


def test_errors_exit_1_compiler_style(capsys, tmp_path) -> None:
    p = write(tmp_path, "g.toml", BROKEN)
    code, out, _ = run_cli(capsys, str(p))
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith(f"{p}:11:")
    assert "error DAG008 [j.verdicts]" in first
    assert out.splitlines()[-1] == "1 file checked: 1 error, 0 warnings"


def test_warnings_pass_unless_strict(capsys, tmp_path) -> None:
    p = str(write(tmp_path, "g.toml", WARNED))
    code, out, _ = run_cli(capsys, p)
    assert code == 0 and "warning DAG108" in out
    code, _, _ = run_cli(capsys, p, "--strict")
    assert code == 1


def test_json_format(capsys, tmp_path) -> None:
    p = write(tmp_path, "g.toml", BROKEN)
    code, out, _ = run_cli(capsys, str(p), "--format", "json", "--paths")
    assert code == 1
    doc = json.loads(out)
    assert doc["summary"] == {"files": 1, "errors": 1, "warnings": 0, "notes": 0}
    (entry,) = doc["files"]
    assert entry["ok"] is False
    (d,) = entry["diagnostics"]
    assert d["code"] == "DAG008" and d["node"] == "j" and d["line"] == 11
    assert d["severity"] == "error"
    assert entry["paths"]["paths"]


def test_json_paths_of_a_clean_graph(capsys, tmp_path) -> None:
    code, out, _ = run_cli(capsys, str(write(tmp_path, "g.toml", GOOD)), "--format", "json",
                           "--paths")
    assert code == 0
    paths = json.loads(out)["files"][0]["paths"]
    assert paths["complete"] is True
    assert (paths["min_calls"], paths["max_calls"]) == (1, 1)
    assert paths["reachable_scores"] == [0.0, 1.0]
    assert [p["choices"] for p in paths["paths"]] == [
        [{"node": "j", "verdict": True}], [{"node": "j", "verdict": False}]]


def test_github_format(capsys, tmp_path) -> None:
    p = write(tmp_path, "g.toml", BROKEN)
    code, out, err = run_cli(capsys, str(p), "--format", "github")
    assert code == 1
    (line,) = out.splitlines()
    assert line.startswith(f"::error file={p},line=11,")
    assert "title=DAG008" in line
    assert "1 error" in err


def test_paths_table(capsys) -> None:
    code, out, _ = run_cli(capsys, str(ROOT / "graphs" / "meeting_summary.toml"), "--paths")
    assert code == 0
    assert "present=false" in out
    assert "judge calls: 2–3 calls/case (expected 2.50)" in out
    assert "reachable scores: 0, 0.2, 0.4, 1" in out
    assert "dead nodes: none" in out


def test_examples_directory_is_clean(capsys) -> None:
    code, out, err = run_cli(capsys, str(ROOT / "graphs"))
    assert code == 0, out + err
    assert "0 errors" in out.splitlines()[-1]


def test_directory_skips_cases_files_and_checks_suites(capsys, tmp_path) -> None:
    """A directory's suite files are checked like its graphs (issue 28: a suite under
    graphs/suites was skipped); cases files and hidden folders are not."""
    write(tmp_path, "a/g.toml", GOOD)
    write(tmp_path, "a/g.cases.toml", '[[cases]]\nname = "x"\n')
    write(tmp_path, "a/suite.toml", '[suite]\nname = "s"\n[rules.r]\nlabel = "R"\n')
    write(tmp_path, ".hidden/bad.toml", "not toml [")
    code, out, _ = run_cli(capsys, str(tmp_path))
    assert code == 1  # the suite's rule has neither a graph nor a check
    assert "suite.toml:" in out and "SUI003" in out
    assert out.splitlines()[-1].startswith("2 files checked: 1 error")
    assert "cases.toml" not in out and "bad.toml" not in out


def test_directory_finds_broken_graphs(capsys, tmp_path) -> None:
    write(tmp_path, "ok.toml", GOOD)
    write(tmp_path, "sub/bad.toml", BROKEN)
    code, out, _ = run_cli(capsys, str(tmp_path))
    assert code == 1
    assert "bad.toml:11:" in out and "2 files checked: 1 error" in out


@pytest.mark.parametrize(
    "name, content, expected_code, fragment",
    [
        ("empty.toml", "", 1, "DAG018"),
        ("garbage.toml", bytes(range(256)) * 8, 2, "binary"),
        ("latin1.toml", "[metric]\nname = \"caf\xe9\"\n".encode("latin-1"), 2, "UTF-8"),
        ("shape1.toml", "nodes = 3\n", 1, "DAG004"),
        ("shape2.toml", "[nodes]\nx = 1\n", 1, "DAG004"),
        ("syntax.toml", "[metric\n", 2, "DAG001"),  # does not parse: input error
    ],
)
def test_bad_inputs_get_one_line_messages(capsys, tmp_path, name, content, expected_code,
                                          fragment) -> None:
    p = write(tmp_path, name, content)
    code, out, err = run_cli(capsys, str(p))
    assert code == expected_code
    problems = [line for line in (out + err).splitlines() if "checked:" not in line]
    assert len(problems) == 1, problems
    assert fragment in problems[0] and problems[0].startswith(str(p))


def test_huge_file_is_refused(capsys, tmp_path) -> None:
    p = write(tmp_path, "big.toml", "# " + "x" * (5 * 1024 * 1024) + "\n")
    code, out, err = run_cli(capsys, str(p))
    assert code == 2
    assert "MB" in out and "DAG022" in out


def test_missing_file_and_empty_directory(capsys, tmp_path) -> None:
    code, out, err = run_cli(capsys, str(tmp_path / "nope.toml"))
    assert code == 2 and "no such file" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run_cli(capsys, str(empty))
    assert code == 2 and "no graph files" in err


def test_unreadable_input_wins_over_errors(capsys, tmp_path) -> None:
    p = write(tmp_path, "g.toml", BROKEN)
    code, _, _ = run_cli(capsys, str(p), str(tmp_path / "missing.toml"))
    assert code == 2


def test_bad_flag_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--format", "xml", "x.toml"])
    assert exc.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_subprocess_run_has_no_traceback(tmp_path) -> None:
    garbage = write(tmp_path, "garbage.toml", os.urandom(2048) + b"\x00")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run(
        [sys.executable, "-m", "dagtui", "validate", str(garbage), str(tmp_path / "nope.toml"),
         str(ROOT / "graphs" / "meeting_summary.toml")],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "3 files checked" in proc.stdout


def test_device_and_empty_path_are_refused(capsys) -> None:
    code, out, err = run_cli(capsys, "/dev/zero")
    assert code == 2 and "not a regular file" in out
    code, out, err = run_cli(capsys, "")
    assert code == 2 and "empty path" in err


def test_a_named_suite_file_is_checked_as_a_suite(capsys) -> None:
    code, out, err = run_cli(capsys, str(ROOT / "graphs" / "suites" / "spans.toml"))
    assert code == 0, out + err
    assert "DAG002" not in out  # not misread as a graph with unknown top-level keys
    assert out.splitlines()[-1].startswith("1 file checked: 0 errors")

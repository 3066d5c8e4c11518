"""The smaller holes of issue #21 (11d, f, g, h, i), each on real files and a real run:
trace names that never collide, run settings out of range refused by the parser, calibrate
exiting 3 when every case ended in a judge error, a case name that is a list or an object,
and a FIFO at the keys file. Judge calls go to the loopback stub."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from stub_server import Fault, StubServer, prompt_kind, smart_answer

from dagtui.cli import main
from dagtui.exitcodes import ExitCode
from dagtui.keyfile import KeymapError, load_keymap
from dagtui.report.trace import trace_file_name
from dagtui.run.cases import CaseError, load_cases
from dagtui.run.cluster import max_workers

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parent.parent
MEETING = str(ROOT / "graphs" / "meeting_summary.toml")
MODEL = "openai/gpt-4.1-mini"

# -- 11d: trace file names ------------------------------------------------------------------

SUITE = """\
[suite]
name = "names"

[rules."r/x"]
check = { check = "length", param = "actual_output", min = 1 }

[rules.r_x]
check = { check = "length", param = "actual_output", min = 1 }

[rules."r:x"]
check = { check = "length", param = "actual_output", min = 1 }
"""


def test_rules_whose_names_reduce_alike_get_a_trace_file_each(tmp_path: Path, capsys) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE)
    cases = tmp_path / "c.jsonl"
    cases.write_text(json.dumps({"name": "a/b", "actual_output": "yes"}) + "\n"
                     + json.dumps({"name": "a_b", "actual_output": "yes"}) + "\n")
    traces = tmp_path / "t"
    code = main(["run", str(suite), "--cases", str(cases), "--model", MODEL, "--api-base",
                 "http://127.0.0.1:9", "--no-cache", "-q", "--trace-dir", str(traces)])
    assert code == 0
    names = sorted(p.name for p in traces.iterdir())
    assert len(names) == 6  # 2 cases x 3 rules: none overwrote another
    rules = {json.loads((traces / n).read_text())["steps"][0]["node"] for n in names}
    assert rules == {"r/x", "r_x", "r:x"}
    assert "002_a_b__r_x.json" in names  # a name already safe is kept as it is
    assert all(n.isascii() and "/" not in n and ":" not in n for n in names)


def test_trace_file_names_are_injective() -> None:
    parts = ["r/x", "r_x", "r:x", "r x", "_r_x", "r_x.", "x" * 61, "x" * 60, "", "x", "ü"]
    names = [trace_file_name(0, "case", p) for p in parts]
    assert len(set(names)) == len(parts)
    assert trace_file_name(0, "case", "r_x") == "001_case__r_x.json"


# -- 11f: run settings out of range ---------------------------------------------------------

@pytest.mark.parametrize(("argv", "flag", "words"), [
    (["run", MEETING, "--rpm", "1e-300"], "--rpm", "from 0.1 to 1,000,000"),
    (["run", MEETING, "--rpm", "1e9"], "--rpm", "from 0.1"),
    (["run", MEETING, "--rpm", "nan"], "--rpm", "from 0.1"),
    (["run", MEETING, "--workers", "100000"], "--workers", f"from 1 to {max_workers()}"),
    (["run", MEETING, "--workers", "0"], "--workers", "from 1 to"),
    (["calibrate", MEETING, "--temperature", "nan"], "--temperature", "from 0 to 2"),
    (["calibrate", MEETING, "--temperature", "2.5"], "--temperature", "from 0 to 2"),
    (["calibrate", MEETING, "--temperature", "-0.1"], "--temperature", "from 0 to 2"),
    (["calibrate", MEETING, "--min-kappa", "5"], "--min-kappa", "from -1 to 1"),
    (["calibrate", MEETING, "--min-kappa", "inf"], "--min-kappa", "from -1 to 1"),
])
def test_run_settings_out_of_range_are_usage_errors(argv: list[str], flag: str, words: str,
                                                     capsys) -> None:
    with StubServer() as stub:
        with pytest.raises(SystemExit) as exc:
            main([*argv, "--model", MODEL, "--api-base", stub.base_url, "--no-cache"])
        assert stub.calls == 0
    assert exc.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert f"argument {flag}" in err and words in err, err
    assert "Traceback" not in err


def test_settings_in_range_are_taken(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    with StubServer() as stub:
        assert main(["run", MEETING, "--model", MODEL, "--api-base", stub.base_url,
                     "--no-cache", "-q", "--rpm", "600000", "--workers", "1"]) == 0
        assert main(["calibrate", MEETING, "--model", MODEL, "--api-base", stub.base_url,
                     "--no-cache", "--temperature", "2", "--min-kappa", "-1"]) == 0


def test_a_suite_rule_rpm_out_of_range_is_refused(tmp_path: Path, capsys) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE.replace('[rules.r_x]\n', '[rules.r_x]\nrpm = 1e-300\n'))
    assert main(["validate", str(suite)]) == 1
    out = capsys.readouterr()
    assert "SUI018" in out.out + out.err and "from 0.1" in out.out + out.err


# -- 11g: calibrate when every case ended in an error ---------------------------------------

def test_calibrate_exits_3_when_every_case_ended_in_a_judge_error(tmp_path: Path, monkeypatch,
                                                                  capsys) -> None:
    """The task node answers (so it is measured), every judgement after it fails: no case
    has a score of its own, which must not look like a green calibration."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")

    def first_node_only(body: dict) -> object:
        return smart_answer(body) if prompt_kind(body) == "task" else Fault("500")

    with StubServer(first_node_only) as stub:
        code = main(["calibrate", MEETING, "--model", MODEL, "--api-base", stub.base_url,
                     "--no-cache", "--retries", "0"])
        assert stub.calls > 0
    assert code == ExitCode.JUDGE
    out = capsys.readouterr().out
    assert "error" in out and "Traceback" not in out


# -- 11h: a case name that is a list or an object -------------------------------------------

@pytest.mark.parametrize(("name", "words"), [(["x"], "a list"), ({"a": 1}, "an object"),
                                             (True, "True")])
@pytest.mark.parametrize("key", ["name", "id"])
def test_a_case_name_that_is_not_text_is_refused_with_file_and_line(
        tmp_path: Path, name: object, words: str, key: str, capsys) -> None:
    cases = tmp_path / "c.jsonl"
    cases.write_text(json.dumps({"name": "fine", "actual_output": "x"}) + "\n"
                     + json.dumps({key: name, "actual_output": "x"}) + "\n")
    with pytest.raises(CaseError, match=rf"c\.jsonl:2: case 2: '{key}' must be text"):
        load_cases(cases)
    assert main(["test", MEETING, "--cases", str(cases)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert f"c.jsonl:2: case 2: '{key}' must be text (or a number), got {words}" in err


def test_a_number_is_still_a_case_name(tmp_path: Path) -> None:
    cases = tmp_path / "c.jsonl"
    cases.write_text(json.dumps({"name": 7, "actual_output": "x"}) + "\n")
    assert load_cases(cases)[0].name == "7"


# -- 11i: a FIFO at the keys file -----------------------------------------------------------

def test_a_fifo_at_the_keys_file_is_refused(tmp_path: Path) -> None:
    keys = tmp_path / "dagtui" / "keys.toml"
    keys.parent.mkdir()
    os.mkfifo(keys)
    with pytest.raises(KeymapError, match="keys.toml") as exc:
        load_keymap({}, keys)
    assert "FIFO" in str(exc.value) or "pipe" in str(exc.value)


def test_edit_refuses_a_fifo_keys_file_in_a_real_process(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "dagtui").mkdir()
    os.mkfifo(tmp_path / "dagtui" / "keys.toml")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}
    env.pop("DAGTUI_KEYS", None)
    proc = subprocess.run([sys.executable, "-m", "dagtui", "step", MEETING, "--case", "0"],
                          capture_output=True, text=True, timeout=60, env=env,
                          stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert proc.returncode == ExitCode.USAGE, proc.stderr
    assert "keys.toml" in proc.stderr and "Traceback" not in proc.stderr

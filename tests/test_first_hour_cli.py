"""The command-line snags of a new user's first hour (issue 28): a closed pipe, where
`.dagtui/` lives, key remaps, `edit DIR`, directories holding suites, and the small print
(plurals, usage errors, `--list-starters`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_validate import BROKEN
from test_cli_validate import GOOD as VALIDATE_GOOD

from dagtui.cli import main
from dagtui.commands.closed_pipe import PipeGuard
from dagtui.keyfile import KeymapError, checked_keymap
from dagtui.workdir import calibration_file, workdir_for

ROOT = Path(__file__).resolve().parent.parent
CASE = {"name": "c1", "actual_output": "Thanks!", "expected": {"j": True},
        "expected_score": 1.0}


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


# -- 3. a closed stdout keeps the exit code -------------------------------------------------


def closed_pipe_run(*argv: str, cwd: Path) -> tuple[int, str]:
    """`dagtui ARGV` with its stdout a pipe whose reader is already gone (what `| head -1`
    leaves once head has its line): every write meets EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, "-m", "dagtui", *argv], stdout=write,
                              stderr=subprocess.PIPE, cwd=cwd, timeout=120, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(write)
    return proc.returncode, proc.stderr


def test_a_closed_pipe_never_turns_a_failure_into_success(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "good.toml").write_text(VALIDATE_GOOD, encoding="utf-8")
    for _ in range(3):  # it was a race for `test`: twice in three runs
        code, err = closed_pipe_run("validate", "bad.toml", cwd=tmp_path)
        assert code == 1, err
        assert "Traceback" not in err and "Exception ignored" not in err
    assert closed_pipe_run("validate", "good.toml", cwd=tmp_path)[0] == 0
    # output far beyond a pipe's buffer: the pipe breaks mid-command, not at the end
    many = tmp_path / "many"
    many.mkdir()
    for i in range(150):
        (many / f"bad{i}.toml").write_text(BROKEN, encoding="utf-8")
    code, err = closed_pipe_run("validate", "many", cwd=tmp_path)
    assert code == 1 and "Traceback" not in err


def test_a_closed_pipe_keeps_a_failing_test_failing(tmp_path: Path) -> None:
    graph = tmp_path / "polite.toml"
    graph.write_text(VALIDATE_GOOD, encoding="utf-8")
    wrong = {**CASE, "expected_score": 0.0}  # the labels lead to 1.0
    (tmp_path / "c.jsonl").write_text(json.dumps(wrong) + "\n", encoding="utf-8")
    for _ in range(3):
        code, err = closed_pipe_run("test", "polite.toml", "--cases", "c.jsonl", cwd=tmp_path)
        assert code == 1, err


def test_the_guard_drops_output_after_the_reader_left() -> None:
    class Gone:
        written: list[str] = []

        def write(self, text: str) -> int:
            if self.written:
                raise BrokenPipeError
            self.written.append(text)
            return len(text)

        def flush(self) -> None:
            return None

    stream = Gone()
    guard = PipeGuard(stream)  # type: ignore[arg-type]
    assert guard.write("one\n") == 4 and not guard.broken
    assert guard.write("two\n") == 4 and guard.broken  # no exception: dropped
    guard.write("three\n")
    guard.flush()
    assert stream.written == ["one\n"]


# -- 4. .dagtui/ follows the graph ----------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with graphs in two sub-folders of the same name, and the rule of
    where `.dagtui/` lives in force (not the tests' own DAGTUI_DIR)."""
    monkeypatch.delenv("DAGTUI_DIR", raising=False)
    root = tmp_path / "proj"
    for sub in ("a", "b"):
        (root / sub).mkdir(parents=True)
        (root / sub / "g.toml").write_text(VALIDATE_GOOD, encoding="utf-8")
    return root


def test_the_workdir_is_found_from_the_graph_not_the_cwd(project: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    # none yet: one beside the graph
    assert workdir_for(project / "a" / "g.toml") == (project / "a" / ".dagtui").resolve()
    (project / ".dagtui").mkdir()
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    for cwd in (project, project / "a", elsewhere):  # the same one from anywhere
        monkeypatch.chdir(cwd)
        found = workdir_for(os.path.relpath(project / "a" / "g.toml", cwd))
        assert found == (project / ".dagtui").resolve()
    # same-named graphs keep their own calibration file, keyed by path
    assert calibration_file(project / "a" / "g.toml") == \
        (project / ".dagtui" / "calibration" / "a" / "g.json").resolve()
    assert calibration_file(project / "a" / "g.toml") != calibration_file(project / "b" / "g.toml")


def test_the_search_stops_at_a_repository_root(project: Path) -> None:
    (project.parent / ".dagtui").mkdir()  # above the repository: not the project's
    (project / ".git").mkdir()
    assert workdir_for(project / "a" / "g.toml") == (project / "a" / ".dagtui").resolve()


def test_the_editor_finds_a_calibration_saved_from_another_directory(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dagtui.commands.calibrate import save_latest
    from dagtui.tui.calibration import load_calibration

    monkeypatch.chdir(project)
    saved = save_latest("a/g.toml", json.dumps({"nodes": {"j": {"kappa": 0.9}}}))
    assert saved is not None and saved.resolve().is_relative_to(project / "a" / ".dagtui")
    monkeypatch.chdir(project / "a")  # the editor, opened from the graph's folder
    assert load_calibration("g.toml") == {"nodes": {"j": {"kappa": 0.9}}}
    assert load_calibration(str(project / "b" / "g.toml")) is None  # not b's


def test_run_from_another_directory_uses_the_same_cache(project: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys) -> None:
    from stub_server import StubServer

    graph = project / "a" / "g.toml"
    (project / "a" / "c.jsonl").write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    monkeypatch.setenv("CI", "1")
    with StubServer() as stub:
        args = ["--cases", str(project / "a" / "c.jsonl"), "--model", "openai/gpt-4.1-mini",
                "--api-base", stub.base_url, "--retries", "0"]
        monkeypatch.chdir(project)
        assert main(["run", "a/g.toml", *args]) == 0
        calls = stub.calls
        assert calls > 0 and (project / "a" / ".dagtui" / "cache.sqlite").is_file()
        monkeypatch.chdir(project.parent)
        assert main(["run", str(graph), *args]) == 0
        assert stub.calls == calls  # every answer from the graph's cache
    assert not (project / ".dagtui").exists() and not (project.parent / ".dagtui").exists()
    capsys.readouterr()
    monkeypatch.chdir(project.parent)
    code, out, _ = cli(capsys, "cache", "stats", "--graph", str(graph))
    assert code == 0 and "1 entry" in out


# -- 7. key remaps ---------------------------------------------------------------------------


def test_conflicting_remaps_are_refused_naming_both(tmp_path: Path) -> None:
    from dagtui.tui.keys import binding_ids, key_groups, key_scopes

    missing = tmp_path / "none.toml"

    def check(value: str) -> dict[str, str]:
        return checked_keymap(binding_ids, {"DAGTUI_KEYS": value}, missing, scopes=key_scopes)

    with pytest.raises(KeymapError, match=r"editor\.save and editor\.rename are both on 'n'"):
        check("editor.rename=n;editor.save=n")
    with pytest.raises(KeymapError, match=r"editor\.save and editor\.rename .* on 'r'"):
        check("editor.save=r")  # onto another binding's default key
    with pytest.raises(KeymapError, match="dagtui edit --list-keys"):
        check("editor.save=r")
    # another scope may use the same key: the debugger's n is not the editor's
    assert check("editor.rename=n") == {"editor.rename": "n"}
    assert check("debugger.step=s;editor.save=s")  # different screens
    # every remappable id is in the listing --list-keys prints
    listed = {b.id for _title, bound in key_groups() for b in bound}
    assert listed == binding_ids()


def test_a_misspelt_binding_id_gets_a_suggestion_and_a_command(tmp_path: Path, capsys,
                                                              monkeypatch) -> None:
    monkeypatch.setenv("DAGTUI_KEYS", "editor.renam=n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    code, _, err = cli(capsys, "edit", str(tmp_path / "g.toml"))
    assert code == 2
    assert "editor.renam (did you mean 'editor.rename'?)" in err
    assert "dagtui edit --list-keys" in err and "F1" not in err
    monkeypatch.delenv("DAGTUI_KEYS")
    code, out, _ = cli(capsys, "edit", "--list-keys")
    assert code == 0 and "editor.rename" in out and "debugger.step" in out
    assert "rename the node" in out


# -- 10, 11. directories --------------------------------------------------------------------


def test_edit_refuses_a_directory(tmp_path: Path, capsys) -> None:
    code, _, err = cli(capsys, "edit", str(tmp_path))
    assert code == 2 and "is a directory" in err and "GRAPH.toml" in err


def test_directories_find_suites_and_say_why_rule_graphs_are_skipped(capsys) -> None:
    code, out, err = cli(capsys, "test", str(ROOT / "graphs"))
    assert code == 0, out + err
    assert "spans.toml: 7 cases, 7 passed" in out
    assert "correctness.toml: skipped: a rule of the suite" in out
    assert "name a cases file there" not in out
    code, out, err = cli(capsys, "validate", str(ROOT / "graphs"))
    assert code == 0 and "7 files checked" in out


# -- 14. the small print ---------------------------------------------------------------------


def test_a_usage_error_comes_first_with_a_short_usage(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["run", "g.toml", "--concurrency", "x"])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    lines = err.splitlines()
    assert lines[0].startswith("dagtui: error: argument --concurrency")
    assert len(lines) == 2 and lines[1].startswith("usage: dagtui run graph [options]")


def test_one_case_is_one_case(tmp_path: Path, capsys) -> None:
    graph = tmp_path / "polite.toml"
    graph.write_text(VALIDATE_GOOD, encoding="utf-8")
    (tmp_path / "c.jsonl").write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    code, out, _ = cli(capsys, "test", str(graph), "--cases", str(tmp_path / "c.jsonl"))
    assert code == 0 and "1 case, 1 passed" in out and "1 cases" not in out


# -- 8. case fields ---------------------------------------------------------------------------


def test_a_misspelt_case_field_is_named_with_its_line(tmp_path: Path, capsys) -> None:
    graph = tmp_path / "polite.toml"
    graph.write_text(VALIDATE_GOOD, encoding="utf-8")
    typo = {"name": "c1", "actual_ouput": "Thanks!", "expected": {"j": True},
            "expected_score": 1.0}
    cases = tmp_path / "c.jsonl"
    cases.write_text(json.dumps(CASE) + "\n" + json.dumps({**typo, "name": "c2"}) + "\n",
                     encoding="utf-8")
    code, _, err = cli(capsys, "test", str(graph), "--cases", str(cases))
    # the labels judge reads no fields: the test passes, but both problems are said
    assert code == 0
    assert f"{cases}:2: case 'c2': 'actual_ouput' is not a case field (did you mean " \
           "'actual_output'?)" in err
    assert f"{cases}:2: case 'c2': node 'j' needs 'actual_output'" in err
    assert "dagtui run would refuse the case" in err and ":1:" not in err
    # run (a model judge) refuses it before any call, naming the likely typo
    code, _, err = cli(capsys, "run", str(graph), "--cases", str(cases), "--model",
                       "openai/gpt-4.1-mini", "--api-base", "http://127.0.0.1:9")
    assert code == 2 and "(it has 'actual_ouput': misspelt?)" in err


def test_a_field_the_graph_reads_is_no_typo(tmp_path: Path, capsys) -> None:
    from dagtui.run.cases import case_from_dict, misspelt_fields

    case = case_from_dict({"name": "c", "contexts": ["x"], "my_field": 1}, file="f", line=3)
    assert [key for key, _ in misspelt_fields(case)] == ["contexts"]
    assert misspelt_fields(case, read=["contexts"]) == []


def test_a_toml_cases_file_with_case_tables_names_the_line(tmp_path: Path) -> None:
    from dagtui.run.cases import CaseError, load_cases

    cases = tmp_path / "c.toml"
    cases.write_text('# labelled cases\n\n[[case]]\nname = "x"\n', encoding="utf-8")
    with pytest.raises(CaseError) as caught:
        load_cases(cases)
    assert str(caught.value).startswith(f"{cases}:3: a TOML cases file holds [[cases]] tables")
    assert "this one has [[case]] (did you mean [[cases]]?)" in str(caught.value)


# -- 9. a misspelt model ----------------------------------------------------------------------


def test_a_misspelt_model_is_a_warning_with_the_model_meant(tmp_path: Path, capsys) -> None:
    from dagtui.graph.validate.models import known_models, unknown_model

    assert known_models(), "litellm (a dependency) ships its model list"
    graph = tmp_path / "g.toml"
    graph.write_text(VALIDATE_GOOD.replace("gpt-4.1-mini", "gtp-4.1-mini"), encoding="utf-8")
    code, out, _ = cli(capsys, "validate", str(graph))
    assert code == 0
    assert f"{graph}:3:9: warning DAG118 model 'gtp-4.1-mini'" in out
    assert "did you mean 'gpt-4.1-mini'?" in out
    for fine in ("gpt-4.1-mini", "openai/gpt-4.1-mini", "ollama/llama3", "my-own-model",
                 "openai/stub-model"):
        assert unknown_model(fine) is None, fine
    assert unknown_model("openai/gtp-4.1-mini") == "openai/gpt-4.1-mini"


def test_the_model_list_is_read_without_importing_litellm() -> None:
    code = ("import sys; from dagtui.graph.validate.models import known_models; "
            "assert known_models(); assert 'litellm' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_an_unusable_judge_is_said_in_two_short_lines() -> None:
    from dagtui.commands.run import HALT_WIDTH, halt_lines

    provider = "LLM Provider NOT provided. Pass in the LLM provider you are trying to call. " * 5
    lines = halt_lines(f"judge unusable: {provider}", "gtp-4.1-mini")
    assert len(lines[0]) <= HALT_WIDTH
    assert lines[1].startswith("model 'gtp-4.1-mini' is not in litellm's model list: did you "
                               "mean 'gpt-4.1-mini'?")


# -- 14. one node prefix, the run summary's width, OK lines ----------------------------------


def test_a_step_error_names_its_node_once() -> None:
    from test_engine import CASE as MEETING_CASE
    from test_engine import meeting, script

    from dagtui.judges.base import CallbackJudge
    from dagtui.run.engine import Engine

    result = Engine(meeting(), CallbackJudge(script(order="Perfect"))).run_sync(MEETING_CASE)
    assert result.error_kind == "out_of_set"
    assert result.error.startswith("node 'order':")
    assert result.error.count("node 'order'") == 1, result.error


def test_the_run_summary_fits_80_columns(tmp_path: Path, capsys,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from stub_server import StubServer

    monkeypatch.setenv("CI", "1")
    graph = ROOT / "graphs" / "meeting_summary.toml"
    with StubServer() as stub:
        code = main(["run", str(graph), "--model", "openai/gpt-4.1-mini", "--api-base",
                     stub.base_url, "--retries", "0", "-q"])
    out = capsys.readouterr().out
    assert code == 0 and "p50" in out and "verdicts true:" in out
    assert max(map(len, out.splitlines())) <= 80, max(out.splitlines(), key=len)


def test_fmt_check_and_validate_github_say_ok(tmp_path: Path, capsys) -> None:
    graph = tmp_path / "g.toml"
    graph.write_text(VALIDATE_GOOD, encoding="utf-8")
    assert main(["fmt", str(graph)]) == 0
    capsys.readouterr()
    code, out, err = cli(capsys, "fmt", "--check", str(graph))
    assert code == 0 and len((out + err).strip().splitlines()) == 1 and "ok" in out.lower()
    code, out, err = cli(capsys, "validate", "--format", "github", str(graph))
    assert code == 0 and "1 file checked: 0 errors" in err

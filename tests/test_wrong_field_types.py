"""A field holding the wrong kind of TOML value is a diagnostic, never a traceback.

`type = { a = 1 }` or `type = ["binary"]` once reached a dict lookup (`ntype in
NODE_CLASSES`) and raised "unhashable type" in every command. Each command below runs on
such files and must answer with the file, line, node and what `type` must be, and an exit
code; then every field of every node kind (and of `[metric]`) is given a table, a list and
a scalar of the wrong kind, and loading, validation and formatting must all answer without
an exception.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from stub_server import StubServer

from dagtui.cli import main
from dagtui.exitcodes import ExitCode
from dagtui.graph.model import NODE_CLASSES, CheckNode, Metric
from dagtui.graph.tomlio.fmt import format_text
from dagtui.graph.validate import check_text

pytestmark = pytest.mark.timeout(120)

MODEL = "openai/gpt-4.1-mini"
BAD_TYPES = {"table": "{ a = 1 }", "list": '["binary"]'}


def graph(tmp_path: Path, type_value: str) -> Path:
    (tmp_path / "g.cases.jsonl").write_text(
        '{"name": "one", "input": "q", "actual_output": "a", "expected_score": 1}\n',
        encoding="utf-8")
    path = tmp_path / "g.toml"
    path.write_text(f'[metric]\nname = "m"\ncases = "g.cases.jsonl"\n\n[nodes.root]\n'
                    f'type = {type_value}\ncriteria = "is it good"\n', encoding="utf-8")
    return path


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def assert_named(out: str, path: Path) -> None:
    assert "Traceback" not in out and "unhashable" not in out, out
    assert f"{path}:6:8" in out, out  # the value of `type`, line 6 column 8
    assert "[root.type]" in out and "'type' must be a string" in out, out


@pytest.mark.parametrize("bad", BAD_TYPES)
def test_every_command_refuses_a_type_that_is_a_table_or_a_list(capsys, tmp_path: Path,
                                                                 bad: str) -> None:
    path = graph(tmp_path, BAD_TYPES[bad])
    original = path.read_text(encoding="utf-8")
    code, out = cli(capsys, "validate", path)
    assert code == ExitCode.FAILURES
    assert_named(out, path)
    assert "DAG004" in out
    code, out = cli(capsys, "test", path)
    assert code == ExitCode.FAILURES
    assert_named(out, path)
    for command in ("export --to mermaid", "export --to deepeval-json"):
        code, out = cli(capsys, *command.split(), path)
        assert code == ExitCode.FAILURES
        assert_named(out, path)
    with StubServer() as stub:
        for command in ("run", "calibrate"):
            code, out = cli(capsys, command, path, "--model", MODEL, "--api-base",
                            stub.base_url, "--no-cache")
            assert code == ExitCode.FAILURES, (command, out)
            assert_named(out, path)
        assert stub.calls == 0
    # fmt lays out any file that parses (a wrong value is validate's to report)
    code, out = cli(capsys, "fmt", "--check", path)
    assert "Traceback" not in out and code in (ExitCode.OK, ExitCode.FAILURES)
    assert path.read_text(encoding="utf-8") == original
    code, out = cli(capsys, "fmt", path)
    assert "Traceback" not in out and code == ExitCode.OK
    assert tomllib.loads(path.read_text(encoding="utf-8")) == tomllib.loads(original)


@pytest.mark.parametrize("bad", BAD_TYPES)
async def test_the_editor_opens_it_read_write_and_lists_the_problem(tmp_path: Path,
                                                                   bad: str) -> None:
    from dagtui.tui.app import editor_app

    path = graph(tmp_path, BAD_TYPES[bad])
    app = editor_app(str(path), poll_interval=0, cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        problems = [d for d in app.editor.state.diagnostics if d.node == "root"]
        assert [(d.code, d.field, d.line) for d in problems] == [("DAG004", "type", 6)]
        assert not app.editor.state.read_only  # it parsed: the user can fix it in place
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code in (0, None)


# -- the sweep: every field of every node kind, and of [metric] --------------------------

WRONG = {"table": "{ a = 1 }", "list": "[1, 2]", "strings": '["x"]', "tables": "[{ a = 1 }]",
         "number": "3", "string": '"x"', "bool": "true"}
VERDICTS = {
    "binary": "verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]",
    "non_binary": 'verdicts = [{ verdict = "a", score = 10 }, { verdict = "b", score = 0 }]',
}
BASE = {
    "task": ['instructions = "do"', 'output = "o"', 'children = ["leaf"]'],
    "binary": ['criteria = "c"', VERDICTS["binary"]],
    "non_binary": ['criteria = "c"', VERDICTS["non_binary"]],
    "check": ['param = "actual_output"', VERDICTS["binary"]],
    "geval": ['criteria = "c"'],
    "metric": ['metric = "answer_relevancy"'],
}


def node_cases() -> list[tuple[str, str | None, str]]:
    out: list[tuple[str, str | None, str]] = []
    for ntype, cls in NODE_CLASSES.items():
        kinds: list[str | None] = list(CheckNode.KIND_FIELDS) if ntype == "check" else [None]
        for kind in kinds:
            out += [(ntype, kind, f) for f in cls.FIELDS if f != "id"]
    return out


def node_text(ntype: str, kind: str | None, fld: str, wrong: str) -> str:
    lines = ([] if fld == "type" else [f'type = "{ntype}"']) + BASE[ntype]
    if kind is not None:
        lines.append(f'check = "{kind}"')
    lines = [line for line in lines if not line.startswith(f"{fld} =")]
    lines.append(f"{fld} = {wrong}")
    return ('[metric]\nname = "m"\n\n[nodes.root]\n' + "\n".join(lines)
            + '\n\n[nodes.leaf]\ntype = "geval"\ncriteria = "c"\n')


def answers(text: str, tmp_path: Path) -> None:
    """Load, validate and format `text`: each answers, none raises; an internal error
    (DAG023) or an unreadable-file verdict (DAG022) for a file that parses is a bug."""
    tomllib.loads(text)  # the sweep only builds files that parse
    path = tmp_path / "g.toml"
    path.write_text(text, encoding="utf-8")
    report = check_text(text, str(path), base_dir=str(tmp_path))
    assert not [d for d in report.diagnostics if d.code in ("DAG022", "DAG023")], \
        [d.format() for d in report.diagnostics]
    format_text(text)


@pytest.mark.parametrize(("ntype", "kind", "fld"), node_cases())
def test_a_wrong_value_in_any_node_field_is_a_diagnostic(tmp_path: Path, ntype: str,
                                                         kind: str | None, fld: str) -> None:
    for wrong in WRONG.values():
        answers(node_text(ntype, kind, fld, wrong), tmp_path)
    report = check_text(node_text(ntype, kind, fld, WRONG["table"]), str(tmp_path / "g.toml"),
                        base_dir=str(tmp_path))
    # where a table is not what the field takes, it is named where it stands
    _, problems = NODE_CLASSES[ntype].from_toml({fld: {"a": 1}})
    if any(p.key == fld for p in problems):
        assert any(d.node == "root" and d.field == fld and d.line for d in report.diagnostics
                   if d.is_error), [d.format() for d in report.diagnostics]


@pytest.mark.parametrize("fld", Metric.toml_keys())
def test_a_wrong_value_in_any_metric_field_is_a_diagnostic(tmp_path: Path, fld: str) -> None:
    for wrong in WRONG.values():
        lines = ['name = "m"'] if fld != "name" else []
        text = ("[metric]\n" + "\n".join([*lines, f"{fld} = {wrong}"])
                + '\n\n[nodes.root]\ntype = "geval"\ncriteria = "c"\n')
        answers(text, tmp_path)

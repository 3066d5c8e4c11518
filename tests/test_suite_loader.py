"""Suite files: shape and meaning problems as positioned SUI diagnostics."""

from __future__ import annotations

from pathlib import Path

from dagtui.suite import is_suite_file, load_suite_file, validate_suite_file
from dagtui.suite.loader import load_suite_text

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "graphs" / "suites" / "spans.toml"

ZERO_GRAPH = '''
[metric]
name = "always zero"
model = "m"
[nodes.q]
type = "binary"
criteria = "Is it fine?"
params = ["actual_output"]
verdicts = [{ verdict = true, score = 0 }, { verdict = false, score = 0 }]
'''

GOOD_GRAPH = ZERO_GRAPH.replace("verdict = true, score = 0", "verdict = true, score = 10")


def _codes(diags) -> list[str]:
    return [d.code for d in diags]


def _write(tmp_path: Path, text: str, **graphs: str) -> Path:
    for name, body in graphs.items():
        (tmp_path / f"{name}.toml").write_text(body)
    p = tmp_path / "suite.toml"
    p.write_text(text)
    return p


def test_example_suite_is_clean_and_levelled() -> None:
    load = load_suite_file(EXAMPLE)
    assert [d for d in load.diagnostics if d.is_error] == []
    assert load.suite is not None
    assert load.suite.levels() == [["has_output", "is_english"], ["correctness"],
                                   ["deep_analysis", "concise"]]
    assert load.kinds["has_output"] == "code" and load.kinds["correctness"] == "LLM"
    assert is_suite_file(EXAMPLE)
    assert not is_suite_file(ROOT / "graphs" / "meeting_summary.toml")


def test_cycle_is_an_error_that_prints_the_cycle_with_its_line(tmp_path: Path) -> None:
    p = _write(tmp_path, '''[suite]
name = "s"
[rules.a]
check = { check = "json", param = "actual_output" }
depends_on = ["c"]
[rules.b]
check = { check = "json", param = "actual_output" }
depends_on = ["a"]
[rules.c]
check = { check = "json", param = "actual_output" }
depends_on = ["b"]
''')
    diags = validate_suite_file(p)
    cyc = [d for d in diags if d.code == "SUI007"]
    assert len(cyc) == 1 and cyc[0].is_error
    assert "a -> c -> b -> a" in cyc[0].message
    assert (cyc[0].line, cyc[0].col) == (5, 15)


def test_unknown_and_self_dependencies(tmp_path: Path) -> None:
    p = _write(tmp_path, '''[rules.a]
check = { check = "json", param = "actual_output" }
depends_on = ["a", "has_outptu"]
[rules.has_output]
check = { check = "json", param = "actual_output" }
''')
    diags = validate_suite_file(p)
    by = {d.code: d for d in diags}
    assert by["SUI006"].line == 3 and "depends on itself" in by["SUI006"].message
    assert by["SUI005"].line == 3 and "did you mean 'has_output'" in by["SUI005"].message


def test_missing_graph_file_has_its_line(tmp_path: Path) -> None:
    p = _write(tmp_path, '''[suite]
name = "s"

[rules.judge]
graph = "nope.toml"
''')
    diags = validate_suite_file(p)
    assert _codes(diags) == ["SUI008"]
    assert diags[0].line == 5 and diags[0].col == 9 and diags[0].node == "judge"


def test_dependency_on_a_rule_that_can_never_pass(tmp_path: Path) -> None:
    p = _write(tmp_path, '''[rules.zero]
graph = "zero.toml"
[rules.good]
graph = "good.toml"
[rules.after]
graph = "good.toml"
depends_on = ["good", "zero"]
''', zero=ZERO_GRAPH, good=GOOD_GRAPH)
    diags = validate_suite_file(p)
    dead = [d for d in diags if d.code == "SUI016"]
    assert len(dead) == 1 and dead[0].node == "after" and "'zero'" in dead[0].message
    assert dead[0].line == 7


def test_bad_filters_sample_budget_status_and_checks(tmp_path: Path) -> None:
    p = _write(tmp_path, '''[rules.a]
check = { check = "regex", param = "actual_output", pattern = "(unclosed" }
filter = [
  { field = "metadata.kind", op = "like", value = "x" },
  { field = "input", op = "regex", value = "[oops" },
  { field = "metadata.n", op = "gt", value = "ten" },
  { field = "metadata.kind", op = "in", value = "chat" },
]
sample = { rate = 1.5 }
max_calls = -1
status = "paused-ish"
[rules.b]
check = { check = "lenght", param = "actual_output" }
[rules.c]
graph = "x.toml"
check = { check = "json", param = "actual_output" }
[rules.d]
label = "nothing to run"
''')
    diags = validate_suite_file(p)
    codes = _codes(diags)
    assert codes.count("SUI011") == 4
    assert {"SUI010", "SUI012", "SUI013", "SUI014", "SUI003"} <= set(codes)
    like = next(d for d in diags if d.code == "SUI011" and "like" in d.message)
    assert like.line == 4
    regex = next(d for d in diags if d.code == "SUI011" and "regular expression" in d.message)
    assert regex.line == 5
    kind = next(d for d in diags if d.code == "SUI010" and "lenght" in d.message)
    assert "did you mean 'length'" in kind.message and kind.line == 13
    assert sum(1 for d in diags if d.code == "SUI003") == 2


def test_paused_dependency_and_tiny_budget_warn(tmp_path: Path) -> None:
    p = _write(tmp_path, '''[rules.gate]
check = { check = "json", param = "actual_output" }
status = "paused"
[rules.judge]
graph = "good.toml"
depends_on = ["gate"]
max_calls = 0
''', good=GOOD_GRAPH)
    diags = validate_suite_file(p)
    assert {d.code for d in diags} == {"SUI101", "SUI102"}
    assert not any(d.is_error for d in diags)


def test_graph_errors_are_reported_from_the_rule(tmp_path: Path) -> None:
    p = _write(tmp_path, '[rules.j]\ngraph = "bad.toml"\n', bad='[metric]\nname = 3\n[nodes.x]\n'
               'type = "wat"\n')
    diags = validate_suite_file(p)
    assert "SUI009" in _codes(diags)
    assert any(d.file and d.file.endswith("bad.toml") for d in diags)


def test_syntax_error_and_unknown_keys() -> None:
    load = load_suite_text('[suite]\nname = "x"\n[rules.a\n', "s.toml")
    assert load.suite is None and _codes(load.diagnostics) == ["SUI001"]
    assert load.diagnostics[0].line == 3
    load = load_suite_text('[suite]\nnmae = "x"\n[rules.a]\nchek = 1\npattern = "x"\n'
                           'check = { check = "json", param = "actual_output" }\n', "s.toml")
    msgs = [d.message for d in load.diagnostics if d.code == "SUI002"]
    assert any("did you mean 'name'" in m for m in msgs)
    assert any("did you mean 'check'" in m for m in msgs)
    assert any("inside the inline table" in m for m in msgs)


def test_check_suite_file_is_a_validate_report(tmp_path: Path) -> None:
    from dagtui.suite import check_suite_file

    report = check_suite_file(EXAMPLE)
    assert report.ok and report.graph is None and not report.unreadable
    missing = check_suite_file(tmp_path / "nope.toml")
    assert missing.unreadable and [d.code for d in missing.errors] == ["SUI017"]


def test_path_analysis_sees_unreachable_positive_leaves(tmp_path: Path) -> None:
    """A score of 10 that no run can reach does not make a dependency passable."""
    graph = '''
[metric]
name = "gate never passes"
model = "m"
roots = ["q"]
[nodes.q]
type = "binary"
criteria = "Is it fine?"
params = ["actual_output"]
verdicts = [{ verdict = true, score = 0 }, { verdict = false, score = 0 }]
[nodes.orphan]
type = "binary"
criteria = "Never asked"
params = ["actual_output"]
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
'''
    from dagtui.graph.loader import load_text
    from dagtui.suite.loader import graph_facts

    facts = graph_facts(load_text(graph).graph)
    assert facts.can_pass is False and facts.worst_calls == 1 and facts.kind == "LLM"


def test_a_self_dependency_does_not_hide_a_longer_cycle(tmp_path: Path) -> None:
    p = _write(tmp_path, '''[rules.a]
check = { check = "json", param = "actual_output" }
depends_on = ["a"]
[rules.b]
check = { check = "json", param = "actual_output" }
depends_on = ["c"]
[rules.c]
check = { check = "json", param = "actual_output" }
depends_on = ["b"]
''')
    codes = _codes(validate_suite_file(p))
    assert "SUI006" in codes and "SUI007" in codes


def test_validate_command_prints_a_suite_report(monkeypatch, capsys, tmp_path: Path) -> None:
    """With the one-line hook (suite files go to check_suite_file), `dagtui validate`
    prints, counts and exits on suite diagnostics like graph ones."""
    import dagtui.graph.validate as graph_validate
    from dagtui.cli import main
    from dagtui.suite import check_suite_file, is_suite_file

    real = graph_validate.check_file
    monkeypatch.setattr(graph_validate, "check_file",
                        lambda p: check_suite_file(p) if is_suite_file(p) else real(p))
    p = _write(tmp_path, '[rules.a]\ncheck = { check = "json", param = "actual_output" }\n'
               'depends_on = ["b"]\n[rules.b]\ncheck = { check = "json", param = "actual_output" }\n'
               'depends_on = ["a"]\n')
    assert main(["validate", str(p)]) == 1
    out = capsys.readouterr().out
    assert f"{p}:3:15: error SUI007 [a.depends_on] dependency cycle: a -> b -> a" in out
    assert main(["validate", str(EXAMPLE), "--format", "json"]) == 0

"""One small graph per diagnostic code, each triggering exactly that code.

Every case names the code, the TOML text, the node the diagnostic must name and a marker: a
piece of text whose (first) line the diagnostic must point at. A test fails if any other
code shows up, so each graph doubles as a check that the validator does not pile cascading
noise on top of the real problem.
"""

from __future__ import annotations

import textwrap

import pytest

from dagtui.diagnostics import CODES, Severity
from dagtui.graph.validate import check_file, check_text, validate

HEAD = '[metric]\nname = "t"\nmodel = "gpt-4.1-mini"\n'

JUDGE = """
[nodes.j]
type = "binary"
criteria = "Is the answer polite?"
params = ["actual_output"]
verdicts = [
  { verdict = true, score = 10 },
  { verdict = false, score = 0 },
]
"""


def binary(nid: str, true: str, false: str, *, params: bool = True,
           criteria: str = "Is the answer polite?") -> str:
    """A binary node; `true`/`false` are `score = N` or `then = "x"` fragments."""
    p = 'params = ["actual_output"]\n' if params else ""
    return (f'\n[nodes.{nid}]\ntype = "binary"\ncriteria = "{criteria}"\n{p}verdicts = [\n'
            f"  {{ verdict = true, {true} }},\n  {{ verdict = false, {false} }},\n]\n")


PYTHON_CHECK = ('\n[nodes.c]\ntype = "check"\ncheck = "python"\nfunction = "{function}"\n'
                'param = "actual_output"\nverdicts = [\n  {{ verdict = true, score = 10 }},\n'
                '  {{ verdict = false, score = 0 }},\n]\n')

GATE_CHAIN = "".join(
    binary(f"g{i}", f'then = "g{i + 1}"', "score = 0") for i in range(1, 5)
) + binary("g5", "score = 10", "score = 0")

WIDE_CHAIN = "".join(
    f'\n[nodes.c{k}]\ntype = "non_binary"\ncriteria = "Classify aspect {k}."\n'
    'params = ["actual_output"]\nverdicts = [\n'
    + "".join(
        f'  {{ verdict = "L{i}", '
        + (f'then = "c{k + 1}"' if k < 4 else f"score = {i % 11}")
        + " },\n"
        for i in range(20)
    )
    + "]\n"
    for k in range(1, 5)
)

# a task feeding 16 gates whose false verdicts each continue at their own node: 2**16 run
# states, beyond both the path listing and the state search budgets
FAN_OUT = (
    '\n[nodes.t]\ntype = "task"\ninstructions = "List the claims."\noutput_label = "Claims"\n'
    'params = ["actual_output"]\nchildren = [' + ", ".join(f'"c{i}"' for i in range(16)) + "]\n"
    + "".join(binary(f"c{i}", "score = 10", f'then = "d{i}"', params=False)
              + binary(f"d{i}", "score = 10", "score = 0") for i in range(16))
)

# code -> (TOML text, node the diagnostic names, marker text on the diagnostic's line)
CASES: dict[str, tuple[str, str | None, str]] = {
    "DAG001": ('[metric\nname = "t"\n', None, "[metric"),
    "DAG002": (HEAD + JUDGE.replace('type = "binary"', 'type = "binary"\nlable = "Polite"'),
               "j", "lable"),
    "DAG003": (HEAD + JUDGE.replace('"Is the answer polite?"', '""'), "j", 'criteria = ""'),
    "DAG024": (HEAD + JUDGE.replace("[nodes.j]", '[nodes."j\u200b"]'), "j\u200b",
               '[nodes."j'),
    "DAG004": (HEAD + JUDGE.replace('type = "binary"', 'type = "binary"\nlabel = 3'),
               "j", "label = 3"),
    "DAG005": (HEAD + JUDGE + '\n[nodes.x]\ntype = "binari"\n', "x", '"binari"'),
    "DAG006": (HEAD + JUDGE.replace('["actual_output"]', '["actual_ouput"]'), "j",
               "actual_ouput"),
    "DAG007": (HEAD + '\n[nodes.c]\ntype = "check"\ncheck = "regexp"\npattern = "a+"\n'
               'param = "actual_output"\nverdicts = [\n  { verdict = true, score = 10 },\n'
               '  { verdict = false, score = 0 },\n]\n', "c", '"regexp"'),
    "DAG008": (HEAD + binary("j", 'then = "nxt"', "score = 0"), "j", '"nxt"'),
    "DAG009": (HEAD + '\n[nodes.t]\ntype = "task"\ninstructions = "List the claims."\n'
               'output_label = "Claims"\nparams = ["actual_output"]\nchildren = ["a"]\n'
               + binary("a", 'then = "b"', "score = 0", params=False)
               + binary("b", 'then = "a"', "score = 10"), "b", 'then = "a"'),
    "DAG010": (HEAD + binary("j", "score = 10", "score = 0").replace("false", "true"), "j",
               "verdicts = ["),
    "DAG011": (HEAD + '\n[nodes.n]\ntype = "non_binary"\ncriteria = "Classify the tone."\n'
               'params = ["actual_output"]\nverdicts = [\n  { verdict = "Warm", score = 10 },\n'
               '  { verdict = "Cold", score = 0 },\n  { verdict = "Warm", score = 8 },\n]\n',
               "n", '"Warm", score = 8'),
    "DAG012": (HEAD + JUDGE.replace("{ verdict = false, score = 0 }", "{ verdict = false }"),
               "j", "{ verdict = false }"),
    "DAG013": (HEAD + JUDGE.replace("score = 10", "score = 11"), "j", "score = 11"),
    "DAG014": (HEAD + '\n[nodes.j]\ntype = "binary"\ncriteria = "Is it polite?"\n'
               'params = ["actual_output"]\nverdicts = []\n', "j", "verdicts = []"),
    "DAG015": (HEAD + binary("g", 'then = "x"', 'then = "y"')
               + binary("x", "score = 10", 'then = "z"')
               + binary("y", "score = 0", 'then = "z"')
               + binary("z", "score = 10", "score = 0"), "x", 'then = "z"'),
    "DAG016": (HEAD + '\n[nodes.t]\ntype = "task"\ninstructions = "List the claims."\n'
               'output_label = "Claims"\nparams = ["actual_output"]\nchildren = ["a", "b"]\n'
               + binary("a", "score = 10", "score = 0", params=False)
               + binary("b", "score = 10", "score = 0", params=False), "b",
               "[nodes.b] >> score = 10"),
    "DAG017": (HEAD + JUDGE.replace("verdict = true", 'verdict = "yes"'), "j", '"yes"'),
    "DAG018": (HEAD, None, "[metric]"),
    "DAG019": (HEAD + '\n[nodes.t]\ntype = "task"\ninstructions = "List the claims."\n'
               'output_label = "Claims"\nparams = ["actual_output"]\nchildren = ["j", "g"]\n'
               + binary("j", "score = 10", "score = 0", params=False)
               + '\n[nodes.g]\ntype = "geval"\nname = "Tone"\nparams = ["actual_output"]\n'
               'evaluation_steps = ["Judge the tone."]\n', "t", 'children = ["j", "g"]'),
    "DAG020": (HEAD + '\n[nodes.c]\ntype = "check"\ncheck = "regex"\npattern = "(unclosed"\n'
               'param = "actual_output"\nverdicts = [\n  { verdict = true, score = 10 },\n'
               '  { verdict = false, score = 0 },\n]\n', "c", '"(unclosed"'),
    "DAG021": (HEAD.replace('name = "t"', 'name = "t"\nthreshold = 5') + JUDGE, None,
               "threshold = 5"),
    "DAG025": (HEAD + '\n[nodes.c]\ntype = "check"\ncheck = "json_schema"\n'
               'schema = { type = "object", properties = { a = { "$ref" = '
               '"https://example.com/a.json" } } }\nparam = "actual_output"\nverdicts = [\n'
               '  { verdict = true, score = 10 },\n  { verdict = false, score = 0 },\n]\n',
               "c", "schema = {"),
    "DAG026": (HEAD + JUDGE.replace('type = "binary"', 'type = "binary"\nunsure = "maybe"'),
               "j", 'unsure = "maybe"'),
    "DAG119": (HEAD + '\n[nodes.t]\ntype = "task"\ninstructions = "List the claims."\n'
               'output_label = "Claim"\nparams = ["actual_output"]\nchildren = ["m"]\n'
               '\n[nodes.m]\ntype = "map"\ncriteria = "Is this claim true?"\n'
               'aggregate = "fraction"\n', "m", 'type = "map"'),
    "DAG117": (HEAD + '\n[nodes.c]\ntype = "check"\ncheck = "regex"\npattern = "^(a+)+$"\n'
               'param = "actual_output"\nverdicts = [\n  { verdict = true, score = 10 },\n'
               '  { verdict = false, score = 0 },\n]\n', "c", '"^(a+)+$"'),
    "DAG101": (HEAD + binary("j", "score = 10", "score = 0", params=False), "j", "[nodes.j]"),
    "DAG102": (HEAD.replace('name = "t"', 'name = "t"\nroots = ["j"]') + JUDGE
               + binary("k", "score = 10", "score = 0"), "k", "[nodes.k]"),
    "DAG103": (HEAD + '\n[nodes.t]\ntype = "task"\ninstructions = "List the claims."\n'
               'output_label = "Claims"\nparams = ["actual_output"]\n' + JUDGE, "t",
               "[nodes.t]"),
    "DAG104": (HEAD + JUDGE.replace("score = 0", "score = 6"), None, "[metric]"),
    "DAG105": (HEAD + '\n[nodes.n]\ntype = "non_binary"\ncriteria = "Classify the tone."\n'
               'params = ["actual_output"]\nverdicts = [\n  { verdict = "Any", then = "j" },\n]\n'
               + JUDGE, "n", "verdicts = ["),
    "DAG106": (HEAD + '\n[nodes.n]\ntype = "non_binary"\ncriteria = "Classify the order."\n'
               'params = ["actual_output"]\nverdicts = [\n'
               '  { verdict = "Correct order", score = 10 },\n'
               '  { verdict = "correct  Order", score = 9 },\n'
               '  { verdict = "Wrong order", score = 0 },\n]\n', "n", '"correct  Order"'),
    "DAG107": (HEAD + binary("j", 'then = "g"', "score = 0")
               + '\n[nodes.g]\ntype = "geval"\nname = "Tone"\nparams = ["actual_output"]\n'
               'criteria = "Is the tone friendly?"\n', "g", 'criteria = "Is the tone'),
    "DAG108": (HEAD.replace('model = "gpt-4.1-mini"\n', "") + JUDGE, None, "[metric]"),
    "DAG109": (HEAD + binary("j", "score = 10", "score = 0",
                             criteria="Is the answer valid JSON?"), "j", "valid JSON"),
    "DAG110": (HEAD + GATE_CHAIN, "g5", "[nodes.g5]"),
    "DAG111": (HEAD + JUDGE.replace('type = "binary"', 'type = "binary"\nturn_window = [0, 2]'),
               "j", "turn_window"),
    "DAG112": (HEAD + binary("j", 'then = "J"', "score = 0") + binary("J", "score = 10",
                                                                       "score = 0"),
               "J", "[nodes.J]"),
    # a module file beside the graph (the tests run from the repository root)
    "DAG114": (HEAD + PYTHON_CHECK.format(function="dagtui.graph.checks:count"), "c",
               '"dagtui.graph.checks:count"'),
    "DAG115": (HEAD + PYTHON_CHECK.format(function="os:system"), "c", '"os:system"'),
    "DAG201": (HEAD + FAN_OUT, None, "[metric]"),
}


def line_of(text: str, marker: str) -> int:
    """1-based line of `marker`; `"A >> B"` means the first B after the line holding A."""
    after, _, marker = marker.rpartition(" >> ")
    start = line_of(text, after) if after else 0
    for n, line in enumerate(text.splitlines(), 1):
        if n > start and marker in line:
            return n
    raise AssertionError(f"marker {marker!r} not in text")


def test_every_code_has_a_case() -> None:
    # DAG022, DAG113 and DAG118 need a file (DAG118: tests/test_first_hour_cli.py), DAG023 a
    # validator bug: all are tested below; DAG116
    # depends on whether DeepEval is installed (tests/test_metric_leaf.py sets that)
    missing = set(CODES) - set(CASES) - {"DAG022", "DAG023", "DAG113", "DAG116", "DAG118"}
    assert not missing, f"codes without a triggering graph: {sorted(missing)}"


@pytest.mark.parametrize("code", sorted(CASES))
def test_graph_triggers_exactly_its_code(code: str) -> None:
    text, node, marker = CASES[code]
    report = check_text(text, "case.toml")
    codes = {d.code for d in report.diagnostics}
    assert codes == {code}, "\n".join(d.format() for d in report.diagnostics)
    hits = [d for d in report.diagnostics if d.code == code]
    first = hits[0]
    assert first.node == node
    assert first.line == line_of(text, marker), first.format()
    assert first.col >= 1
    assert first.file == "case.toml"
    assert first.message  # every diagnostic explains itself
    assert report.ok is (first.severity is not Severity.ERROR)


def test_unreadable_file_is_dag022(tmp_path) -> None:
    report = check_file(tmp_path / "nope.toml")
    assert [d.code for d in report.diagnostics] == ["DAG022"]
    assert report.diagnostics[0].node is None
    assert report.unreadable and not report.ok
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'[metric]\nname = "ok"\n\n[nodes.caf\xe9]\n')
    (d,) = check_file(bad).diagnostics
    assert d.code == "DAG022" and d.node is None and d.line == 4
    assert d.file == str(bad)


def test_missing_cases_file_is_dag113_for_a_file_on_disk(tmp_path) -> None:
    text = HEAD.replace("model =", 'cases = "missing.cases.jsonl"\nmodel =') + JUDGE
    path = tmp_path / "g.toml"
    path.write_text(text, encoding="utf-8")
    (d,) = check_file(path).diagnostics
    assert (d.code, d.line, d.col, d.field) == ("DAG113", 3, 9, "cases")
    assert "missing.cases.jsonl" in d.message and not d.is_error
    assert check_text(text, str(path)).diagnostics == []  # the editor's text: not checked
    (tmp_path / "missing.cases.jsonl").write_text("", encoding="utf-8")
    assert check_file(path).diagnostics == []


def test_valid_seed_graph_is_clean() -> None:
    report = check_file("graphs/meeting_summary.toml")
    assert report.diagnostics == []
    assert report.ok
    assert report.paths is not None and report.paths.complete


# -- details of individual checks --------------------------------------------------------


def codes_of(text: str) -> list[str]:
    return [d.code for d in check_text(text, "x.toml").diagnostics]


def test_cycle_message_prints_the_cycle() -> None:
    report = check_text(CASES["DAG009"][0], "x.toml")
    (d,) = report.diagnostics
    assert "a → b → a" in d.message


def test_no_leaf_names_the_combination() -> None:
    report = check_text(CASES["DAG015"][0], "x.toml")
    messages = [d.message for d in report.diagnostics]
    assert any("g=true, x=false" in m for m in messages)
    assert any("g=false, y=false" in m for m in messages)


def test_two_leaves_names_the_combination_and_both_leaves() -> None:
    (d,) = check_text(CASES["DAG016"][0], "x.toml").diagnostics
    assert "a=true, b=true" in d.message
    assert "2 leaves" in d.message


def test_unknown_reference_suggests_close_id() -> None:
    text = HEAD + binary("j", 'then = "ordr"', "score = 0") + binary("order", "score = 10",
                                                                      "score = 0")
    d = [d for d in check_text(text, "x.toml").diagnostics if d.code == "DAG008"][0]
    assert "did you mean 'order'" in d.message


def test_param_of_the_other_mode_is_explained() -> None:
    text = HEAD.replace('name = "t"', 'name = "t"\nmulti_turn = true') + JUDGE.replace(
        '["actual_output"]', '["content", "expected_output"]')
    (d,) = check_text(text, "x.toml").diagnostics
    assert d.code == "DAG006" and "single-turn" in d.message


def test_multi_turn_turn_window_is_fine() -> None:
    text = HEAD.replace('name = "t"', 'name = "t"\nmulti_turn = true') + JUDGE.replace(
        '["actual_output"]', '["content"]').replace('type = "binary"',
                                                    'type = "binary"\nturn_window = [0, 3]')
    assert codes_of(text) == []


def test_strict_threshold_counts_for_dag104() -> None:
    text = HEAD.replace('name = "t"', 'name = "t"\nstrict = true') + JUDGE.replace(
        "score = 10", "score = 9")
    d = check_text(text, "x.toml").diagnostics
    assert [x.code for x in d] == ["DAG104"] and "never pass" in d[0].message


def test_geval_leaf_counts_as_either_for_dag104() -> None:
    text = HEAD + binary("j", 'then = "g"', "score = 10") + (
        '\n[nodes.g]\ntype = "geval"\nname = "Tone"\nparams = ["actual_output"]\n'
        'evaluation_steps = ["Judge the tone."]\n')
    assert codes_of(text) == []


@pytest.mark.parametrize(
    "settings, fragment",
    [
        ('check = "length"\nunit = "words"\nmin = 5\nmax = 2', "larger than max"),
        ('check = "length"\nunit = "words"', "min, max"),
        ('check = "python"\nfunction = "not a ref"', "module:function"),
        ('check = "json_schema"\nschema = "missing.json"', "does not exist"),
        ('check = "regex"\npattern = "a"\nflags = "q"', "flag"),
        ('check = "contains"\nvalues = ["a"]\nmode = "some"', "any"),
    ],
)
def test_bad_check_settings_are_dag020(settings: str, fragment: str) -> None:
    text = HEAD + (f'\n[nodes.c]\ntype = "check"\n{settings}\nparam = "actual_output"\n'
                   'verdicts = [\n  { verdict = true, score = 10 },\n'
                   '  { verdict = false, score = 0 },\n]\n')
    diags = check_text(text, "x.toml").diagnostics
    assert [d.code for d in diags] == ["DAG020"], [d.format() for d in diags]
    assert fragment in diags[0].message


def test_json_schema_file_is_resolved_next_to_the_graph(tmp_path) -> None:
    (tmp_path / "s.json").write_text('{"type": "object"}')
    (tmp_path / "bad.json").write_text("{nope")
    body = ('\n[nodes.c]\ntype = "check"\ncheck = "json_schema"\nschema = "{}"\n'
            'param = "actual_output"\nverdicts = [\n  { verdict = true, score = 10 },\n'
            '  { verdict = false, score = 0 },\n]\n')
    good = tmp_path / "g.toml"
    good.write_text(HEAD + body.replace("{}", "s.json"))
    assert check_file(good).diagnostics == []
    bad = tmp_path / "b.toml"
    bad.write_text(HEAD + body.replace("{}", "bad.json"))
    (d,) = check_file(bad).diagnostics
    assert d.code == "DAG020" and "not valid JSON" in d.message


def test_check_reading_evidence_of_a_non_parent() -> None:
    text = HEAD + (
        '\n[nodes.t]\ntype = "task"\ninstructions = "List the claims."\n'
        'output_label = "Claims"\nparams = ["actual_output"]\nchildren = ["j"]\n'
        + binary("j", 'then = "c"', "score = 0", params=False)
        + '\n[nodes.c]\ntype = "check"\ncheck = "json"\nevidence = "t"\n'
        'verdicts = [\n  { verdict = true, score = 10 },\n  { verdict = false, score = 0 },\n]\n'
    )
    diags = check_text(text, "x.toml").diagnostics
    assert [d.code for d in diags] == ["DAG020"]
    assert "not among its children" in diags[0].message


def test_check_with_both_param_and_evidence() -> None:
    text = HEAD + ('\n[nodes.c]\ntype = "check"\ncheck = "json"\nparam = "actual_output"\n'
                   'evidence = "t"\nverdicts = [\n  { verdict = true, score = 10 },\n'
                   '  { verdict = false, score = 0 },\n]\n')
    assert codes_of(text) == ["DAG020"]


def test_declared_root_with_parents_is_dag019() -> None:
    text = HEAD.replace('name = "t"', 'name = "t"\nroots = ["j", "k"]') + binary(
        "j", 'then = "k"', "score = 0") + binary("k", "score = 10", "score = 0")
    diags = check_text(text, "x.toml").diagnostics
    assert [d.code for d in diags] == ["DAG019"] and diags[0].node == "k"


@pytest.mark.parametrize(
    "criteria, kind",
    [
        ("Is the response at most 3 sentences long?", "length"),
        ("Does the answer contain the word 'refund'?", "contains"),
        ("Does the reply start with 'Dear'?", "regex"),
        ("Is the output valid JSON?", "json"),
    ],
)
def test_checkable_criteria_suggest_the_right_check(criteria: str, kind: str) -> None:
    text = HEAD + binary("j", "score = 10", "score = 0", criteria=criteria)
    (d,) = check_text(text, "x.toml").diagnostics
    assert d.code == "DAG109" and f'check = "{kind}"' in d.message


def test_seed_criteria_are_not_flagged_as_checkable() -> None:
    crit = "Do the summary headings contain all three: 'Intro', 'Body', and 'Conclusion'?"
    text = HEAD + binary("j", "score = 10", "score = 0", criteria=crit)
    assert codes_of(text) == []


def test_verdict_positions_follow_the_file_when_the_loader_skips_one() -> None:
    # verdict #1 is unusable (no 'verdict'); the DAG013 of the next one must still point at
    # its own line, not at the skipped one's
    text = HEAD + textwrap.dedent("""
        [nodes.n]
        type = "non_binary"
        criteria = "Classify."
        params = ["actual_output"]
        verdicts = [
          { score = 1 },
          { verdict = "A", score = 10 },
          { verdict = "B", score = 12.5 },
        ]
        """)
    d13 = [d for d in check_text(text, "x.toml").diagnostics if d.code == "DAG013"]
    assert d13 and d13[0].line == line_of(text, "12.5")


def test_array_of_tables_verdicts_are_positioned() -> None:
    text = HEAD + textwrap.dedent("""
        [nodes.j]
        type = "binary"
        criteria = "Is it polite?"
        params = ["actual_output"]

        [[nodes.j.verdicts]]
        verdict = true
        score = 10

        [[nodes.j.verdicts]]
        verdict = false
        then = "nowhere"
        """)
    (d,) = check_text(text, "x.toml").diagnostics
    assert d.code == "DAG008" and d.line == line_of(text, '"nowhere"')


def test_validate_api_without_positions() -> None:
    report = check_text(CASES["DAG013"][0])
    graph = report.graph
    assert graph is not None
    diags = validate(graph)
    assert [d.code for d in diags] == ["DAG013"]
    assert diags[0].node == "j"


def test_task_with_verdicts_is_explained_as_an_edge_problem() -> None:
    text = HEAD + ('\n[nodes.t]\ntype = "task"\ninstructions = "List the claims."\n'
                   'output_label = "Claims"\nparams = ["actual_output"]\nchildren = ["j"]\n'
                   'verdicts = [ { verdict = true, score = 10 } ]\n'
                   + binary("j", "score = 10", "score = 0", params=False))
    diags = check_text(text, "x.toml").diagnostics
    assert [d.code for d in diags] == ["DAG019"]
    assert diags[0].node == "t" and diags[0].line == line_of(text, "verdicts = [ {")


def test_duplicate_child_is_reported() -> None:
    text = HEAD + ('\n[nodes.t]\ntype = "task"\ninstructions = "List the claims."\n'
                   'output_label = "Claims"\nparams = ["actual_output"]\n'
                   'children = ["j", "j"]\n'
                   + binary("j", "score = 10", "score = 0", params=False))
    assert codes_of(text) == ["DAG019"]


def test_many_combinations_with_few_states_are_still_proven() -> None:
    report = check_text(HEAD + WIDE_CHAIN, "x.toml")  # 20**4 combinations, 4 states
    assert report.diagnostics == []
    assert report.paths is not None
    assert not report.paths.complete and report.paths.proven
    assert (report.paths.min_calls, report.paths.max_calls) == (4, 4)


def test_check_defaults_match_the_check_engine() -> None:
    """What `dagtui.graph.checks` runs is not an error: length without unit counts chars, a tools
    check reads tools_called by default, flag letters may be upper case."""
    for settings in ('check = "length"\nmax = 280\nparam = "actual_output"',
                     'check = "tools"\nallowed = ["search"]',
                     'check = "regex"\npattern = "^dear"\nflags = "IM"\nparam = "actual_output"'):
        text = HEAD + (f'\n[nodes.c]\ntype = "check"\n{settings}\n'
                       'verdicts = [\n  { verdict = true, score = 10 },\n'
                       '  { verdict = false, score = 0 },\n]\n')
        assert codes_of(text) == [], settings


def test_check_graph_gives_diagnostics_and_paths_for_an_edited_graph() -> None:
    from dagtui.graph.validate import check_graph

    loaded = check_text(CASES["DAG013"][0], "x.toml")
    report = check_graph(loaded.graph, loaded.load.positions)
    assert [d.code for d in report.diagnostics] == ["DAG013"]
    assert report.diagnostics[0].line == loaded.diagnostics[0].line
    assert report.paths is not None and report.paths.complete
    assert not report.ok


def test_a_validator_bug_is_a_diagnostic_not_a_crash(monkeypatch) -> None:
    from dagtui.graph import validate as validate_module

    def boom(self, nid, node):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(validate_module._Checker, "check_task", boom)
    text = HEAD + ('\n[nodes.t]\ntype = "task"\ninstructions = "List the claims."\n'
                   'output_label = "Claims"\nparams = ["actual_output"]\nchildren = ["j"]\n'
                   + binary("j", "score = 10", "score = 0", params=False))
    report = check_text(text, "x.toml")
    (d,) = report.diagnostics
    assert d.code == "DAG023" and d.line == 1 and "simulated bug" in d.message
    assert not report.ok


def test_absurd_numbers_are_reported_not_raised() -> None:
    huge = "9" * 400
    text = HEAD + JUDGE.replace("score = 10", f"score = {huge}").replace(
        "score = 0", f"score = -{huge}")
    report = check_text(text, "x.toml")
    assert {d.code for d in report.diagnostics} == {"DAG013"}
    assert "400 digits" in report.diagnostics[0].message

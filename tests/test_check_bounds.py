"""Check nodes cannot hang a command, reach the network or read the disk (issue 21, 3 and 4).

Real graph files through the real commands: a `regex` check or a schema `pattern` that
backtracks exponentially (`^(a+)+$` on 35 characters) ends within seconds, with RE2's
answer, or, for a pattern RE2 cannot run, with a step error that says why; a `$ref` to a
loopback HTTP server, `file:///dev/zero` or a file outside the graph's folder fails the
step without a request, a read or the file's contents in any message; `validate` names
both (DAG025, DAG117) with file, line and node. The pytest timeouts bound the tests (a
regression hangs); nothing asserts how long anything took.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagtui import saferegex
from dagtui.cli import main
from dagtui.graph.checks import CheckError, run_check
from dagtui.graph.loader import load_file
from dagtui.graph.model import CheckNode

pytestmark = pytest.mark.timeout(60)

SLOW_TEXT = "a" * 35 + "!"  # ^(a+)+$ under re: about 2**35 steps
VERDICTS = "verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]"


def write_graph(tmp_path: Path, settings: str, output: str = SLOW_TEXT,
                expected: int = 0) -> Path:
    case = {"name": "one", "input": "q", "actual_output": output, "expected_score": expected}
    (tmp_path / "g.cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    path = tmp_path / "g.toml"
    path.write_text('[metric]\nname = "m"\ncases = "g.cases.jsonl"\n\n[nodes.c]\n'
                    f'type = "check"\nparam = "actual_output"\n{settings}\n{VERDICTS}\n',
                    encoding="utf-8")
    return path


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


# -- runaway regexes -----------------------------------------------------------------------

@pytest.mark.timeout(30)
def test_a_backtracking_regex_check_is_answered_by_re2(capsys, tmp_path: Path) -> None:
    path = write_graph(tmp_path, 'check = "regex"\npattern = "^(a+)+$"')
    code, out = cli(capsys, "test", path, "-v")
    assert code == 0, out  # no match: score 0, as labelled
    assert "1 passed" in out and "error" not in out, out


@pytest.mark.timeout(30)
def test_a_backtracking_pattern_re2_cannot_run_fails_the_step(capsys, tmp_path: Path) -> None:
    # the backreference keeps it from RE2, the nested + makes re backtrack
    path = write_graph(tmp_path, 'check = "regex"\npattern = "^(a+)+\\\\1$"')
    code, out = cli(capsys, "test", path)
    assert code == 1, out
    assert "node 'c': check 'c': pattern /^(a+)+\\1$/ was still matching a 36-character " \
           "text after 2 s, so it was stopped: it backtracks" in out, out
    assert "Traceback" not in out


@pytest.mark.timeout(30)
def test_run_fails_the_case_with_the_reason(capsys, tmp_path: Path) -> None:
    path = write_graph(tmp_path, 'check = "regex"\npattern = "(?=a)^(a+)+$"')
    report = tmp_path / "r.json"
    code, out = cli(capsys, "run", path, "--model", "openai/gpt-4.1-mini", "--api-base",
                    "http://127.0.0.1:9", "--no-cache", "--json", report)
    assert code != 0 and "Traceback" not in out, out
    text = report.read_text(encoding="utf-8")
    assert "was still matching a 36-character text after 2 s" in text


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("schema", "verdict"), [
    ('{ type = "string", pattern = "^(a+)+$" }', False),  # RE2: no match, a violation
    ('{ type = "object", patternProperties = { "^(a+)+$" = { type = "integer" } } }', True),
    ('{ type = "object", patternProperties = { "^(a+)+$" = {} }, '
     "additionalProperties = false }", False),
])
def test_backtracking_schema_patterns_end(capsys, tmp_path: Path, schema: str,
                                          verdict: bool) -> None:
    output = json.dumps(SLOW_TEXT if "string" in schema else {SLOW_TEXT: "x"})
    path = write_graph(tmp_path, f'check = "json_schema"\nschema = {schema}', output,
                       1 if verdict else 0)
    code, out = cli(capsys, "test", path)
    assert code == 0 and "1 passed" in out, out


@pytest.mark.timeout(30)
def test_a_schema_pattern_re2_cannot_run_fails_the_step(capsys, tmp_path: Path) -> None:
    schema = '{ type = "object", patternProperties = { "^(a+)+\\\\1$" = {} } }'
    path = write_graph(tmp_path, f'check = "json_schema"\nschema = {schema}',
                       json.dumps({SLOW_TEXT: 1}))
    code, out = cli(capsys, "test", path)
    assert code == 1, out
    assert "schema pattern: pattern /^(a+)+\\1$/ was still matching" in out, out


def test_unevaluated_properties_beside_pattern_properties_is_refused(capsys,
                                                                     tmp_path: Path) -> None:
    schema = '{ patternProperties = { "^a" = {} }, unevaluatedProperties = false }'
    path = write_graph(tmp_path, f'check = "json_schema"\nschema = {schema}', "{}")
    code, out = cli(capsys, "validate", path)
    assert code == 1 and "DAG020" in out and "unevaluatedProperties" in out, out
    code, out = cli(capsys, "test", path)
    assert code == 1 and "'unevaluatedProperties' together with 'patternProperties'" in out


@pytest.mark.timeout(30)
def test_the_worker_comes_back_after_a_timeout() -> None:
    with pytest.raises(saferegex.RegexTimeout, match="after 2 s"):
        saferegex.search(r"^(a+)+\1$", SLOW_TEXT)
    found = saferegex.search(r"(b)\1", "abb")  # a new worker answers
    assert found == saferegex.Found(1, 3, "bb")


@pytest.mark.parametrize(("pattern", "flags"), [
    (r"\w+", 0), (r"\d+", 0), (r"\s+", 0), (r"[\w-]+", 0), (r"\W+", 0), (r"\S+", 0),
    (r"\D+", 0), (r"\bfoo\b", 0), (r"^\d+$", 0), (r"end$", 0), (r"a.b", re.S),
    (r"^b", re.M), (r"É", re.I), (r"a{,2}b", 0), (r"x\Z", 0), (r"[^]a]+", 0),
    (r"(a)\1", 0), (r"(?<=a)b", 0), (r"a # c", re.X), (r"(?i)straße", 0),
])
@pytest.mark.parametrize("text", [
    "plain ascii foo 123 end", "héllo wörld ٣٤ foo\u00a0bar é", "123\n", "aab\nb x end\n",
    "ÉTÉ a\nb STRASSE straße", "\udc80 lone surrogate foo",
])
def test_the_bounded_search_agrees_with_re(pattern: str, flags: int, text: str) -> None:
    expected = re.search(pattern, text, flags)
    found = saferegex.search(pattern, text, flags)
    assert (found and (found.start, found.end, found.text)) == \
        (expected and (expected.start(), expected.end(), expected.group(0)))


@pytest.mark.parametrize(("pattern", "group"), [
    ("^(a+)+$", "(a+)+"), (r"(\w*)*", r"(\w*)*"), ("(a|b+){2,}", "(a|b+){2,}"),
    ("((ab)*c)+", "((ab)*c)+"), ("(a+){3}", "(a+){3}"),
    ("a+b+", None), ("(ab)+", None), ("(a?)+", None), ("(a{2})*", None), ("[(a+)]+", None),
    (r"\(a+\)+", None),
])
def test_nested_quantifiers_are_found(pattern: str, group: str | None) -> None:
    assert saferegex.nested_quantifier(pattern) == group


def test_validate_warns_about_nested_quantifiers(capsys, tmp_path: Path) -> None:
    path = write_graph(tmp_path, 'check = "regex"\npattern = "^(a+)+$"')
    code, out = cli(capsys, "validate", path)
    assert code == 0, out  # a warning: it runs, bounded
    assert f"{path}:9:11: warning DAG117 [c.pattern] pattern '^(a+)+$' nests quantifiers " \
           "((a+)+)" in out, out
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"properties": {"a": {"pattern": "(x*)*y"}}}))
    path = write_graph(tmp_path, 'check = "json_schema"\nschema = "s.json"', "{}")
    code, out = cli(capsys, "validate", path)
    assert f"{path}:9:10: warning DAG117 [c.schema] in the schema file at " \
           "#/properties/a: schema pattern '(x*)*y' nests quantifiers" in out, out


# -- schema references ---------------------------------------------------------------------

class _Counting(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        _Counting.requests.append(self.path)
        body = b'{"type": "integer"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def schema_server() -> Iterator[str]:
    """A loopback HTTP server that would serve any schema, and counts who asks."""
    _Counting.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def ref_targets(tmp_path: Path, base: str) -> dict[str, str]:
    secret = tmp_path.parent / f"{tmp_path.name}-secret.json"
    secret.write_text('{"type": "integer", "description": "TOP-SECRET-VALUE"}')
    return {"http": f"{base}/int.json", "dev_zero": "file:///dev/zero",
            "outside": secret.as_uri(), "beside": "other.json"}


@pytest.mark.parametrize("target", ["http", "dev_zero", "outside", "beside"])
def test_a_ref_outside_the_schema_fails_the_step_and_fetches_nothing(
        capsys, tmp_path: Path, schema_server: str, target: str) -> None:
    ref = ref_targets(tmp_path, schema_server)[target]
    (tmp_path / "other.json").write_text('{"type": "integer"}')
    path = write_graph(tmp_path, f'check = "json_schema"\nschema = {{ "$ref" = "{ref}" }}',
                       '"text"')
    # the commands refuse the graph before any case runs (DAG025, as validate says) ...
    for command in (["test"], ["run", "--model", "openai/gpt-4.1-mini", "--api-base",
                               schema_server, "--no-cache"]):
        code, out = cli(capsys, command[0], path, *command[1:])
        assert code == 1, out
        assert f"error DAG025 [c.schema] $ref '{ref}' points outside the schema" in out, out
        assert "Traceback" not in out and "TOP-SECRET-VALUE" not in out
    # ... and evaluated anyway (the library, a graph never validated), the step fails
    graph = load_file(path).graph
    assert graph is not None
    node = graph.nodes["c"]
    assert isinstance(node, CheckNode)
    with pytest.raises(CheckError) as caught:
        run_check(node, graph, {"actual_output": '"text"'}, {})
    assert str(caught.value) == (
        f"check 'c': the schema's reference '{ref}' points outside the schema: dagtui "
        'resolves only references inside it ("#/$defs/name") and never fetches a URL or a '
        "file")
    assert _Counting.requests == []


def test_validate_names_a_remote_ref(capsys, tmp_path: Path, schema_server: str) -> None:
    ref = f"{schema_server}/int.json"
    path = write_graph(tmp_path, 'check = "json_schema"\nschema = { type = "object", '
                       f'properties = {{ a = {{ "$ref" = "{ref}" }} }} }}', "{}")
    code, out = cli(capsys, "validate", path)
    assert code == 1, out
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if ref in text)
    assert re.search(rf"{re.escape(str(path))}:{line}:\d+: error DAG025 \[c\.schema\] \$ref "
                     f"'{re.escape(ref)}' points outside the schema", out), out
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"items": [{"$ref": "file:///etc/passwd"}]}))
    path = write_graph(tmp_path, 'check = "json_schema"\nschema = "s.json"', "{}")
    code, out = cli(capsys, "validate", path)
    assert code == 1
    assert f"{path}:9:10: error DAG025 [c.schema] in the schema file at #/items/0: $ref " \
           "'file:///etc/passwd' points outside the schema" in out, out
    assert _Counting.requests == []


def test_refs_inside_the_schema_still_resolve(capsys, tmp_path: Path) -> None:
    schema = ('{ "$defs" = { n = { type = "integer" } }, type = "object", '
              'properties = { a = { "$ref" = "#/$defs/n" } }, required = ["a"] }')
    path = write_graph(tmp_path, f'check = "json_schema"\nschema = {schema}',
                       json.dumps({"a": "x"}))
    code, out = cli(capsys, "validate", path)
    assert code == 0 and "DAG025" not in out, out
    graph = load_file(path).graph
    assert graph is not None and isinstance(node := graph.nodes["c"], CheckNode)
    result = run_check(node, graph, {"actual_output": '{"a": "x"}'}, {})
    assert (result.value, result.reason) == (
        False, "schema violation at a: 'x' is not of type 'integer'")
    assert run_check(node, graph, {"actual_output": '{"a": 3}'}, {}).value is True
    node.schema_ = {"$ref": "#/$defs/gone"}
    with pytest.raises(CheckError, match="the schema's reference '#/\\$defs/gone' names nothing"):
        run_check(node, graph, {"actual_output": "{}"}, {})


@pytest.mark.timeout(30)
def test_a_suite_filter_regex_is_bounded_too() -> None:
    from dagtui.suite.gating import FILTERED, condition_holds, gate_reason
    from dagtui.suite.model import FilterCond, Rule

    case = {"name": "x", "actual_output": SLOW_TEXT}
    assert not condition_holds(FilterCond("actual_output", "regex", "^(a+)+$"), case)
    rule = Rule("r", graph="g.toml", filter=[FilterCond("actual_output", "regex", r"^(a+)+\1$")])
    state, why = gate_reason(rule, "x", case, {})
    assert state == FILTERED
    assert why.startswith("filter: ") and "was still matching a 36-character text" in why, why

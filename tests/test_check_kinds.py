"""Check kinds are a registry, as node kinds are: a kind registered once is known to the
validator, the engine's check runner, the suite loader, the editor form and the docs.

The toy kind `starts_with` takes the existing `values` setting (and `mode` with choices of
its own), reads `input` when the node names no input, and answers true when the text starts
with one of the values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dagtui.graph.checks import (
    CheckKind,
    CheckResult,
    check_kinds,
    find_check,
    register,
    run_check,
    unregister,
)
from dagtui.graph.model import CHECK_KINDS, CheckNode, CheckSettings, Graph
from dagtui.graph.validate import check_text
from dagtui.suite.loader import check_graph
from dagtui.suite.model import Rule
from dagtui.tui.fields import choices


def _starts_with(node: CheckNode, value: Any, graph: Graph, case: dict[str, Any],
                 consent: Any) -> CheckResult:
    hit = [v for v in node.values or [] if str(value or "").startswith(v)]
    return CheckResult(bool(hit), f"starts with {hit}" if hit else "starts otherwise")


@pytest.fixture
def toy() -> Iterator[CheckKind]:
    kind = register(CheckKind(
        "starts_with", CheckSettings("the text starts with one of the values", ("values", "mode"),
                                     ("values",), {"mode": ("first", "any")}),
        _starts_with, reads="input"))
    yield kind
    unregister("starts_with")
    assert "starts_with" not in CHECK_KINDS


def graph_text(settings: str) -> str:
    return ('[metric]\nname = "m"\nmodel = "x"\n\n[nodes.c]\ntype = "check"\n'
            f'check = "starts_with"\n{settings}\n'
            'verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]\n')


def codes(text: str) -> list[str]:
    return [d.code for d in check_text(text, "g.toml").diagnostics]


def test_the_built_in_kinds_are_registered_in_order() -> None:
    assert [k.name for k in check_kinds()] == list(CHECK_KINDS) == [
        "regex", "json", "json_schema", "length", "contains", "equals", "tools", "python"]
    assert find_check("python") is not None and find_check("python").runs_code
    assert find_check("nope") is None and find_check(None) is None


def test_a_registered_kind_validates_runs_and_is_offered(toy: CheckKind) -> None:
    assert "starts_with" in CHECK_KINDS
    assert codes(graph_text('values = ["Dear"]')) == []
    assert "DAG003" in codes(graph_text(""))  # values are required
    assert "DAG020" in codes(graph_text('values = ["Dear"]\nmode = "all"'))  # not its choice
    assert "DAG002" in codes(graph_text('values = ["Dear"]\npattern = "x"'))  # regex's setting
    node, problems = CheckNode.from_toml({"type": "check", "check": "starts_with",
                                          "values": ["Dear"]})
    assert node is not None and not problems
    assert run_check(node, Graph(), {"input": "Dear Sir"}, {}).value is True
    assert run_check(node, Graph(), {"input": "Hi"}, {}).value is False
    assert choices(node, "mode") == ("first", "any")


def test_a_registered_kind_is_an_inline_suite_check(toy: CheckKind) -> None:
    graph, problems = check_graph(Rule(id="r", check={"check": "starts_with"}))
    assert graph is None or problems  # values missing
    assert ("check", "a 'starts_with' check needs 'values'") in problems
    graph, problems = check_graph(Rule(id="r", check={"check": "starts_with",
                                                     "values": ["x"]}))
    assert graph is not None and problems == []  # no param needed: it reads input

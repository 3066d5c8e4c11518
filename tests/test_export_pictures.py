"""Mermaid and DOT pictures: structure, edge styles, and escaping of hostile labels."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dagtui.export import export_graph
from dagtui.export.dot import quote
from dagtui.export.mermaid import escape
from dagtui.graph.loader import load_file
from dagtui.graph.model import (
    BinaryNode,
    CheckNode,
    GEvalNode,
    Graph,
    Metric,
    NonBinaryNode,
    TaskNode,
    Verdict,
)

GRAPHS = sorted(Path(__file__).resolve().parent.parent.joinpath("graphs").glob("*.toml"))

_DECL = re.compile(r'^    ([A-Za-z_][A-Za-z0-9_]*)(\["|\{"|\[/"|\[\["|\(\["|>")(.*)("\]|"\}|"/\]|"\]\]|"\]\))$')
_EDGE = re.compile(r'^    ([A-Za-z_][A-Za-z0-9_]*) (-->|-\.->)(?:\|"([^"]*)"\|)? ([A-Za-z_][A-Za-z0-9_]*)$')
_TAIL = re.compile(r"^    (classDef|class|linkStyle) ")
MERMAID_KEYWORDS = {"end", "graph", "flowchart", "subgraph", "style", "class", "classDef",
                    "click", "linkStyle", "direction"}


def check_mermaid(text: str) -> dict[str, list]:
    """Parse our Mermaid output strictly; fail on any line that is not a declaration, an
    edge or a styling line, on edges to undeclared nodes, and on unescaped quotes."""
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    declared: dict[str, str] = {}
    edges: list[tuple[str, str, str, str]] = []
    for line in lines[1:]:
        if m := _DECL.match(line):
            node_id, _, body, _ = m.groups()
            assert node_id not in declared, f"duplicate id {node_id}"
            assert node_id not in MERMAID_KEYWORDS
            assert '"' not in body and "\n" not in body
            declared[node_id] = body
        elif m := _EDGE.match(line):
            source, arrow, label, target = m.groups()
            assert source in declared and target in declared, line
            edges.append((source, arrow, label or "", target))
        else:
            assert _TAIL.match(line), f"unexpected line: {line!r}"
    return {"nodes": list(declared.items()), "edges": edges}


def _graph(path: Path) -> Graph:
    graph = load_file(path).graph
    assert graph is not None
    return graph


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: p.stem)
def test_mermaid_of_every_example_is_well_formed(path: Path) -> None:
    graph = _graph(path)
    parsed = check_mermaid(export_graph(graph, "mermaid"))
    data = [e for e in parsed["edges"] if e[1] == "-.->"]
    n_children = sum(len(n.children) for n in graph.nodes.values() if isinstance(n, TaskNode))
    assert len(data) == n_children  # data edges dashed, and only they
    n_verdicts = sum(len(getattr(n, "verdicts", [])) for n in graph.nodes.values())
    assert len(parsed["edges"]) - len(data) == n_verdicts  # one control edge per verdict
    n_scores = sum(1 for n in graph.nodes.values() for v in getattr(n, "verdicts", [])
                   if v.score is not None)
    assert sum(1 for _, body in parsed["nodes"] if body.startswith("score ")) == n_scores


def test_meeting_summary_mermaid_edges_carry_verdicts_and_scores() -> None:
    graph = _graph(next(p for p in GRAPHS if p.stem == "meeting_summary"))
    text = export_graph(graph, "mermaid")
    assert 'n_extract -.->|"Summary headings"| n_present' in text
    assert 'n_present -->|"true"| n_order' in text
    assert re.search(r'n_order -->\|"Two headings swapped"\| (\w+)', text)
    target = re.search(r'n_order -->\|"Two headings swapped"\| (\w+)', text).group(1)
    assert f'{target}(["score 4"])' in text
    assert "linkStyle 0,1 " in text  # the two data edges are styled apart


def test_geval_leaf_is_marked() -> None:
    graph = _graph(next(p for p in GRAPHS if p.stem == "refund_policy"))
    mermaid = export_graph(graph, "mermaid")
    assert '[["G-Eval: Helpfulness #amp; tone' in mermaid
    assert "class n_tone geval" in mermaid
    assert "peripheries=2" in export_graph(graph, "dot")


def test_mermaid_escape() -> None:
    assert escape('say "hi"\n<b>#1</b> `x` & y') == (
        "say #quot;hi#quot;<br/>#lt;b#gt;#35;1#lt;/b#gt; #96;x#96; #amp; y")


def test_dot_quote_neutralises_escapes() -> None:
    assert quote('a"b') == '"a\\"b"'
    assert quote("a\\nb") == '"a\\\\nb"'  # a literal backslash-n, not a line break
    assert quote("a\nb") == '"a\\nb"'
    assert quote("a\x85b\u2028c") == '"a\\nb\\nc"'  # every line break is DOT's line break
    assert quote("x & y\x00") == '"x &amp; y "'  # Graphviz decodes entities; NUL would cut


_hostile = st.text(st.characters(exclude_categories=("Cs",)), max_size=20) | st.sampled_from(
    ['"', '\\', '\\"', "\n", "]", "}", "end", "-->", "|x|", "#quot;", "<br/>", "`", ";", "{}",
     "subgraph", "o", "x", "A---oB", "\\N", "\\l", '"]', "];"])


@st.composite
def hostile_graphs(draw: st.DrawFn) -> Graph:
    ids = draw(st.lists(_hostile.filter(bool), min_size=5, max_size=5, unique=True))
    t, b, n, g, c = ids
    labels = draw(st.lists(_hostile, min_size=2, max_size=3, unique=True))
    nodes = {
        t: TaskNode(instructions=draw(_hostile), output_label=draw(_hostile),
                    label=draw(st.none() | _hostile), children=[b, c]),
        b: BinaryNode(criteria=draw(_hostile), label=draw(st.none() | _hostile),
                      verdicts=[Verdict(verdict=True, then=n), Verdict(verdict=False, score=0)]),
        n: NonBinaryNode(criteria=draw(_hostile), verdicts=[
            Verdict(verdict=labels[0], then=g),
            *[Verdict(verdict=label, score=3) for label in labels[1:]]]),
        g: GEvalNode(name=draw(_hostile), params=["input"], criteria=draw(_hostile)),
        c: CheckNode(check="json", param="actual_output", label=draw(st.none() | _hostile),
                     verdicts=[Verdict(verdict=True, score=10), Verdict(verdict=False, then=b)]),
    }
    return Graph(metric=Metric(name=draw(_hostile)), nodes=nodes)


@settings(max_examples=150, deadline=None)
@given(graph=hostile_graphs())
def test_mermaid_survives_hostile_text(graph: Graph) -> None:
    parsed = check_mermaid(export_graph(graph, "mermaid"))
    n_scores = sum(1 for n in graph.nodes.values() for v in getattr(n, "verdicts", [])
                   if v.score is not None)
    assert len(parsed["nodes"]) == len(graph.nodes) + n_scores
    assert len(parsed["edges"]) == 2 + sum(len(getattr(n, "verdicts", []))
                                           for n in graph.nodes.values())


needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None,
    reason="graphviz `dot` is not installed (apt-get install graphviz); CI installs it",
)


def _render(text: str) -> subprocess.CompletedProcess:
    return subprocess.run(["dot", "-Tsvg"], input=text.encode("utf-8"), capture_output=True,
                          timeout=30, check=False)


@needs_dot
@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: p.stem)
def test_graphviz_accepts_every_example(path: Path) -> None:
    result = _render(export_graph(_graph(path), "dot"))
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.lstrip().startswith(b"<?xml") and b"<svg" in result.stdout
    assert b"Warning" not in result.stderr, result.stderr.decode()


@needs_dot
def test_graphviz_shows_label_text_exactly() -> None:
    text = 'say "hi" & <b>\\N &amp;'
    dot = f"digraph {{ {quote('n')} [label={quote(text)}]; }}"
    plain = subprocess.run(["dot", "-Tplain"], input=dot.encode(), capture_output=True,
                           timeout=30, check=True).stdout.decode()
    # -Tplain re-escapes quotes and backslashes in its output; decode that one layer
    shown = re.search(r'^node n [\d. ]+ "((?:[^"\\]|\\.)*)"', plain, re.M).group(1)
    assert re.sub(r"\\(.)", r"\1", shown) == text


@needs_dot
@settings(max_examples=40, deadline=None)
@given(graph=hostile_graphs())
def test_graphviz_accepts_hostile_text(graph: Graph) -> None:
    result = _render(export_graph(graph, "dot"))
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.count(b'class="node"') == 5 + sum(
        1 for n in graph.nodes.values() for v in getattr(n, "verdicts", []) if v.score is not None)

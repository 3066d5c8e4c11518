"""What DeepEval cannot express is refused, naming the nodes, and never exported wrong.

These run without DeepEval installed: the rules are checked on dagtui graphs and through the
`dagtui export` command (exit codes, messages, no traceback).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_export_support import MULTI_TURN

from dagtui.cli import main
from dagtui.export import ExportRefused, deepeval_refusals, export_graph
from dagtui.graph.loader import load_text
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

HEAD = '[metric]\nname = "t"\nmodel = "gpt-4.1-mini"\n'
GATE = """
[nodes.gate]
type = "binary"
criteria = "ok?"
params = ["actual_output"]
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
"""


def graph_of(body: str, head: str = HEAD):
    result = load_text(head + textwrap.dedent(body))
    assert result.graph is not None and not result.diagnostics, result.diagnostics
    return result.graph


def refused(body: str, head: str = HEAD) -> list[tuple[tuple[str, ...], str]]:
    return [(r.nodes, r.message) for r in deepeval_refusals(graph_of(body, head))]


def test_a_plain_graph_has_no_refusals() -> None:
    assert refused(GATE) == []


def test_check_nodes_are_refused_by_name() -> None:
    out = refused("""
        [nodes.has_json]
        type = "check"
        check = "json"
        param = "actual_output"
        verdicts = [{ verdict = true, then = "gate" }, { verdict = false, score = 0 }]
    """ + GATE)
    assert out[0][0] == ("has_json",)
    assert "deterministic" in out[0][1]


def test_several_roots_with_a_judgement_root() -> None:
    out = refused(GATE + """
        [nodes.other]
        type = "task"
        instructions = "x"
        output_label = "X"
        params = ["input"]
        children = []
    """)
    assert any(nodes == ("gate", "other") and "several roots" in msg for nodes, msg in out)


def test_several_task_roots_are_fine() -> None:
    body = """
        [nodes.a]
        type = "task"
        instructions = "x"
        output_label = "X"
        params = ["input"]
        children = ["gate"]
        [nodes.b]
        type = "task"
        instructions = "y"
        output_label = "Y"
        params = ["input"]
        children = ["gate"]
    """ + GATE
    assert refused(body) == []


def test_declared_root_reached_from_another_root() -> None:
    out = refused(
        """
        [nodes.a]
        type = "task"
        instructions = "x"
        output_label = "X"
        params = ["input"]
        children = ["b"]
        [nodes.b]
        type = "task"
        instructions = "y"
        output_label = "Y"
        params = ["input"]
        children = ["gate"]
        """ + GATE,
        HEAD + 'roots = ["a", "b"]\n',
    )
    assert any(nodes == ("b",) and "root" in msg for nodes, msg in out)


def test_node_shared_by_verdicts_of_two_judgements() -> None:
    out = refused("""
        [nodes.t]
        type = "task"
        instructions = "x"
        output_label = "X"
        params = ["input"]
        children = ["j1", "j2"]
        [nodes.j1]
        type = "binary"
        criteria = "a?"
        verdicts = [{ verdict = true, then = "shared" }, { verdict = false, score = 0 }]
        [nodes.j2]
        type = "binary"
        criteria = "b?"
        verdicts = [{ verdict = true, then = "shared" }, { verdict = false, score = 1 }]
        [nodes.shared]
        type = "binary"
        criteria = "c?"
        params = ["input"]
        verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 5 }]
    """)
    assert any(nodes == ("shared", "j1", "j2") and "never runs" in msg for nodes, msg in out)


def test_two_verdicts_of_one_judgement_into_one_node_are_fine() -> None:
    body = """
        [nodes.j]
        type = "non_binary"
        criteria = "which?"
        params = ["input"]
        verdicts = [
          { verdict = "a", then = "gate" },
          { verdict = "b", then = "gate" },
          { verdict = "c", score = 3 },
        ]
    """ + GATE
    assert refused(body) == []


@pytest.mark.parametrize("score", ["10.5", "11", "-0.5", "nan"])
def test_out_of_range_scores_are_refused_naming_node_and_verdict(score: str) -> None:
    head = HEAD
    body = f"""
        [nodes.gate]
        type = "binary"
        criteria = "ok?"
        params = ["actual_output"]
        verdicts = [{{ verdict = true, score = {score} }}, {{ verdict = false, score = 0 }}]
    """
    out = refused(body, head)
    assert out and out[0][0] == ("gate",) and score in out[0][1]
    assert "verdict true" in out[0][1]


def test_fractional_scores_export() -> None:
    body = """
        [nodes.gate]
        type = "binary"
        criteria = "ok?"
        params = ["actual_output"]
        verdicts = [{ verdict = true, score = 7.5 }, { verdict = false, score = 3.33 }]
    """
    assert refused(body, HEAD) == []


def test_geval_rules() -> None:
    body = """
        [nodes.gate]
        type = "binary"
        criteria = "ok?"
        params = ["actual_output"]
        verdicts = [{ verdict = true, then = "both" }, { verdict = false, then = "other_model" }]
        [nodes.both]
        type = "geval"
        name = "g"
        params = ["actual_output"]
        criteria = "c"
        evaluation_steps = ["s"]
        [nodes.other_model]
        type = "geval"
        name = "h"
        params = ["actual_output"]
        criteria = "c"
        model = "claude-x"
    """
    out = dict(refused(body))
    assert "drops the steps" in out[("both",)]
    assert "DAGMetric's own model" in out[("other_model",)]


def test_geval_behind_a_data_edge_or_as_root() -> None:
    out = refused("""
        [nodes.t]
        type = "task"
        instructions = "x"
        output_label = "X"
        params = ["input"]
        children = ["g"]
        [nodes.g]
        type = "geval"
        name = "g"
        params = ["actual_output"]
        criteria = "c"
    """)
    assert any(nodes == ("t", "g") and "only follow a verdict" in msg for nodes, msg in out)
    alone = refused("""
        [nodes.g]
        type = "geval"
        name = "g"
        params = ["actual_output"]
        criteria = "c"
    """)
    assert any(nodes == ("g",) and "root" in msg for nodes, msg in alone)


def test_unknown_params_and_turn_window_in_single_turn() -> None:
    out = refused("""
        [nodes.gate]
        type = "binary"
        criteria = "ok?"
        params = ["role"]
        turn_window = [0, 2]
        verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
    """)
    messages = " ".join(msg for _, msg in out)
    assert "'role'" in messages and "turn_window" in messages


def test_cycle_and_unknown_reference() -> None:
    cycle = refused("""
        [nodes.t]
        type = "task"
        instructions = "x"
        output_label = "X"
        params = ["input"]
        children = ["a"]
        [nodes.a]
        type = "binary"
        criteria = "a?"
        verdicts = [{ verdict = true, then = "b" }, { verdict = false, score = 0 }]
        [nodes.b]
        type = "binary"
        criteria = "b?"
        verdicts = [{ verdict = true, then = "a" }, { verdict = false, score = 0 }]
    """)
    assert any(set(nodes) == {"a", "b"} and "cycle" in msg for nodes, msg in cycle)
    unknown = refused("""
        [nodes.gate]
        type = "binary"
        criteria = "ok?"
        params = ["input"]
        verdicts = [{ verdict = true, then = "nowhere" }, { verdict = false, score = 0 }]
    """)
    assert unknown == [(("gate",), "refers to unknown node(s) 'nowhere'")]


def test_refusal_applies_to_both_deepeval_formats_but_not_pictures() -> None:
    graph = graph_of("""
        [nodes.c]
        type = "check"
        check = "json"
        param = "actual_output"
        verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
    """)
    for fmt in ("deepeval-json", "deepeval-python"):
        with pytest.raises(ExportRefused) as info:
            export_graph(graph, fmt)
        assert "'c'" in str(info.value)
    assert "flowchart TD" in export_graph(graph, "mermaid")
    assert export_graph(graph, "dot").startswith("digraph")


# -- the command ---------------------------------------------------------------------------

def _write(tmp_path: Path, body: str, head: str = HEAD) -> Path:
    path = tmp_path / "g.toml"
    path.write_text(head + textwrap.dedent(body), encoding="utf-8")
    return path


def test_cli_refusal_exits_1_and_names_nodes(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, """
        [nodes.has_json]
        type = "check"
        check = "json"
        param = "actual_output"
        verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 0 }]
    """)
    out_file = tmp_path / "out.json"
    assert main(["export", str(path), "--to", "deepeval-json", "-o", str(out_file)]) == 1
    err = capsys.readouterr().err
    assert "'has_json'" in err and "Traceback" not in err
    assert not out_file.exists()


def test_cli_graph_with_errors_exits_1_with_diagnostics(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, """
        [nodes.gate]
        type = "binary"
        criteria = "ok?"
        params = ["actual_output"]
        verdicts = [{ verdict = true, then = "missing" }, { verdict = false, score = 0 }]
    """)
    assert main(["export", str(path), "--to", "mermaid"]) == 1
    captured = capsys.readouterr()
    assert "error DAG" in captured.err and captured.out == ""


@pytest.mark.parametrize(("content", "code"), [
    (None, 2), (b"\x00\x01", 2), (b"\xff\xfe", 2),  # unreadable: exit 2, like validate
    (b"[metric\n", 2),  # does not parse: an input error, exit 2 in every command
    (b'[nodes.a]\ntype = "mystery"\n', 1),  # graph errors: exit 1
])
def test_cli_bad_graph_files_never_traceback(tmp_path: Path, capsys, content, code) -> None:
    path = tmp_path / "g.toml"
    if content is not None:
        path.write_bytes(content)
    assert main(["export", str(path), "--to", "dot"]) == code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "error DAG" in captured.err
    assert captured.out == ""


def test_cli_writes_output_file(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, GATE)
    target = tmp_path / "g.mmd"
    assert main(["export", str(path), "--to", "mermaid", "-o", str(target)]) == 0
    assert target.read_text(encoding="utf-8").startswith("flowchart TD")
    assert capsys.readouterr().out == ""


def test_cli_unwritable_output_exits_2(tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, GATE)
    assert main(["export", str(path), "--to", "dot", "-o", str(tmp_path / "no" / "x.dot")]) == 2
    assert "cannot write" in capsys.readouterr().err


# -- any graph the model can hold: an export or a refusal, nothing else -------------------

_ids = st.sampled_from(["a", "b", "c", "d", "e"])
_verdict = st.builds(
    Verdict,
    verdict=st.booleans() | st.sampled_from(["x", "y", "z"]),
    score=st.none() | st.integers(-1, 11) | st.sampled_from([2.5, 10.0]),
    then=st.none() | _ids | st.just("missing"),
)
_params = st.lists(st.sampled_from(["input", "actual_output", "role", "content", "bogus"]),
                   max_size=2)
_node = st.one_of(
    st.builds(TaskNode, instructions=st.text(max_size=5), output_label=st.text(max_size=5),
              params=_params, children=st.lists(_ids | st.just("missing"), max_size=3)),
    st.builds(BinaryNode, criteria=st.text(max_size=5), params=_params,
              verdicts=st.lists(_verdict, max_size=3)),
    st.builds(NonBinaryNode, criteria=st.text(max_size=5), params=_params,
              verdicts=st.lists(_verdict, max_size=3)),
    st.builds(GEvalNode, name=st.text(max_size=5), params=_params,
              criteria=st.none() | st.text(max_size=5),
              evaluation_steps=st.none() | st.lists(st.text(max_size=5), max_size=2),
              model=st.none() | st.sampled_from(["m", "other"]),
              turn_window=st.none() | st.just((0, 1))),
    st.builds(CheckNode, check=st.just("json"), param=st.just("actual_output"),
              verdicts=st.lists(_verdict, max_size=2)),
)


@st.composite
def any_graph(draw: st.DrawFn) -> Graph:
    nodes = draw(st.dictionaries(_ids, _node, max_size=5))
    for nid, node in nodes.items():
        node.id = nid
    roots = draw(st.none() | st.lists(_ids, max_size=2))
    metric = Metric(model=draw(st.none() | st.just("m")), multi_turn=draw(st.booleans()),
                    roots=roots)
    return Graph(metric=metric, nodes=nodes)


@settings(max_examples=400, deadline=None)
@given(graph=any_graph())
def test_every_graph_exports_or_is_refused(graph: Graph) -> None:
    for fmt in ("deepeval-json", "deepeval-python", "mermaid", "dot"):
        try:
            text = export_graph(graph, fmt)
        except ExportRefused as exc:
            assert fmt.startswith("deepeval") and exc.refusals
            continue
        assert text.endswith("\n")
        if fmt == "deepeval-python":
            compile(text, "<export>", "exec")
        if fmt == "deepeval-json":
            doc = json.loads(text)
            refs = {c for spec in doc["nodes"].values() for c in spec.get("children", [])}
            refs |= {spec["child"]["ref"] for spec in doc["nodes"].values()
                     if spec.get("child", {}).get("type") == "node"}
            assert refs <= set(doc["nodes"])  # every reference resolves


def test_exporting_imports_neither_deepeval_nor_textual() -> None:
    """The generated Python imports deepeval; the exporter itself must not (nor Textual, nor
    litellm). Meaningful in the interop environment, where deepeval is installed."""
    probe = textwrap.dedent("""
        import json, sys
        from dagtui.cli import main
        for fmt in ("deepeval-json", "deepeval-python", "mermaid", "dot"):
            assert main(["export", sys.argv[1], "--to", fmt, "-o", sys.argv[2] + fmt]) == 0
        assert main(["import", sys.argv[2] + "deepeval-json"]) == 0
        print(json.dumps(sorted(m for m in sys.modules
                                if m.split(".")[0] in ("deepeval", "textual", "litellm"))))
    """)
    graph = Path(__file__).resolve().parent.parent / "graphs" / "meeting_summary.toml"
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-c", probe, str(graph), f"{tmp}/out."],
                              capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_conversational_geval_without_role_and_content_is_refused() -> None:
    graph = load_text(MULTI_TURN.replace('params = ["role", "content"]\nevaluation_steps',
                                         'params = ["scenario"]\nevaluation_steps')).graph
    assert graph is not None
    [refusal] = deepeval_refusals(graph)
    assert refusal.nodes == ("warmth",) and "'content', 'role'" in refusal.message


def test_conversational_geval_with_turn_window_is_refused() -> None:
    graph = load_text(MULTI_TURN.replace('name = "Warmth"', 'name = "Warmth"\nturn_window = [0, 1]')).graph
    assert graph is not None
    [refusal] = deepeval_refusals(graph)
    assert refusal.nodes == ("warmth",) and "whole conversation" in refusal.message

"""Property: whatever text a graph holds, the DeepEval exports carry it exactly.

Arbitrary strings (quotes, triple quotes, backslashes, newlines, unicode, `{}` and `{{ }}`)
go into every string field, node ids included. The Python export must compile, define only
what it should, and after `build_metric()` DeepEval's node objects must hold exactly the
original values; the JSON export must load in DeepEval with the same values and import back
to the same graph. Needs deepeval (the `interop` extra); skipped without it.
"""

from __future__ import annotations

import ast
import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.setdefault("DEEPEVAL_HOME", os.path.join(tempfile.gettempdir(), "dagtui-deepeval-home"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

pytest.importorskip(
    "deepeval", reason="deepeval is not installed (pip install -e '.[interop]'); "
    "interop tests run in their own environment"
)

from deepeval.metrics import GEval  # noqa: E402
from deepeval.metrics.dag import (  # noqa: E402
    BinaryJudgementNode,
    NonBinaryJudgementNode,
    TaskNode,
)
from deepeval.metrics.dag.serialization import dag_from_json  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_export_support import load_module, normalise  # noqa: E402

from dagtui.export import export_graph, import_deepeval_json  # noqa: E402
from dagtui.graph.model import (  # noqa: E402
    BinaryNode,
    GEvalNode,
    Graph,
    Metric,
    NonBinaryNode,
    Verdict,
)
from dagtui.graph.model import TaskNode as DTask  # noqa: E402


@pytest.fixture(autouse=True)
def _placeholder_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a metric creates an OpenAI client, which wants a key; no test here sends a
    request to OpenAI. Set per test so the placeholder never leaks into other tests."""
    if not os.environ.get("OPENAI_API_KEY"):
        monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder-for-tests")


SPECIALS = [
    '"', "'", '"""', "'''", "\\", "\\n", "\n", "\r\n", "\t", "{}", "{{ x }}", "{0}", "{name}",
    "%s", "${x}", "`", "# not a comment", "')\nimport os\nos.system('echo hacked')\n('",
    '"""\nraise SystemExit\n"""', "\x00", "\u2028", "é", "日本語", "🙂", "\\x41", "\\u0041",
    "<br/>", "]]", "[[x]]", "end",
]
_chars = st.characters(exclude_categories=("Cs",))
text = st.one_of(
    st.text(_chars, max_size=24),
    st.sampled_from(SPECIALS),
    st.builds(lambda a, b, c: a + b + c, st.sampled_from(SPECIALS), st.text(_chars, max_size=8),
              st.sampled_from(SPECIALS)),
)
nonblank = text.filter(lambda s: s.strip() != "")


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    ids = draw(st.lists(text.filter(bool), min_size=4, max_size=4, unique=True))
    task_id, gate_id, judge_id, leaf_id = ids
    labels = draw(st.lists(text, min_size=2, max_size=4, unique=True))
    model = draw(text.filter(lambda s: s != "" and "/" not in s))
    steps = draw(st.none() | st.lists(text, min_size=1, max_size=3))
    metric = Metric(
        name=draw(text), threshold=draw(st.floats(0, 1)), model=model,
        include_reason=draw(st.booleans()), strict=draw(st.booleans()),
    )
    nodes = {
        task_id: DTask(instructions=draw(text), output_label=draw(text),
                       label=draw(st.none() | text), params=["actual_output"],
                       children=[gate_id]),
        gate_id: BinaryNode(criteria=draw(text), label=draw(st.none() | text),
                            params=["input"], verdicts=[
                                Verdict(verdict=False, score=draw(st.integers(0, 10))),
                                Verdict(verdict=True, then=judge_id)]),
        judge_id: NonBinaryNode(criteria=draw(text), label=draw(st.none() | text), verdicts=[
            Verdict(verdict=labels[0], then=leaf_id),
            *[Verdict(verdict=label, score=draw(st.integers(0, 10))) for label in labels[1:]],
        ]),
        leaf_id: GEvalNode(name=draw(text), params=["actual_output", "expected_output"],
                           criteria=None if steps else draw(nonblank), evaluation_steps=steps,
                           model=draw(st.sampled_from([None, model]))),
    }
    for nid, node in nodes.items():
        node.id = nid
    return Graph(metric=metric, nodes=nodes)


def _expected_top_level(source: str) -> set[str]:
    tree = ast.parse(source)
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.FunctionDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.ImportFrom):
            names.update(a.asname or a.name for a in stmt.names)
    return names


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graphs())
def test_python_export_carries_every_string_exactly(graph: Graph) -> None:
    source = export_graph(graph, "deepeval-python", source="graphs/x\n'\"\"\".toml")
    compile(source, "<export>", "exec")
    # Nothing but the expected statements at module level: no text became code.
    assert _expected_top_level(source) == {
        "annotations", "DAGMetric", "GEval", "BinaryJudgementNode", "DeepAcyclicGraph",
        "NonBinaryJudgementNode", "TaskNode", "SingleTurnParams", "SOURCE", "NAME",
        "THRESHOLD", "INCLUDE_REASON", "STRICT", "MODEL", "build_dag", "build_metric",
    }
    build_dag = next(s for s in ast.parse(source).body
                     if isinstance(s, ast.FunctionDef) and s.name == "build_dag")
    # docstring + 4 nodes + 1 data edge + 2 + n verdicts + return
    n_verdicts = sum(len(n.verdicts) for n in graph.nodes.values() if hasattr(n, "verdicts"))
    assert len(build_dag.body) == 1 + 4 + 1 + n_verdicts + 1

    with tempfile.TemporaryDirectory() as tmp:
        module = load_module(source, Path(tmp))
    m = graph.metric
    assert module.SOURCE == "graphs/x\n'\"\"\".toml"
    metric = module.build_metric()
    assert metric.name == m.name
    assert metric.evaluation_model == m.model
    assert metric.include_reason == m.include_reason and metric.strict_mode == m.strict
    assert metric.threshold == (1 if m.strict else m.threshold)
    _assert_dag_holds(metric.dag.root_nodes, graph)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graphs())
def test_json_export_carries_every_string_exactly(graph: Graph) -> None:
    text_ = export_graph(graph, "deepeval-json")
    dag = dag_from_json(text_)
    _assert_dag_holds(dag.root_nodes, graph)
    assert normalise(import_deepeval_json(text_)) == normalise(graph)


def _assert_dag_holds(roots: list, graph: Graph) -> None:
    task, gate, judge, leaf = graph.nodes.values()
    assert len(roots) == 1
    d_task = roots[0]
    assert isinstance(d_task, TaskNode)
    assert (d_task.instructions, d_task.output_label, d_task.label) == (
        task.instructions, task.output_label, task.label)
    [d_gate] = d_task.children
    assert isinstance(d_gate, BinaryJudgementNode)
    assert (d_gate.criteria, d_gate.label) == (gate.criteria, gate.label)
    assert [v.verdict for v in d_gate.children] == [False, True]
    assert d_gate.children[0].score == gate.verdicts[0].score
    d_judge = d_gate.children[1].child
    assert isinstance(d_judge, NonBinaryJudgementNode)
    assert (d_judge.criteria, d_judge.label) == (judge.criteria, judge.label)
    assert [v.verdict for v in d_judge.children] == [v.verdict for v in judge.verdicts]
    assert [v.score for v in d_judge.children[1:]] == [v.score for v in judge.verdicts[1:]]
    d_leaf = d_judge.children[0].child
    assert isinstance(d_leaf, GEval)
    assert d_leaf.name == leaf.name
    assert [p.value for p in d_leaf.evaluation_params] == leaf.params
    if leaf.evaluation_steps:
        assert d_leaf.evaluation_steps == leaf.evaluation_steps
        assert d_leaf.criteria is None
    else:
        assert d_leaf.criteria == leaf.criteria

"""Interop with the real DeepEval library (the `interop` extra): what dagtui exports, DeepEval
loads, and what DeepEval writes, dagtui imports back to the same graph.

Skipped with a reason when deepeval is not installed: it pins rich<15, which this project's
main environment does not, so CI runs these in their own environment
(`pip install -e .[test,interop]`).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

# DeepEval reads these at import: no telemetry, no .env, no files in the repo or home, no
# model-price download by litellm.
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.setdefault("DEEPEVAL_HOME", os.path.join(tempfile.gettempdir(), "dagtui-deepeval-home"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

pytest.importorskip(
    "deepeval", reason="deepeval is not installed (pip install -e '.[interop]'); "
    "interop tests run in their own environment"
)

from deepeval.metrics import DAGMetric  # noqa: E402
from deepeval.metrics.dag.serialization import dag_from_json, dag_to_json  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from test_export_support import MULTI_TURN, dag_graphs, load_module, normalise  # noqa: E402

from dagtui.export import ExportRefused, export_graph, import_deepeval_json  # noqa: E402
from dagtui.export.refusals import deepeval_refusals  # noqa: E402
from dagtui.graph.loader import load_file, load_text  # noqa: E402


@pytest.fixture(autouse=True)
def _placeholder_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a metric creates an OpenAI client, which wants a key; no test here sends a
    request to OpenAI. Set per test so the placeholder never leaks into other tests."""
    if not os.environ.get("OPENAI_API_KEY"):
        monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder-for-tests")


GRAPHS = sorted(Path(__file__).resolve().parent.parent.joinpath("graphs").glob("*.toml"))


def _graph(path: Path):
    result = load_file(path)
    assert result.graph is not None, result.diagnostics
    return result.graph


def _assert_refused_for_check_nodes(graph, fmt: str) -> bool:
    """Examples with check nodes cannot go to DeepEval: assert that this is the only reason
    and that the exporter refuses naming exactly those nodes. True when refused."""
    refusals = deepeval_refusals(graph)
    if not refusals:
        return False
    checks = tuple(nid for nid, n in graph.nodes.items() if n.type == "check")
    assert [r.nodes for r in refusals] == [checks], [r.format() for r in refusals]
    with pytest.raises(ExportRefused):
        export_graph(graph, fmt)
    return True


def _exportable(path: Path) -> bool:
    return not deepeval_refusals(_graph(path))


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: p.stem)
def test_example_round_trips_through_deepeval(path: Path) -> None:
    graph = _graph(path)
    if _assert_refused_for_check_nodes(graph, "deepeval-json"):
        return
    text = export_graph(graph, "deepeval-json")
    dag = dag_from_json(text, multiturn=graph.metric.multi_turn)
    assert dag.multiturn == graph.metric.multi_turn
    # DeepEval's own writer (random uuids, verdicts as nodes) imports back to the same graph
    back = import_deepeval_json(dag_to_json(dag), multi_turn=graph.metric.multi_turn)
    assert normalise(back) == normalise(graph)
    # and our export imports back with the very same node ids
    direct = import_deepeval_json(text, multi_turn=graph.metric.multi_turn)
    non_geval = {nid for nid, n in graph.nodes.items() if n.type != "geval"}
    assert non_geval <= set(direct.nodes)
    assert normalise(direct) == normalise(graph)


def test_at_least_one_example_exports() -> None:
    assert any(_exportable(p) for p in GRAPHS), "no example graph is exportable to DeepEval"


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: p.stem)
def test_example_python_module_builds_a_dag_metric(path: Path, tmp_path: Path) -> None:
    graph = _graph(path)
    if _assert_refused_for_check_nodes(graph, "deepeval-python"):
        return
    source = export_graph(graph, "deepeval-python", source=str(path))
    module = load_module(source, tmp_path)
    metric = module.build_metric()
    assert isinstance(metric, DAGMetric)
    assert metric.name == graph.metric.name
    assert metric.threshold == (1 if graph.metric.strict else graph.metric.threshold)
    assert metric.include_reason == graph.metric.include_reason
    assert metric.strict_mode == graph.metric.strict
    if graph.metric.model:
        assert metric.evaluation_model == graph.metric.model
    # the DAG DeepEval holds is the same graph: serialise it and import it back
    back = import_deepeval_json(dag_to_json(metric.dag), multi_turn=graph.metric.multi_turn)
    assert normalise(back) == normalise(graph)
    # model= overrides the pinned judge
    assert module.build_metric(model="gpt-4o-mini").evaluation_model == "gpt-4o-mini"


def test_deepeval_json_is_deterministic_and_named_after_nodes() -> None:
    graph = _graph(GRAPHS[[p.stem for p in GRAPHS].index("meeting_summary")])
    first = export_graph(graph, "deepeval-json")
    assert first == export_graph(graph, "deepeval-json")
    ids = list(json.loads(first)["nodes"])
    assert ids[:3] == ["extract", "present", "present.false"]
    assert "order.Correct_order" in ids


def test_multi_turn_graph_exports_to_conversational_classes(tmp_path: Path) -> None:
    from deepeval.metrics import ConversationalDAGMetric
    from deepeval.metrics.conversational_dag import ConversationalTaskNode

    graph = load_text(MULTI_TURN).graph
    assert graph is not None and not deepeval_refusals(graph)
    dag = dag_from_json(export_graph(graph, "deepeval-json"), multiturn=True)
    assert isinstance(dag.root_nodes[0], ConversationalTaskNode)
    assert dag.root_nodes[0].turn_window == (0, 1)
    back = import_deepeval_json(dag_to_json(dag))  # multi-turn detected from the document
    assert normalise(back) == normalise(graph)
    metric = load_module(export_graph(graph, "deepeval-python"), tmp_path).build_metric()
    assert isinstance(metric, ConversationalDAGMetric)
    assert normalise(import_deepeval_json(dag_to_json(metric.dag))) == normalise(graph)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=dag_graphs())
def test_deepeval_accepts_every_graph_dagtui_does_not_refuse(graph) -> None:
    """The refusal list is complete: whatever is not refused, DeepEval builds, and it is the
    same graph (JSON through `dag_from_json`, Python through `build_metric`)."""
    if deepeval_refusals(graph):
        return
    dag = dag_from_json(export_graph(graph, "deepeval-json"))
    assert normalise(import_deepeval_json(dag_to_json(dag))) == normalise(graph)
    with tempfile.TemporaryDirectory() as tmp:
        module = load_module(export_graph(graph, "deepeval-python"), Path(tmp))
    metric = module.build_metric()
    assert normalise(import_deepeval_json(dag_to_json(metric.dag))) == normalise(graph)

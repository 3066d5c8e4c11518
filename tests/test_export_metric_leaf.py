"""Fractional scores and a DeepEval metric leaf, through the real DeepEval, both ways.

A graph with fractional leaf scores (2.5, 6.66) and an `AnswerRelevancyMetric` leaf is
exported to Python and JSON, run by DeepEval's own `DAGMetric` and by dagtui's engine against
the same loopback stub (which answers DeepEval's relevancy prompts too: four statements,
three relevant, so the metric scores 0.75), and the scores must agree on every path.
DeepEval's own `dag_to_json` of the exported DAG imports back to the same graph. Needs
deepeval (the `interop` extra); skipped without it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.setdefault("DEEPEVAL_HOME", os.path.join(tempfile.gettempdir(), "dagtui-deepeval-home"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

pytest.importorskip(
    "deepeval", reason="deepeval is not installed (pip install -e '.[interop]'); "
    "interop tests run in their own environment"
)

from deepeval.metrics.dag.serialization import dag_from_json, dag_to_json  # noqa: E402
from deepeval.models import LocalModel  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402
from stub_server import Script, StubServer  # noqa: E402
from test_export_support import load_module, normalise  # noqa: E402

from dagtui.export import export_graph, import_deepeval_json  # noqa: E402
from dagtui.export.refusals import deepeval_refusals  # noqa: E402
from dagtui.graph.loader import load_text  # noqa: E402
from dagtui.graph.model import MetricNode  # noqa: E402
from dagtui.graph.paths import analyze  # noqa: E402
from dagtui.graph.validate import check_text  # noqa: E402
from dagtui.judges.litellm_judge import LiteLLMJudge  # noqa: E402
from dagtui.run.engine import Engine  # noqa: E402

pytestmark = pytest.mark.slow

GRAPH = """
[metric]
name = "Relevant and complete"
threshold = 0.7
model = "openai/stub-model"

[nodes.on_topic]
type = "binary"
criteria = "Does the reply stay on the subject of the question?"
params = ["input", "actual_output"]
verdicts = [
  { verdict = false, score = 2.5 },
  { verdict = true, then = "depth" },
]

[nodes.depth]
type = "non_binary"
criteria = "How thoroughly does the reply cover the question?"
params = ["input", "actual_output"]
verdicts = [
  { verdict = "Thorough", then = "relevancy" },
  { verdict = "Partial", score = 6.66 },
  { verdict = "Shallow", score = 3.33 },
]

[nodes.relevancy]
type = "metric"
metric = "AnswerRelevancyMetric"
args = { threshold = 0.7, include_reason = true }
"""
FIELDS = {"input": "What is the capital of France?",
          "actual_output": "Paris is the capital. It is in France. It is large. Cats purr."}
#: DeepEval's AnswerRelevancyMetric on the stub: 3 of 4 statements relevant
RELEVANCY = 0.75
RELEVANCY_RULES: list[tuple[str, Any]] = [
    ("breakdown and generate a list of statements",
     {"statements": ["Paris is the capital.", "It is in France.", "It is large.",
                     "Cats purr."]}),
    ("determine whether each statement is relevant",
     {"verdicts": [{"verdict": "yes"}, {"verdict": "yes"}, {"verdict": "yes"},
                   {"verdict": "no", "reason": "cats are off topic"}]}),
    ("Given the answer relevancy score", {"reason": "The score is 0.75 because of cats."}),
    # DeepEval's own reason call at a fixed leaf quotes the traversal: matched first
    ("DAG Traversal", {"reason": "scripted reason"}),
]


def _graph():
    loaded = load_text(GRAPH, "g.toml")
    assert loaded.graph is not None and not loaded.diagnostics
    return loaded.graph


def _script(graph, choices: dict[str, Any]) -> Script:
    rules = list(RELEVANCY_RULES)
    for nid, value in choices.items():
        rules.append((graph.nodes[nid].criteria, {"reason": "scripted", "verdict": value}))
    return Script(rules)


def test_validate_knows_deepeval_is_here() -> None:
    codes = [d.code for d in check_text(GRAPH, "g.toml").diagnostics]
    assert "DAG116" not in codes and not [c for c in codes if c.startswith("DAG0")]


def test_every_path_scores_like_deepeval(tmp_path: Path) -> None:
    graph = _graph()
    assert deepeval_refusals(graph) == []
    module = load_module(export_graph(graph, "deepeval-python"), tmp_path)
    report = analyze(graph)
    assert report.complete and len(report.paths) == 4 and not report.bad_paths
    seen = set()
    for info in report.paths:
        expected = info.score if info.score is not None else RELEVANCY
        with StubServer(_script(graph, dict(info.choices))) as stub:
            judge = LocalModel(model="stub-model", base_url=stub.base_url, api_key="test")
            metric = module.build_metric(model=judge)
            metric.measure(LLMTestCase(**FIELDS), _show_indicator=False)
            engine = Engine(graph, LiteLLMJudge("openai/stub-model", api_base=stub.base_url,
                                                api_key="test", logprobs=False, retries=0))
            result = engine.run_sync({"name": info.describe(), **FIELDS})
        where = f"path {info.describe()}"
        assert result.error is None, f"{where}: {result.error}"
        assert result.score == pytest.approx(expected), where
        assert metric.score == pytest.approx(result.score), where
        assert metric.success == result.success, where
        seen.add(result.score)
        if info.is_geval:
            leaf = result.steps[-1]
            assert leaf.node == "relevancy" and leaf.answer == pytest.approx(7.5)
            assert leaf.reason == "The score is 0.75 because of cats."
            assert result.reason == leaf.reason
    assert seen == {0.25, 0.666, 0.333, 0.75}


def test_deepeval_json_round_trip_keeps_fractions_and_the_metric(tmp_path: Path,
                                                                monkeypatch) -> None:
    graph = _graph()
    text = export_graph(graph, "deepeval-json")
    # DeepEval builds the metric leaf on its default (OpenAI) model, which wants a key to
    # exist; nothing is called
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    dag = dag_from_json(text)
    again = import_deepeval_json(dag_to_json(dag))  # DeepEval's own uuids and kwargs
    leaf = next(n for n in again.nodes.values() if isinstance(n, MetricNode))
    assert leaf.metric == "AnswerRelevancyMetric"
    assert leaf.args["threshold"] == 0.7 and leaf.args["include_reason"] is True
    scores = sorted(v.score for n in again.nodes.values() for v in getattr(n, "verdicts", [])
                    if v.score is not None)
    assert scores == [2.5, 3.33, 6.66]
    # DeepEval writes every constructor argument; with those set aside the graph is the same
    leaf.args = {k: v for k, v in leaf.args.items() if k in ("threshold", "include_reason")}
    again.metric = graph.metric
    assert normalise(again) == normalise(graph)
    # and the Python export's DAG serialises (DeepEval's dag_to_json) to the same thing
    module = load_module(export_graph(graph, "deepeval-python"), tmp_path)
    from_python = import_deepeval_json(dag_to_json(module.build_dag(
        LocalModel(model="stub-model", base_url="http://127.0.0.1:9/v1", api_key="test"))))
    doc = json.loads(dag_to_json(dag))
    assert len(from_python.nodes) == len(again.nodes) == len(graph.nodes)
    assert any(c.get("child", {}).get("type") == "metric" for c in doc["nodes"].values())

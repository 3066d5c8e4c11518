"""The exported DeepEval metric scores exactly like dagtui's engine, on every path.

For each example graph DeepEval can express, every path from dagtui's path analysis
(`dagtui.graph.paths.analyze(graph).paths`) is scripted on the loopback OpenAI-compatible stub:
each judgement answers the verdict that path takes, tasks return evidence, a G-Eval leaf
scores 7. The generated `build_metric(model=LocalModel(...stub...))` and dagtui's engine
(litellm judge, same stub) then run the same case, and must agree on score and success, and
with the path table's own score. Needs deepeval (the `interop` extra); skipped without it.
"""

from __future__ import annotations

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

from deepeval.models import LocalModel  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402
from stub_server import Script, StubServer  # noqa: E402
from test_export_support import load_module  # noqa: E402

from dagtui.export import export_graph  # noqa: E402
from dagtui.export.refusals import deepeval_refusals  # noqa: E402
from dagtui.graph.loader import load_file  # noqa: E402
from dagtui.graph.model import GEvalNode, Graph, TaskNode  # noqa: E402
from dagtui.graph.paths import analyze  # noqa: E402
from dagtui.judges.litellm_judge import LiteLLMJudge  # noqa: E402
from dagtui.run.engine import Engine  # noqa: E402

pytestmark = pytest.mark.slow

GRAPHS = sorted(Path(__file__).resolve().parent.parent.joinpath("graphs").glob("*.toml"))
GEVAL_SCORE = 7
#: placeholder values for every param a graph may read (tool params are not used here)
FIELDS: dict[str, Any] = {
    "input": "What does the summary say?",
    "actual_output": "Intro\nBody\nConclusion",
    "expected_output": "A summary with three headings.",
    "context": ["Context line one.", "Context line two."],
    "retrieval_context": ["Retrieved passage."],
}


def _expressible() -> list[Path]:
    out = []
    for path in GRAPHS:
        graph = load_file(path).graph
        if graph is not None and not deepeval_refusals(graph) and not graph.metric.multi_turn:
            out.append(path)
    return out


def _script(graph: Graph, choices: dict[str, Any]) -> Script:
    """Answers for one path. DeepEval's extra reason call (its prompt quotes the whole
    traversal, criteria included) is matched first so it never takes a node's rule."""
    rules: list[tuple[str, Any]] = [("DAG Traversal", {"reason": "scripted reason"})]
    for nid, node in graph.nodes.items():
        if isinstance(node, TaskNode):
            rules.append((node.instructions, {"reason": "scripted", "output": "EVIDENCE"}))
        elif isinstance(node, GEvalNode):
            needle = (node.evaluation_steps or [node.criteria or node.name])[0]
            rules.append((needle, {"reason": "scripted", "score": GEVAL_SCORE}))
        elif nid in choices:
            rules.append((node.criteria, {"reason": "scripted", "verdict": choices[nid]}))
    return Script(rules)


@pytest.mark.parametrize("path", _expressible(), ids=lambda p: p.stem)
def test_deepeval_export_scores_like_the_engine_on_every_path(path: Path, tmp_path: Path):
    graph = load_file(path).graph
    assert graph is not None
    module = load_module(export_graph(graph, "deepeval-python"), tmp_path)
    used = {p for node in graph.nodes.values() for p in node.params}
    assert not used & {"tools_called", "expected_tools", "metadata", "tags"}, "extend FIELDS"
    fields = {k: v for k, v in FIELDS.items() if k in used | {"input", "actual_output"}}
    report = analyze(graph)
    assert report.complete and report.paths and not report.bad_paths
    for info in report.paths:
        choices = dict(info.choices)
        expected = info.score if info.score is not None else GEVAL_SCORE / 10
        with StubServer(_script(graph, choices)) as stub:
            judge = LocalModel(model="stub-model", base_url=stub.base_url, api_key="test")
            metric = module.build_metric(model=judge)
            metric.measure(LLMTestCase(**fields), _show_indicator=False)
            deepeval_calls = stub.calls
            engine = Engine(graph, LiteLLMJudge("openai/stub-model", api_base=stub.base_url,
                                                api_key="test", logprobs=False, retries=0))
            result = engine.run_sync({"name": info.describe(), **fields})
        where = f"{path.stem}: path {info.describe()}"
        assert result.error is None, f"{where}: engine error {result.error}"
        assert result.score == pytest.approx(expected), where
        assert metric.score == pytest.approx(result.score), where
        assert metric.success == result.success, where
        # DeepEval asked one question per node on the path, plus its reason call at a fixed
        # leaf (dagtui gets the reason with the verdict, at no extra call)
        asked = len(info.nodes_run) + (0 if info.is_geval else 1)
        assert deepeval_calls == asked, where
        assert result.calls == len(info.nodes_run), where

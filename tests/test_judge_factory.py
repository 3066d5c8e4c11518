"""The one judge factory (`dagtui.judges.factory`): every name a person can give, the model
resolution, and the Python API going through it (replay included)."""

from __future__ import annotations

from pathlib import Path

import pytest

import dagtui
from dagtui.judges import (
    CallbackJudge,
    LabelsJudge,
    LiteLLMJudge,
    ReplayJudge,
    default_judge_name,
    make_judge,
    model_for,
)
from dagtui.report.trace import Trace

ROOT = Path(__file__).resolve().parent.parent
GRAPH = ROOT / "graphs" / "meeting_summary.toml"
CASE = {"name": "weekly", "actual_output": "# Intro\n# Body\n# Conclusion",
        "expected": {"extract": "Intro, Body, Conclusion", "present": True,
                     "order": "Correct order"}}


def test_names_make_their_judges() -> None:
    graph = dagtui.load(GRAPH).graph
    assert isinstance(make_judge("labels", graph), LabelsJudge)
    human = CallbackJudge(lambda ask: True, name="human")
    assert make_judge("human", graph, human=lambda: human) is human
    with pytest.raises(ValueError, match="human judge"):
        make_judge("human", graph)
    with pytest.raises(ValueError, match="--trace"):
        make_judge("replay", graph)
    litellm = make_judge("litellm", graph, model="openai/x", cache=False)
    assert isinstance(litellm, LiteLLMJudge) and litellm.model == "openai/x"
    assert make_judge(litellm, graph) is litellm  # an instance is used as it is
    assert make_judge("openai/y", graph, cache=False).model == "openai/y"  # a model string


def test_the_model_is_resolved_in_one_order(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = dagtui.load(GRAPH).graph
    graph.metric.model = "pinned"
    monkeypatch.delenv("DAGTUI_MODEL", raising=False)
    assert model_for(graph) == "pinned" and model_for(graph, "given") == "given"
    assert model_for(None) == LiteLLMJudge(cache=None).model == "gpt-4.1-mini"
    monkeypatch.setenv("DAGTUI_MODEL", "from-env")
    assert model_for(graph) == "from-env" and model_for(graph, "given") == "given"
    assert make_judge(None, graph, cache=False).model == "from-env"
    assert LiteLLMJudge(cache=None).model == "from-env"


def test_default_is_offline_first() -> None:
    from dagtui.run.cases import case_from_dict

    assert default_judge_name([case_from_dict(CASE)]) == "labels"
    assert default_judge_name([case_from_dict({"name": "n", "actual_output": "x"})]) == "human"


def test_the_api_replays_a_saved_trace(tmp_path: Path) -> None:
    graph = dagtui.load(GRAPH)
    first = graph.measure(CASE, judge="labels")
    saved = Trace.of(graph.graph, dagtui.api._case(CASE), LabelsJudge(), first).save(
        tmp_path / "t.json")
    again = graph.measure(CASE, judge="replay", trace=saved)
    assert isinstance(graph.engine("replay", trace=saved).judge, ReplayJudge)
    assert (again.score, again.path) == (first.score, first.path)

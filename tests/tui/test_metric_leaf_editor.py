"""The editor with a `metric` leaf and fractional scores: the leaf's fields in the form
(class name, arguments as TOML), a fractional score typed into a verdict, both saved as
typed; and the debugger stepping to the metric leaf's score and reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dagtui.tui.widgets.graph_tree import GraphTree
from dagtui.tui.widgets.node_form import NodeForm
from tui.conftest import SIZE, make_app

pytestmark = pytest.mark.timeout(60)

GRAPH = textwrap.dedent("""\
    [metric]
    name = "Relevant answer"
    threshold = 0.5
    model = "openai/gpt-4.1-mini"

    [nodes.on_topic]
    type = "binary"
    criteria = "Does the reply stay on the subject of the question?"
    params = ["input", "actual_output"]
    verdicts = [
      { verdict = false, score = 2.5 },
      { verdict = true, then = "relevancy" },
    ]

    [nodes.relevancy]
    type = "metric"
    metric = "AnswerRelevancyMetric"
    args = { threshold = 0.7 }
    """)


@pytest.fixture
def metric_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "relevant.toml"
    target.write_text(GRAPH, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return target


async def _goto(pilot, app, nid: str) -> None:  # type: ignore[no-untyped-def]
    tree = app.query_one(GraphTree)
    tree.focus()
    await pilot.pause()
    key = next(k for k in tree._rows if k[0] == "node" and k[1] == nid)
    target = tree._rows[key].line
    for _ in range(60):
        if tree.cursor_line == target:
            break
        await pilot.press("j" if tree.cursor_line < target else "k")
    await pilot.pause()


async def test_metric_fields_and_fractional_score_edit_and_save(metric_graph: Path) -> None:
    app = make_app(metric_graph)
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "relevancy")
        form = app.query_one(NodeForm)
        assert form.field("metric").value == "AnswerRelevancyMetric"
        args = form.field("args")
        assert args.value == "threshold = 0.7"
        args.focus()
        await pilot.pause()
        await pilot.press("end", *[c if c != " " else "space"
                                    for c in ", include_reason = false"])
        await pilot.pause()
        assert app.editor.state.graph.nodes["relevancy"].args == {"threshold": 0.7,
                                                            "include_reason": False}
        await pilot.press("backspace")  # `include_reason = fals`: not TOML, not applied
        await pilot.pause()
        assert "args:" in str(form.message("args").render())
        assert app.editor.state.graph.nodes["relevancy"].args["include_reason"] is False
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("escape")
        await _goto(pilot, app, "on_topic")
        score = app.query_one(NodeForm).verdict_widget(0, "score")
        score.focus()
        await pilot.press("end", "backspace", "backspace", "backspace", "7", ".", "5")
        await pilot.pause()
        assert app.editor.state.graph.nodes["on_topic"].verdicts[0].score == 7.5
        await pilot.press("escape", "ctrl+s")
        await pilot.pause()
    saved = metric_graph.read_text(encoding="utf-8")
    assert saved == GRAPH.replace("score = 2.5", "score = 7.5").replace(
        "args = { threshold = 0.7 }", "args = { threshold = 0.7, include_reason = false }")


async def test_debugger_steps_to_the_metric_leaf_score_and_reason() -> None:
    from dagtui.graph.loader import load_text
    from dagtui.judges.base import CallbackJudge
    from dagtui.run.cases import case_from_dict
    from dagtui.tui.app import debugger_app
    from dagtui.tui.debugger.widgets import StepPanes
    from tui.debugger_helpers import result_text, settle, tree_label

    graph = load_text(GRAPH, "relevant.toml").graph
    assert graph is not None

    def answer(ask):  # type: ignore[no-untyped-def]
        if ask.kind == "binary":
            return True, "on topic"
        return 7.5, "three of four statements are relevant"

    case = case_from_dict({"name": "paris", "input": "Capital of France?",
                           "actual_output": "Paris."})
    app = debugger_app(graph, "relevant.toml", cases=[case], case=0,
                      judge=CallbackJudge(answer), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n", "n")
        screen = await settle(app, pilot)
        assert [r.node for r in screen.live.records] == ["on_topic", "relevancy"]
        assert "score 7.5" in tree_label(screen, "relevancy")
        verdict = screen.query_one(StepPanes).text_of("verdict")
        assert "score     7.5 / 10" in verdict and "three of four statements" in verdict
        assert "0.75" in result_text(screen) and "passes" in result_text(screen)

"""The debugger lists nodes in the order runs take them (not file order), `esc` from a case
opened in the calibration view returns to that view, and an `e` edit in `dagtui step` can
be written back to the graph file (comments kept)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dagtui.graph.loader import load_text
from dagtui.judges.base import CallbackJudge
from dagtui.run.cases import case_from_dict
from dagtui.run.schedule import Topology, run_order
from dagtui.tui.app import debugger_app
from dagtui.tui.debugger.widgets import PathTree
from tui.debugger_helpers import copied_graph, select, settle

pytestmark = pytest.mark.timeout(120)

SIZES = [(80, 24), (120, 36)]

#: the leaf first, the gate next, the task that feeds the gate last: file order is the
#: reverse of the order a run takes them
BACKWARDS = """\
[metric]
name = "Backwards"

[nodes.tone]
type = "binary"
criteria = "Is the tone polite?"
verdicts = [{ verdict = true, score = 10 }, { verdict = false, score = 3 }]

[nodes.gate]
type = "binary"
criteria = "Are the claims there?"
verdicts = [{ verdict = true, then = "tone" }, { verdict = false, score = 0 }]

[nodes.claims]
type = "task"
instructions = "List the claims."
output_label = "Claims"
params = ["actual_output"]
children = ["gate"]
"""


def test_run_order_puts_parents_first_whatever_the_file_order() -> None:
    graph = load_text(BACKWARDS).graph
    assert list(graph.nodes) == ["tone", "gate", "claims"]
    assert run_order(Topology.of(graph).compiled) == ["claims", "gate", "tone"]


def rows(screen: Any) -> list[str]:
    return [row.data[0] for row in screen.query_one(PathTree).root.children]


@pytest.mark.parametrize("size", SIZES)
async def test_the_path_tree_lists_nodes_in_run_order(size: tuple[int, int]) -> None:
    async def answer(ask: Any) -> Any:
        return "a claim" if ask.kind == "task" else True

    graph = load_text(BACKWARDS).graph
    case = case_from_dict({"name": "one", "input": "q", "actual_output": "a"})
    app = debugger_app(graph, "backwards.toml", cases=[case], case=0,
                      judge=CallbackJudge(answer, needs_params=False), cursor_blink=False)
    async with app.run_test(size=size) as pilot:
        screen = await settle(app, pilot)
        assert rows(screen) == ["claims", "gate", "tone"]
        assert screen.query_one(PathTree).selected_node == "claims"
        await pilot.press("c")
        screen = await settle(app, pilot)
        ran = [r.node for r in screen.live.records]
        assert ran == rows(screen)  # the steps read top to bottom


@pytest.mark.parametrize("size", SIZES)
async def test_an_e_edit_in_dagtui_step_is_written_back_to_the_graph(
        tmp_path: Path, size: tuple[int, int]) -> None:
    from textual.widgets import TextArea

    from dagtui.tui.screens.dialogs import ChoiceScreen

    app = copied_graph(tmp_path)
    graph_file = tmp_path / "meeting_summary.toml"
    told: list[str] = []
    notify = app.notify
    app.notify = lambda message, *a, **k: (told.append(str(message)),  # type: ignore[method-assign]
                                           notify(message, *a, **k))[1]
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await select(app, pilot, "present")
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one(TextArea).load_text("Are all three headings there?")
        await pilot.press("f2")
        await settle(app, pilot)
        assert any("esc offers to write it" in m for m in told)  # told it can be kept
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("enter")  # write the edits to the graph and leave
        await pilot.pause()
    text = graph_file.read_text()
    assert 'criteria = "Are all three headings there?"' in text
    assert "# The gate: a summary missing any required heading" in text  # comments kept
    assert "Classify the ordering" in text  # the rest untouched


async def test_a_write_back_refused_keeps_the_debugger_open(tmp_path: Path) -> None:
    from textual.widgets import TextArea

    app = copied_graph(tmp_path)
    graph_file = tmp_path / "meeting_summary.toml"
    async with app.run_test(size=SIZES[0]) as pilot:
        screen = await settle(app, pilot)
        await select(app, pilot, "present")
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one(TextArea).load_text("Changed?")
        await pilot.press("f2")
        await settle(app, pilot)
        graph_file.write_text("[nodes.present\n")  # another program broke the file
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running and app.screen is screen
        assert screen.unsaved_edits == ["present.criteria"]
    assert graph_file.read_text() == "[nodes.present\n"  # never written over

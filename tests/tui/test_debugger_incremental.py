"""The debugger redraws only what a step changed, and that is the same as redrawing all.

A step relabels the nodes that got a record and those whose mark (next, running,
breakpoint, override) moved; these tests drive the screen through steps, breakpoints,
what-ifs, a restart and the end of the run and check after each that the tree reads
exactly as a full relabel would draw it.
"""

from __future__ import annotations

from typing import Any

from dagtui.judges.labels import LabelsJudge
from dagtui.tui.debugger.widgets import PathTree
from tui.debugger_helpers import SIZE, meeting_app, select, settle


def labels(tree: PathTree) -> dict[Any, str]:
    return {ref: str(row.label) for ref, row in tree._rows.items()}


def assert_same_as_full_redraw(screen: Any) -> None:
    tree = screen.query_one(PathTree)
    shown = labels(tree)
    tree._drawn = None  # forget what was drawn: the next refresh relabels every row
    tree.refresh_from(screen.run)
    assert labels(tree) == shown


async def test_incremental_relabel_matches_a_full_redraw() -> None:
    app = meeting_app(LabelsJudge(), case="missing conclusion")
    # (node to select first or None, key): a breakpoint on a node not reached yet, a step,
    # continue to it, a restart (a new session: every row redrawn), steps to the end, and a
    # breakpoint cleared after the run ended
    script = [(None, None), ("order", "b"), (None, "n"), (None, "c"), (None, "r"),
              (None, "n"), (None, "n"), (None, "n"), (None, "n"), ("order", "b")]
    async with app.run_test(size=SIZE) as pilot:
        for node, key in script:
            if node is not None:
                await select(app, pilot, node)
            if key is not None:
                await pilot.press(key)
            screen = await settle(app, pilot)
            assert_same_as_full_redraw(screen)

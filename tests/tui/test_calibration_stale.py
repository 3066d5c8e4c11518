"""Stale calibrations in the editor: a node edited after `dagtui calibrate` shows its badge
struck through and marked `stale`, live, and the calibration view (`K`) says which nodes and
why; a calibration saved before fingerprints existed marks every node (docs/calibration.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagtui.tui.calibration import badge, load_calibration
from dagtui.tui.screens.calibration import CalibrationScreen
from dagtui.tui.widgets.graph_tree import GraphTree
from tui.debugger_helpers import SIZE
from tui.test_calibration_view import editor, open_view, row_text, workdir  # noqa: F401

pytestmark = pytest.mark.timeout(120)


async def test_editing_a_node_marks_its_badge_stale_and_the_view_says_why(
        workdir: Path) -> None:  # noqa: F811
    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "κ " in row_text(app, "present") and "stale" not in row_text(app, "present")
        assert "stale" not in row_text(app, "order")
        app.editor.state.set_field("order", "criteria", "Are the headings in a sensible order?")
        await app.editor.sync()
        await pilot.pause()
        assert row_text(app, "order").split("  ")[0].endswith("stale")
        assert "stale" not in row_text(app, "present")  # only the edited node
        assert app.query_one(GraphTree).stale == {"order": ["criteria changed"]}
        view = await open_view(pilot, "order", 2)  # extract, present, order
        head = str(view.query_one("#cal-head").render())
        assert "stale: 1 node (order) changed since this calibration" in head
        assert "stale: criteria changed" in str(view.query_one("#cal-matrix").render())
        await pilot.press("escape")
        await pilot.pause()
        app.editor.state.undo()  # back to what was calibrated: fresh again
        await app.editor.sync()
        await pilot.pause()
        assert "stale" not in row_text(app, "order")


async def test_a_calibration_without_fingerprints_marks_every_node(workdir: Path) -> None:  # noqa: F811
    saved = workdir / ".dagtui" / "calibration" / "meeting_summary.json"
    data = json.loads(saved.read_text())
    del data["provenance"]
    saved.write_text(json.dumps(data))
    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for nid in ("extract", "present", "order"):
            assert row_text(app, nid).split("  ")[0].endswith("stale")
        await pilot.press("K")
        await pilot.pause()
        view = app.screen
        assert isinstance(view, CalibrationScreen)
        assert "no fingerprint (recalibrate)" in str(view.query_one("#cal-matrix").render())
    old = load_calibration("meeting_summary.toml")
    mark = badge(old, "present", ["no fingerprint (recalibrate)"])
    assert mark is not None and mark.plain.endswith(" stale")

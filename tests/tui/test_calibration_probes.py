"""The calibration view shows the bias probes `dagtui calibrate --probes` saved, per node: the
verdicts that flipped and how agreement moved (issue 25), beside the stale marks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import dagtui
from dagtui.judges.base import CallbackJudge
from dagtui.tui.calibration import probe_text
from tui.debugger_helpers import ROOT, SIZE
from tui.test_calibration_view import editor, open_view

pytestmark = pytest.mark.timeout(120)
CASES = "meeting_summary.calibration.jsonl"


def _first_option(ask):  # type: ignore[no-untyped-def]
    """Always the option listed first: a judge the order probe catches."""
    if ask.kind == "task":
        return ask.case.fields.get("actual_output") or ""
    if ask.kind == "binary":
        return True
    return ask.prompt.labels[0]


async def test_probe_results_per_node_in_the_calibration_view(tmp_path: Path,
                                                              monkeypatch) -> None:
    for name in ("meeting_summary.toml", CASES):
        shutil.copy(ROOT / "graphs" / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    cal = await dagtui.a_calibrate(str(tmp_path / "meeting_summary.toml"),
                                   str(tmp_path / CASES), judge=CallbackJudge(_first_option),
                                   probes=["order", "padding"])
    saved = tmp_path / ".dagtui" / "calibration" / "meeting_summary.json"
    saved.parent.mkdir(parents=True)
    data = cal.to_dict()
    saved.write_text(json.dumps(data, default=str))
    order = cal.probes.nodes["order"]["order"]
    assert order.flipped > 0  # the first option moved: the verdict moved with it

    app = editor()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_view(pilot, "order", 2)  # extract, present, order
        matrix = str(view.query_one("#cal-matrix").render())
        assert "bias probes" in matrix
        assert (f"order ({', '.join(order.variants)}): flipped {order.flipped}/"
                f"{order.compared} ({order.flip_rate:.0%})") in matrix
        assert (f"agreement {order.agreement:.0%} → {order.agreement_probed:.0%}") in matrix
        padding = cal.probes.nodes["order"]["padding"]
        assert f"padding (padded): flipped 0/{padding.compared} (0%)" in matrix
        await pilot.press("up")  # present: binary, the order probe skipped
        await pilot.pause()
        matrix = str(view.query_one("#cal-matrix").render())
        assert "order: skipped (binary: no options to reorder)" in matrix
    assert probe_text({"nodes": {}}, "order") is None  # calibrated without --probes
    assert probe_text(data, "extract") is None  # a task node is not probed

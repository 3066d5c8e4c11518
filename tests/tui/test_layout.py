"""The graph picture (`dagtui.graph.layout`): every node and verdict edge is drawn, fan-outs do not
cross themselves, focus mode keeps only the neighbourhood, cycles and big graphs terminate."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from dagtui.graph.layout import draw, neighbourhood
from dagtui.graph.loader import load_file, load_text

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))


def test_meeting_summary_picture() -> None:
    graph = load_file(ROOT / "graphs" / "meeting_summary.toml").graph
    drawing = draw(graph)
    text = drawing.text()
    for nid in ("extract", "present", "order"):
        assert f" {nid}" in text
    assert "true" in text  # the control edge present -> order is labelled
    assert "false → 0" in text and "Correct order → 10" in text  # leaf scores in the boxes
    assert "┆" in text and "│" in text  # data edges dashed, control edges solid
    assert text.count("▼") == 2  # into present; the two edges into order share one arrow
    # boxes are stacked top to bottom in execution order
    ys = {nid: drawing.boxes[nid][1] for nid in ("extract", "present", "order")}
    assert ys["extract"] < ys["present"] < ys["order"]


def test_fan_out_does_not_cross_itself() -> None:
    from screenshots import wide_graph

    text = draw(load_text(wide_graph()).graph).text()
    assert "┼" not in text
    assert text.count("◇ gate_") == 8


def test_focus_keeps_upstream_and_downstream_only() -> None:
    from screenshots import wide_graph

    graph = load_text(wide_graph()).graph
    keep = neighbourhood(graph, "grade_7")
    assert keep == {"extract", "gate_7", "grade_7"} | {f"gate_{i}" for i in range(7)} | {
        f"grade_{i}" for i in range(7)}
    keep = neighbourhood(graph, "gate_0")
    assert "grade_7" in keep and "extract" in keep
    text = draw(load_text(
        '[nodes.a]\ntype = "task"\ninstructions = "x"\noutput_label = "y"\nchildren = ["b"]\n'
        '[nodes.b]\ntype = "binary"\ncriteria = "c"\n'
        'verdicts = [{verdict = true, score = 1}, {verdict = false, score = 0}]\n'
        '[nodes.lonely]\ntype = "binary"\ncriteria = "c"\n'
        'verdicts = [{verdict = true, score = 1}, {verdict = false, score = 0}]\n').graph,
        "b").text()
    assert " a" in text and " b" in text and "lonely" not in text


def test_cycles_and_big_graphs_terminate() -> None:
    from bench_editor import big_graph_text

    cyc = load_text(
        '[nodes.a]\ntype = "binary"\ncriteria = "c"\n'
        'verdicts = [{verdict = true, then = "b"}, {verdict = false, score = 0}]\n'
        '[nodes.b]\ntype = "binary"\ncriteria = "c"\n'
        'verdicts = [{verdict = true, then = "a"}, {verdict = false, score = 0}]\n').graph
    assert " a" in draw(cyc).text() and " b" in draw(cyc).text()
    big = load_text(big_graph_text(40)).graph
    start = time.perf_counter()
    drawing = draw(big)
    assert time.perf_counter() - start < 5
    assert len(drawing.boxes) == 200

"""The rule DAG picture and comment-keeping saves of suite edits."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagtui.suite import load_suite_file
from dagtui.suite.drawing import draw_suite
from dagtui.suite.model import Rule, Suite
from dagtui.suite.save import SuiteSaveError, render_suite, save_suite

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "graphs" / "suites" / "spans.toml"


def test_whole_dag_shows_every_rule_with_kind_and_status() -> None:
    load = load_suite_file(EXAMPLE)
    pic = draw_suite(load.suite, load.kinds)
    text = pic.text()
    for rid in load.suite.rules:
        assert rid in text
    assert "code · active" in text and "LLM · active" in text and "code · paused" in text
    assert text.count("▼") == 3  # into correctness, deep_analysis and concise
    # levels go top to bottom
    ys = {rid: box[1] for rid, box in pic.boxes.items()}
    assert ys["has_output"] == ys["is_english"] < ys["correctness"] < ys["deep_analysis"]
    x, y, w, h = pic.boxes["correctness"]
    assert pic.rule_at(x + 1, y + 1) == "correctness" and pic.rule_at(0, y + h + 1) is None
    assert pic.rows[y + h - 1][x:x + w].count("┬") == 2  # one port per dependent
    # the boxes of a level are equally tall, and the picture ends with the last level
    assert pic.boxes["deep_analysis"][3] == pic.boxes["concise"][3]
    assert pic.rows[-1].strip() and len(pic.rows) == max(by + bh for _, by, _, bh in
                                                        pic.boxes.values())


def test_focus_keeps_upstream_and_downstream_only() -> None:
    load = load_suite_file(EXAMPLE)
    pic = draw_suite(load.suite, load.kinds, focus="is_english",
                     styles={"is_english": "reverse"})
    assert set(pic.boxes) == {"is_english", "correctness", "deep_analysis", "concise"}
    x, y, w, _ = pic.boxes["is_english"]
    assert (y, x, x + w, "reverse") in pic.spans


def test_skipping_edges_route_around_boxes() -> None:
    s = Suite(rules={r.id: r for r in [
        Rule("a", check={}), Rule("b", check={}, depends_on=["a"]),
        Rule("c", check={}, depends_on=["a", "b"]),
    ]})
    pic = draw_suite(s)
    assert pic.text().count("▼") == 2  # a->c and b->c arrive at c on one arrow
    bx, by, bw, bh = pic.boxes["b"]
    inside = [row[bx + 1:bx + bw - 1] for row in pic.rows[by + 1:by + bh - 1]]
    assert not any("│" in part for part in inside)  # nothing drawn through b


def test_rules_of_one_level_line_up_even_when_one_has_no_label() -> None:
    s = Suite(rules={r.id: r for r in [
        Rule("root", check={}), Rule("short", check={}, depends_on=["root"]),
        Rule("long", label="A longer label", check={}, depends_on=["root"], status="paused"),
    ]})
    pic = draw_suite(s)
    assert pic.boxes["short"][1] == pic.boxes["long"][1]
    assert pic.boxes["short"][3] == pic.boxes["long"][3] == 5
    x, y, w, h = pic.boxes["long"]
    assert all((row, x, x + w, "dim") in pic.spans for row in range(y, y + h))  # paused


def test_save_keeps_comments_and_applies_edits(tmp_path: Path) -> None:
    for name in ("spans.toml", "correctness.toml", "deep_analysis.toml"):
        shutil.copy(EXAMPLE.parent / name, tmp_path / name)
    path = tmp_path / "spans.toml"
    load = load_suite_file(path)
    suite = load.suite
    suite.remove_rule("concise")
    suite.remove_dependency("correctness", "is_english")
    suite.set_status("deep_analysis", "paused")
    text = save_suite(suite, path)
    assert "# a few very common English words" in text  # comments survive
    assert "[rules.concise]" not in text
    again = load_suite_file(path).suite
    assert again.rules["correctness"].depends_on == ["has_output"]
    assert again.rules["deep_analysis"].status == "paused"
    assert list(again.rules) == ["has_output", "is_english", "correctness", "deep_analysis"]


def test_save_refuses_unparsable_text() -> None:
    with pytest.raises(SuiteSaveError):
        render_suite(Suite(), "[rules.a\n")

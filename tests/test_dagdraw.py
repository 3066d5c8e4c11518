"""The generic layered-DAG drawer (`dagtui.graph.dagdraw`) behind the graph and suite views:
boxes and arrows in, rows + spans + box places out, nothing drawn through a box."""

from __future__ import annotations

import random
from pathlib import Path

from dagtui.graph.dagdraw import Edge, EdgeLook, Node, draw_dag, layers, neighbourhood
from dagtui.graph.layout import draw
from dagtui.graph.loader import load_file
from dagtui.text import shorten

ROOT = Path(__file__).resolve().parents[1]
SOLID = {"dep": EdgeLook(arrow="bold")}

# the editor's picture of the seed graph, pinned: the drawer's refactors must not move a cell
MEETING_SUMMARY = """\
      ┌───────────┐
      │ ◆ extract │
      │ task      │
      └───┬──┬────┘
          ┆  ┆
          ┆  └┄┄┄┄┄┄┐
          ▼         ┆
    ┌───────────┐   ┆
    │ ◇ present │   ┆
    │ binary    │   ┆
    │ false → 0 │   ┆
    └───┬───────┘   ┆
        │true       ┆
        └─────┐     ┆
              ├┄┄┄┄┄┘
              ▼
┌──────────────────────────┐
│ ◈ order                  │
│ non_binary               │
│ Correct order → 10       │
│ Two headings swapped → 4 │
│ All headings out of… → 2 │
└──────────────────────────┘

"""


def _interior(pic, key: str) -> list[str]:
    x, y, w, h = pic.boxes[key]
    return [row[x + 1:x + w - 1] for row in pic.rows[y + 1:y + h - 1]]


def test_editor_picture_of_the_seed_graph_is_pinned() -> None:
    drawing = draw(load_file(ROOT / "graphs" / "meeting_summary.toml").graph)
    assert drawing.text() == MEETING_SUMMARY
    # the selected box is reversed as a whole, its port included
    x, y, w, h = draw(load_file(ROOT / "graphs" / "meeting_summary.toml").graph,
                      selected="extract").boxes["extract"]
    spans = draw(load_file(ROOT / "graphs" / "meeting_summary.toml").graph,
                 selected="extract").spans
    assert all((row, x, x + w, "reverse bold") in spans for row in range(y, y + h))


def test_long_edges_go_around_boxes_and_share_the_target_arrow() -> None:
    nodes = [Node(k, [k.upper()]) for k in "abc"]
    pic = draw_dag(nodes, [Edge("a", "b", "dep"), Edge("a", "c", "dep"), Edge("b", "c", "dep")],
                   SOLID)
    assert set(pic.boxes) == {"a", "b", "c"}
    assert pic.boxes["a"][1] < pic.boxes["b"][1] < pic.boxes["c"][1]
    assert pic.text().count("▼") == 2  # into b; both edges into c share its arrow
    assert _interior(pic, "b") == [" B "]  # the a -> c edge passes beside b, not through it
    x, y, w, h = pic.boxes["a"]
    assert pic.rows[y + h - 1].count("┬") == 2  # one port per outgoing edge
    assert pic.box_at(x, y) == "a" and pic.box_at(x - 1, y + h) is None
    assert all(style == "bold" for *_, style in pic.spans)  # solid lines carry no style


def test_edge_looks_pick_glyphs_and_styles() -> None:
    looks = {"data": EdgeLook(line="cyan", arrow="cyan", dashed=True),
             "ctl": EdgeLook(line="magenta", arrow="magenta", label="magenta")}
    pic = draw_dag([Node("t", ["task"]), Node("j", ["judge"]), Node("x", ["end"])],
                   [Edge("t", "j", "data"), Edge("j", "x", "ctl", "yes")], looks)
    text = pic.text()
    assert "┆" in text and "│" in text and "yes" in text
    styles = {style for *_, style in pic.spans}
    assert {"cyan", "magenta"} <= styles
    label_row = next(i for i, row in enumerate(pic.rows) if "yes" in row)
    start = pic.rows[label_row].index("yes")
    assert any(row == label_row and a <= start and start + 3 <= b and style == "magenta"
               for row, a, b, style in pic.spans)  # the label is coloured like its edge


def test_even_heights_line_a_layer_up() -> None:
    nodes = [Node("a", ["a"]), Node("b", ["b", "two", "three"], style="dim")]
    ragged = draw_dag(nodes, [], SOLID)
    assert ragged.boxes["a"][3] == 3 and ragged.boxes["b"][3] == 5
    even = draw_dag(nodes, [], SOLID, even_heights=True)
    assert even.boxes["a"][3] == even.boxes["b"][3] == 5
    x, y, w, h = even.boxes["b"]
    assert all((row, x, x + w, "dim") in even.spans for row in range(y, y + h))
    assert even.rows[y + h - 1][x] == "└" and even.rows[y + h - 1][x + w - 1] == "┘"


def test_cycles_unknown_ends_and_empty_input_do_not_break_it() -> None:
    assert draw_dag([], [], SOLID).rows == []
    edges = [Edge("a", "b"), Edge("b", "a"), Edge("a", "ghost"), Edge("a", "a")]
    pic = draw_dag([Node("a", ["a"]), Node("b", ["b"])], edges, SOLID)
    assert set(pic.boxes) == {"a", "b"} and pic.text().count("▼") == 1
    assert layers(["a", "b"], edges) == {"a": 0, "b": 1}


def test_random_dags_never_draw_through_a_box() -> None:
    rnd = random.Random(7)
    for _ in range(25):
        keys = [f"n{i}" for i in range(rnd.randint(2, 14))]
        edges = [Edge(a, b, rnd.choice(["dep", "other"]))
                 for i, a in enumerate(keys) for b in keys[i + 1:] if rnd.random() < 0.25]
        nodes = [Node(k, [k, "x" * rnd.randint(0, 12)]) for k in keys]
        pic = draw_dag(nodes, edges, SOLID, even_heights=rnd.random() < 0.5)
        for node in nodes:
            inside = "".join(_interior(pic, node.key))
            assert not set(inside) & set("│┆─┄┼├┤┬┴▼"), (node.key, pic.text())
        placed = list(pic.boxes.values())
        for i, (x1, y1, w1, h1) in enumerate(placed):  # boxes never overlap
            for x2, y2, w2, h2 in placed[i + 1:]:
                assert x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1
        width = max(len(r) for r in pic.rows)
        for row, start, end, _style in pic.spans:
            assert 0 <= row < len(pic.rows) and 0 <= start < end <= width


def test_neighbourhood_and_shorten() -> None:
    down = {"a": ["b"], "b": ["c"], "x": ["b"], "lonely": []}
    assert neighbourhood("b", down) == {"a", "b", "c", "x"}
    assert neighbourhood("a", down) == {"a", "b", "c"}
    assert shorten("abcdef", 4) == "abc…" and shorten("abc", 4) == "abc"

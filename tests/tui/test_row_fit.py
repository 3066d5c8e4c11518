"""A tree row wider than its panel gives up detail, never facts (`dagtui.tui.fit.fit_row`),
and the editor's tree on a shipped graph never needs to scroll sideways."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.style import Style
from rich.text import Text

from dagtui.tui.fit import Piece, fit_row, narrowest
from tui.conftest import GRAPHS, make_app

pytestmark = pytest.mark.timeout(120)

NODE_ROW = [Piece(Text("◈ deep_analysis")), Piece(Text("  non_binary"), "drop"),
            Piece(Text("  Deep analysis"), "cut"), Piece(Text("  ✖ 2"))]


def test_a_row_that_fits_is_shown_whole() -> None:
    assert fit_row(NODE_ROW, 60).plain == "◈ deep_analysis  non_binary  Deep analysis  ✖ 2"


def test_the_type_goes_before_the_label_is_cut_and_a_cut_ends_in_an_ellipsis() -> None:
    assert fit_row(NODE_ROW, 40).plain == "◈ deep_analysis  Deep analysis  ✖ 2"
    cut = fit_row(NODE_ROW, 30)
    assert cut.plain == "◈ deep_analysis  Deep an…  ✖ 2" and cut.cell_len == 30


def test_a_label_too_short_to_say_anything_goes_and_the_facts_stay() -> None:
    # two cells after its spacing is the least a cut label shows ("D…")
    assert fit_row(NODE_ROW, 24).plain == "◈ deep_analysis  D…  ✖ 2"
    assert fit_row(NODE_ROW, 23).plain == "◈ deep_analysis  ✖ 2"
    # narrower than its facts, the row comes back wider than asked: the tree scrolls
    assert fit_row(NODE_ROW, 5).plain == "◈ deep_analysis  ✖ 2"


def test_a_verdict_keeps_its_first_letter_and_where_it_goes() -> None:
    row = [Piece(Text("Significant issues"), "cut", least=2), Piece(Text(" → score 4"))]
    assert fit_row(row, 25).plain == "Significant is… → score 4"
    assert fit_row(row, 3).plain == "S… → score 4"


def test_styles_survive_the_cut() -> None:
    row = [Piece(Text("id", style="bold")), Piece(Text("  a long label", style="italic"), "cut")]
    fitted = fit_row(row, 9)
    assert fitted.plain == "id  a lo…"
    assert {str(span.style) for span in fitted.spans} == {"bold", "italic"}


pieces = st.lists(st.builds(
    Piece, st.text(alphabet=" ab✖→…", max_size=12).map(Text),
    st.sampled_from(["keep", "drop", "cut"]), st.integers(0, 3)), max_size=6)


@given(pieces, st.integers(0, 60))
def test_a_fitted_row_is_as_narrow_as_it_can_be_and_keeps_every_fact(
        row: list[Piece], room: int) -> None:
    fitted = fit_row(row, room)
    full = sum(p.text.cell_len for p in row)
    assert fitted.cell_len <= max(room, narrowest(row)) or fitted.cell_len == full
    assert fit_row(row, 0).cell_len == narrowest(row)
    kept = "".join(p.text.plain for p in row if p.give == "keep")
    rest = iter(fitted.plain)
    assert all(ch in rest for ch in kept)  # the kept pieces, in order
    if full <= room:
        assert fitted.plain == "".join(p.text.plain for p in row)


def rows(tree: Any) -> list[tuple[int, Text]]:
    """(indent, drawn label) of every row the tree shows."""
    out: list[tuple[int, Text]] = []
    stack = list(reversed(tree.root.children))
    while stack:
        row = stack.pop()
        depth, parent = 0, row.parent
        while parent is not tree.root:
            depth, parent = depth + 1, parent.parent
        out.append((depth * tree.guide_depth, tree.render_label(row, Style(), Style())))
        if row.is_expanded:
            stack.extend(reversed(row.children))
    return out


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
@pytest.mark.parametrize("name", sorted(p.name for p in GRAPHS.glob("*.toml")))
async def test_no_shipped_graph_scrolls_sideways(name: str, size: tuple[int, int]) -> None:
    from dagtui.tui.widgets.graph_tree import GraphTree

    app = make_app(GRAPHS / name)
    async with app.run_test(size=size) as pilot:
        await app.editor.first_check_done.wait()
        await pilot.pause()
        tree = app.query_one(GraphTree)
        assert not tree.show_horizontal_scrollbar
        width = tree.scrollable_content_region.width
        assert all(indent + label.cell_len <= width for indent, label in rows(tree))


async def test_a_long_label_is_cut_on_a_narrow_terminal_and_its_problem_stays(
        tmp_path: Path) -> None:
    from dagtui.tui.widgets.graph_tree import GraphTree

    path = tmp_path / "code_review.toml"
    shutil.copy(GRAPHS / "code_review.toml", path)
    lines = path.read_text().splitlines()
    at = lines.index("[nodes.deep_analysis]")
    lines[at + 2] = 'label = "A deep analysis of the quality of the code"'
    lines[at + 3] = 'criteria = ""'  # a problem: the row's badge says so
    path.write_text("\n".join(lines) + "\n")
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.editor.first_check_done.wait()
        await pilot.pause()
        tree = app.query_one(GraphTree)
        key = next(k for k in tree._rows if k[:2] == ("node", "deep_analysis"))
        drawn = tree.render_label(tree._rows[key], Style(), Style()).plain
        assert drawn.startswith("▼ ◈ deep_analysis  A")
        assert drawn.endswith("…  ✖ 1")  # the label cut short, the problem count whole
        # the row's text in full is what tests and the tmux check read
        assert "A deep analysis of the quality of the code  ✖ 1" in tree.row_label(key)
        assert not tree.show_horizontal_scrollbar

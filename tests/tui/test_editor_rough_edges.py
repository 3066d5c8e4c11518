"""The rough edges a keyboard user hits, each tried with keys as a new user would."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
from textual.widgets import Button, Input

from dagtui.tui.app import DagtuiApp
from dagtui.tui.screens.dialogs import ChoiceScreen
from dagtui.tui.screens.help import HelpScreen
from dagtui.tui.widgets.graph_tree import GraphTree
from dagtui.tui.widgets.graph_view import GraphView
from dagtui.tui.widgets.node_form import NodeForm
from tui.conftest import make_app

pytestmark = pytest.mark.timeout(60)

SMALL = (80, 24)


async def focus_criteria(pilot, app: DagtuiApp):  # type: ignore[no-untyped-def]
    """Select `present` and put the focus in its criteria text area. The form is built after
    the first frame, so on a loaded machine it may take a few more frames to appear."""
    app.query_one(GraphTree).select_node_id("present")
    await pilot.pause()
    for _ in range(100):
        try:
            area = app.query_one(NodeForm).field("criteria")
            break
        except (KeyError, AssertionError):  # not this node's page yet, or no page yet
            await pilot.pause(0.05)
    else:
        raise AssertionError("the form never showed present's criteria")
    area.focus()
    await pilot.pause()
    return area


def header_text(app: DagtuiApp) -> str:
    """The header and status line as shown (where 'modified' appears)."""
    return " ".join(str(w.render()) for w in app.query("#header, #status"))


async def test_enlarged_graph_takes_focus_opens_at_the_root_and_scrolls(
        graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SMALL) as pilot:
        app.query_one(GraphTree).select_node_id("order")  # a node near the bottom
        await pilot.pause()
        await pilot.press("g")
        await pilot.pause()
        view = app.query_one(GraphView)
        await pilot.press("g")
        await pilot.pause()
        await pilot.pause()
        assert app.editor.graph_big and app.focused is view
        assert view.scroll_y == 0 and view.max_scroll_y > 0
        await pilot.press("j", "down")
        await pilot.pause()
        assert view.scroll_y == 2
        await pilot.press("pagedown")
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        await pilot.press("home")
        await pilot.pause()
        assert view.scroll_y == 0
        await pilot.press("escape")
        await pilot.pause()
        assert not app.editor.graph_big and isinstance(app.focused, GraphTree)


async def test_help_names_the_way_into_the_graph_view(graph_file: Path) -> None:
    app: DagtuiApp = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        titles = [title for title, _ in app.screen.groups]
        assert any("g g" in t for t in titles)
        listed = {b.id: b.key for _, bindings in app.screen.groups for b in bindings}
        for bid in ("graph.down", "graph.up", "graph.page_down", "graph.page_up",
                    "graph.home"):
            assert bid in listed, bid
        assert "down" in listed["graph.down"] and "j" in listed["graph.down"]


async def test_after_choosing_a_starter_the_cursor_is_on_the_first_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path / "new.toml")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("down", "enter")  # the second starter, not the blank one
        await pilot.pause()
        await pilot.pause()
        tree = app.query_one(GraphTree)
        first = app.editor.state.graph.roots()[0]
        assert app.focused is tree
        assert tree.current is not None and tree.current.node == first
        assert app.editor.state.selected == first
        line = tree.cursor_line
        await pilot.press("j")
        await pilot.pause()
        assert tree.cursor_line == line + 1  # moves down from the top, not to the last row


async def test_undoing_every_keystroke_in_a_field_leaves_the_file_unmodified(
        graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await focus_criteria(pilot, app)
        before = app.editor.state.graph.nodes["present"].criteria
        await pilot.press("end", "x", "y")
        await pilot.pause()
        assert app.editor.state.dirty and "modified" in header_text(app)
        await pilot.press("ctrl+z", "ctrl+z")  # the text area's own undo, key by key
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].criteria == before
        assert not app.editor.state.dirty
        assert "modified" not in header_text(app)


async def test_tab_into_a_field_selects_its_text_so_typing_replaces_it(
        graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        app.query_one(GraphTree).select_node_id("order")
        await pilot.pause()
        # tab from the tree until a filled one-line field has the focus
        for _ in range(12):
            await pilot.press("tab")
            await pilot.pause()
            if isinstance(app.focused, Input) and app.focused.value:
                break
        first = app.focused
        assert isinstance(first, Input) and first.value
        await pilot.press("z")
        await pilot.pause()
        assert first.value == "z"


async def test_ctrl_a_selects_all_of_a_long_field(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        area = await focus_criteria(pilot, app)
        await pilot.press("ctrl+a", "q")
        await pilot.pause()
        assert area.text == "q"
        assert app.editor.state.graph.nodes["present"].criteria == "q"


async def test_ctrl_o_without_an_editor_variable_falls_back_to_one_on_path(
        graph_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    nano = bin_dir / "nano"  # a stand-in that writes the new text
    nano.write_text(f"#!{sys.executable}\nimport sys\n"
                    "open(sys.argv[1], 'w').write('Edited in nano?')\n")
    nano.chmod(nano.stat().st_mode | stat.S_IEXEC)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        app.query_one(GraphTree).select_node_id("present")
        await pilot.pause()
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].criteria == "Edited in nano?"
        assert any("using nano" in n for n in app.notices)
        monkeypatch.setenv("PATH", str(tmp_path / "empty"))
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "set $VISUAL or $EDITOR" in app.notices[-1]


async def test_delete_refusal_names_the_key_and_delete_takes_the_nodes_comments(
        graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        app.query_one(GraphTree).select_node_id("present")
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        assert "present" in app.editor.state.graph.nodes
        assert "delete and detach" in app.notices[-1] and "(press D)" in app.notices[-1]
        await pilot.press("D")
        await pilot.pause()
        await pilot.press("enter")  # delete and detach
        await pilot.pause()
        assert "present" not in app.editor.state.graph.nodes
        await pilot.press("ctrl+s")
        await pilot.pause()
        text = graph_file.read_text()
        assert "The gate" not in text  # the comment above [nodes.present] went with it
        assert "# Only summaries with all three headings" in text  # order's stays
        assert "# Evidence first" in text


async def test_save_and_quit_warns_about_errors(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await focus_criteria(pilot, app)
        await pilot.press("ctrl+a", "delete")  # an empty criteria is an error
        await pilot.pause()
        assert app.editor.state.errors
        await pilot.press("escape", "q")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        assert "1 error" in app.screen.message
        save = app.screen.query_one("#save", Button)
        assert "error" in str(save.label)


def footer_keys(app: DagtuiApp) -> set[str]:
    """The keys the footer shows: bindings marked shown that check_action does not hide."""
    return {key for key, active in app.screen.active_bindings.items() if active.binding.show}


async def test_unparsable_file_footer_and_header_show_only_what_works(
        graph_file: Path) -> None:
    graph_file.write_text('[metric]\nname = "x"\n[nodes.a]\ntype = "binary\n')
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert app.editor.state.read_only
        keys = footer_keys(app)
        assert {"ctrl+s", "a", "d", "r", "ctrl+z", "g", "f5"}.isdisjoint(keys), keys
        assert {"f1", "ctrl+q"} & keys
        header = str(app.query_one("#header").render())
        assert "Untitled metric" not in header and "does not parse" not in header
        assert "metric unknown" in header


async def test_starter_chooser_shows_whole_sentences_and_blank_is_one_judgement(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.widgets import OptionList

    from dagtui.tui.screens.dialogs import StarterScreen

    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path / "new.toml")
    async with app.run_test(size=(120, 36)) as pilot:
        assert isinstance(app.screen, StarterScreen)
        options = app.screen.query_one(OptionList)
        texts = {options.get_option_at_index(i).id: str(options.get_option_at_index(i).prompt)
                 for i in range(options.option_count)}
        assert all(text.rstrip().endswith(".") for text in texts.values()), texts
        assert "rejects the obvious failures" in texts["check-first"]
        while options.highlighted is None or \
                options.get_option_at_index(options.highlighted).id != "blank":
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert list(app.editor.state.graph.nodes) == ["judge"]
        assert app.editor.state.errors == 0


async def test_on_a_small_terminal_the_panels_give_way_and_the_footer_fits(
        graph_file: Path) -> None:
    from textual.widgets import Footer

    app = make_app(graph_file)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        bottom = app.query_one("#bottom")
        main = app.query_one("#main")
        assert bottom.size.height <= 7 < main.size.height
        footer = app.query_one(Footer)
        assert footer.compact and not footer.show_command_palette
        assert footer.region.bottom == 24 and footer.size.height == 1
        await pilot.resize_terminal(120, 36)
        await pilot.pause()
        assert app.query_one("#bottom").size.height == 11
        assert not app.query_one(Footer).compact


async def test_v_on_a_problem_shows_its_whole_message_and_can_jump_to_it(
        graph_file: Path) -> None:
    from dagtui.tui.widgets.panels import ProblemsTable

    text = graph_file.read_text().replace('children = ["present", "order"]',
                                          'children = ["present", "order", "no_such_node"]')
    graph_file.write_text(text)
    app = make_app(graph_file)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("p")
        await pilot.pause()
        table = app.query_one(ProblemsTable)
        assert app.focused is table and table.diagnostics
        message = table.diagnostics[0].message
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        shown = " ".join(str(app.screen.query_one(".dialog-message").render()).split())
        assert shown == " ".join(message.split())  # whole, wrapped to the dialog
        await pilot.press("enter")  # go to it
        await pilot.pause()
        assert not isinstance(app.screen, ChoiceScreen)
        assert app.editor.state.selected == table.diagnostics[0].node


async def test_then_completes_node_ids(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        app.query_one(GraphTree).select_node_id("present")
        await pilot.pause()
        then = app.query_one(NodeForm).page.verdict(0, "then")  # false → score 0
        then.focus()
        await pilot.pause()
        await pilot.press("o", "r")
        await pilot.pause(0.2)
        await pilot.press("right")  # take the suggestion
        await pilot.pause()
        assert then.value == "order"
        verdict = app.editor.state.graph.nodes["present"].verdicts[0]
        assert verdict.then == "order"


async def test_verdict_labels_are_shown_whole_in_the_form(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        app.query_one(GraphTree).select_node_id("order")
        await pilot.pause()
        await pilot.pause()
        page = app.query_one(NodeForm).page
        for i, verdict in enumerate(app.editor.state.graph.nodes["order"].verdicts):
            box = page.verdict(i, "verdict")
            assert box.value == verdict.verdict
            assert box.content_size.width > len(box.value)  # room for it and the caret


async def test_a_case_written_in_f5_on_a_starter_lands_in_a_new_cases_file_named_by_the_graph(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dagtui.tui.screens.dialogs import CaseEditScreen

    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path / "new.toml", starter="blank")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("f5")
        await pilot.pause()
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, CaseEditScreen)
        app.screen.query_one("#case-name").load_text("first")
        await pilot.press("f2")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("enter")  # append and leave
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        assert (tmp_path / "new.cases.jsonl").read_text().count("\n") == 1
        assert app.editor.state.graph.metric.cases == "new.cases.jsonl" and app.editor.state.dirty


async def test_help_lists_the_long_field_select_all_and_it_can_be_remapped(
        graph_file: Path) -> None:
    from dagtui.tui.keys import binding_ids

    assert "field.select_all" in binding_ids("editor")
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        listed = {b.id: b.key for _, bindings in app.screen.groups for b in bindings}
        assert listed.get("field.select_all") == "ctrl+a"

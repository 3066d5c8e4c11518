"""Pilot tests: every editor action driven with keys; assertions on the model, the file on
disk and the problems shown."""

from __future__ import annotations

import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from dagtui.tui.app import DagtuiApp
from dagtui.tui.keys import EDITOR_KEYS
from dagtui.tui.screens.dialogs import AddNodeScreen, ChoiceScreen, TextScreen
from dagtui.tui.screens.editor import EditorScreen
from dagtui.tui.screens.help import HelpScreen
from dagtui.tui.widgets.graph_tree import GraphTree
from dagtui.tui.widgets.graph_view import GraphView
from dagtui.tui.widgets.node_form import NodeForm
from dagtui.tui.widgets.panels import PathsTable, ProblemsTable
from tui.conftest import GRAPHS, SIZE, make_app

pytestmark = pytest.mark.timeout(60)


def form(app: DagtuiApp) -> NodeForm:
    return app.query_one(NodeForm)


def tree_text(app: DagtuiApp) -> str:
    tree = app.query_one(GraphTree)
    return "\n".join(tree.row_label(k) for k in tree._rows)


def problems_shown(app: DagtuiApp) -> list[str]:
    table = app.query_one(ProblemsTable)
    return [f"{d.code} {d.node}.{d.field}" for d in table.diagnostics]


async def goto_row(pilot, app: DagtuiApp, key: tuple) -> None:  # type: ignore[no-untyped-def]
    """Move the tree cursor to a row with j/k only (like a user would)."""
    tree = app.query_one(GraphTree)
    tree.focus()
    await pilot.pause()
    target = tree._rows[key].line
    for _ in range(60):
        if tree.cursor_line == target:
            break
        await pilot.press("j" if tree.cursor_line < target else "k")
    await pilot.pause()
    assert tree.current is not None and tree.current.key == key


def node_key(nid: str, via: str | None = None) -> tuple:
    return ("node", nid, None, None, via)


def verdict_key(nid: str, index: int, target: str | None) -> tuple:
    return ("verdict", nid, index, target, None)


async def test_opens_with_tree_form_and_no_problems(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = tree_text(app)
        for nid in ("extract", "present", "order"):
            assert nid in text
        # verdicts as branches; the shared node `order` once in full and once as a link
        assert "false → score 0" in text
        assert "true → order ↗" in text
        assert app.editor.state.selected == "extract"
        assert form(app).field("instructions").text.startswith("Extract all headings")
        assert problems_shown(app) == []
        assert "no problems" in str(app.query_one(ProblemsTable).get_row_at(0)[4])
        status = str(app.query_one("#status").render())
        assert "valid" in status and "calls/case 2–3" in status


async def test_typing_updates_model_badges_and_problems(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("present", "extract"))
        area = form(app).field("criteria")
        area.focus()
        await pilot.pause()
        area.select_all()
        await pilot.press("delete")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].criteria == ""
        assert app.editor.state.dirty
        assert "DAG003 present.criteria" in problems_shown(app)
        # badge on the tree row, message beside the field
        assert "✖ 1" in app.query_one(GraphTree).row_label(node_key("present", "extract"))
        assert "DAG003" in str(form(app).message("criteria").render())
        for ch in "Is it ok?":
            await pilot.press(ch if ch != " " else "space")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].criteria == "Is it ok?"
        assert "DAG003 present.criteria" not in problems_shown(app)
        assert "✖" not in app.query_one(GraphTree).row_label(node_key("present", "extract"))
        # everything typed in one field in one visit is one undo step
        await pilot.press("escape", "ctrl+z")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].criteria.startswith("Do the summary")
        assert form(app).field("criteria").text.startswith("Do the summary")
        assert not app.editor.state.dirty
        assert "DAG003 present.criteria" not in problems_shown(app)


async def test_bad_number_is_shown_beside_the_field_and_not_applied(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("present", "extract"))
        score = form(app).verdict_widget(0, "score")
        score.focus()
        await pilot.press("end", "backspace", "x")
        await pilot.pause()
        assert "score" in str(form(app).message("verdicts").render())
        assert app.editor.state.graph.nodes["present"].verdicts[0].score is None
        await pilot.press("backspace", "1", "2")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].verdicts[0].score == 12
        assert any(p.startswith("DAG013 present") for p in problems_shown(app))
        assert "DAG013" in str(form(app).message("verdicts").render())


async def test_enter_on_a_problem_jumps_to_node_and_field(graph_file: Path) -> None:
    graph_file.write_text(graph_file.read_text().replace(
        'output_label = "Summary headings"', 'output_label = ""'))
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert any(p.startswith("DAG003 extract.output_label") for p in problems_shown(app))
        await goto_row(pilot, app, node_key("order", "extract"))
        await pilot.press("p")
        table = app.query_one(ProblemsTable)
        assert app.focused is table
        row = next(i for i, d in enumerate(table.diagnostics) if d.field == "output_label")
        table.move_cursor(row=row)
        await pilot.press("enter")
        await pilot.pause()
        assert app.editor.state.selected == "extract"
        assert app.focused is form(app).field("output_label")


async def test_add_node_as_task_child_and_as_verdict_then(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("extract"))
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, AddNodeScreen)
        await pilot.press("ctrl+u")
        for ch in "tone":
            await pilot.press(ch)
        await pilot.press("enter")
        await pilot.pause()
        assert "tone" in app.editor.state.graph.nodes
        assert app.editor.state.graph.nodes["extract"].children == ["present", "order", "tone"]
        assert app.editor.state.graph.nodes["tone"].type == "non_binary"
        assert "tone" in tree_text(app)
        # as the then of present's `false` verdict (its score is replaced)
        await goto_row(pilot, app, verdict_key("present", 0, None))
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("ctrl+u", "w", "h", "y", "enter")
        await pilot.pause()
        v = app.editor.state.graph.nodes["present"].verdicts[0]
        assert (v.then, v.score) == ("why", None)
        assert app.editor.state.selected == "why"


async def test_add_and_remove_verdict(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("order", "extract"))
        await pilot.press("v")
        await pilot.pause()
        labels = [v.verdict for v in app.editor.state.graph.nodes["order"].verdicts]
        assert labels[-1] == "Label 4" and len(labels) == 4
        assert len(form(app).page.verdict_rows) == 4
        await goto_row(pilot, app, verdict_key("order", 1, None))
        await pilot.press("x")
        await pilot.pause()
        labels = [v.verdict for v in app.editor.state.graph.nodes["order"].verdicts]
        assert labels == ["Correct order", "All headings out of order", "Label 4"]


async def test_delete_refused_with_dependents_then_detach(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("order", "extract"))
        await pilot.press("d")
        await pilot.pause()
        assert "order" in app.editor.state.graph.nodes
        assert "extract, present" in app.notices[-1]
        await pilot.press("D")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("enter")  # the focused button: delete and detach
        await pilot.pause()
        assert "order" not in app.editor.state.graph.nodes
        assert app.editor.state.graph.nodes["extract"].children == ["present"]
        true_verdict = app.editor.state.graph.nodes["present"].verdicts[1]
        assert (true_verdict.then, true_verdict.score) == (None, None)
        assert any(p.startswith("DAG012 present") or p.startswith("DAG015")
                   for p in problems_shown(app))
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert "order" in app.editor.state.graph.nodes
        assert app.editor.state.graph.nodes["present"].verdicts[1].then == "order"


async def test_delete_a_leaf_node(graph_file: Path) -> None:
    graph_file.write_text(graph_file.read_text() + textwrap.dedent("""
        [nodes.spare]
        type = "geval"
        name = "spare"
        params = ["actual_output"]
        evaluation_steps = ["x"]
        """))
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("spare"))
        await pilot.press("d")
        await pilot.pause()
        assert "spare" not in app.editor.state.graph.nodes
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "[nodes.spare]" not in graph_file.read_text()


async def test_rename_updates_every_reference_and_saves(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("order", "extract"))
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, TextScreen)
        await pilot.press("ctrl+u")
        for ch in "ordering":
            await pilot.press(ch)
        await pilot.press("enter")
        await pilot.pause()
        nodes = app.editor.state.graph.nodes
        assert "ordering" in nodes and "order" not in nodes
        assert nodes["extract"].children == ["present", "ordering"]
        assert nodes["present"].verdicts[1].then == "ordering"
        assert "ordering" in tree_text(app)
        await pilot.press("ctrl+s")
        await pilot.pause()
        text = graph_file.read_text()
        assert "[nodes.ordering]" in text and 'then = "ordering"' in text
        assert '"order"' not in text
        assert "# both judgements read the extracted headings" in text
        assert not app.editor.state.dirty


async def test_rename_refuses_an_existing_id(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("order", "extract"))
        await pilot.press("r", "ctrl+u", *"present", "enter")
        await pilot.pause()
        assert isinstance(app.screen, TextScreen)
        assert "already exists" in str(app.screen.query_one("#text-error").render())
        await pilot.press("escape")
        assert set(app.editor.state.graph.nodes) == {"extract", "present", "order"}


async def test_move_child_and_verdict(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("present", "extract"))
        await pilot.press("alt+down")
        await pilot.pause()
        assert app.editor.state.graph.nodes["extract"].children == ["order", "present"]
        assert app.query_one(GraphTree).current.node == "present"
        await pilot.press("alt+up")
        await pilot.pause()
        assert app.editor.state.graph.nodes["extract"].children == ["present", "order"]
        await goto_row(pilot, app, verdict_key("order", 0, None))
        await pilot.press("alt+down")
        await pilot.pause()
        labels = [v.verdict for v in app.editor.state.graph.nodes["order"].verdicts]
        assert labels[:2] == ["Two headings swapped", "Correct order"]
        await goto_row(pilot, app, node_key("extract"))
        await pilot.press("alt+down")  # a root has no order to change: said, not done
        await pilot.pause()
        assert "stay in the order" in app.notices[-1]
        await pilot.press("ctrl+s")
        await pilot.pause()
    text = graph_file.read_text()
    assert text.index('"Two headings swapped"') < text.index('"Correct order"')


async def test_undo_redo(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("order", "extract"))
        await pilot.press("v")
        await pilot.pause()
        await pilot.press("escape", "ctrl+z")
        await pilot.pause()
        assert len(app.editor.state.graph.nodes["order"].verdicts) == 3
        assert not app.editor.state.dirty
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert len(app.editor.state.graph.nodes["order"].verdicts) == 4
        assert app.editor.state.dirty


async def test_save_keeps_every_comment(graph_file: Path) -> None:
    original = graph_file.read_text()
    comments = [line.split("#", 1)[1] for line in original.splitlines() if "#" in line]
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("order", "extract"))
        label = form(app).field("label")
        label.focus()
        await pilot.press("end", *" (v2)".replace(" ", "_"))
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
    saved = graph_file.read_text()
    for comment in comments:
        assert comment in saved
    changed = [(a, b) for a, b in zip(original.splitlines(), saved.splitlines(), strict=True)
               if a != b]
    assert changed == [('label = "Heading order"', 'label = "Heading order_(v2)"')]


async def test_external_editor_is_one_undoable_edit(graph_file: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "fake-editor"
    script.write_text(f"#!{sys.executable}\nimport sys\np = sys.argv[1]\n"
                      "open(p, 'w').write('Are all three headings there?\\n')\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("VISUAL", str(script))
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("present", "extract"))
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].criteria == "Are all three headings there?"
        assert form(app).field("criteria").text == "Are all three headings there?"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.editor.state.graph.nodes["present"].criteria.startswith("Do the summary")


async def test_external_editor_failure_discards(graph_file: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VISUAL", "false")
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("present", "extract"))
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "discarded" in app.notices[-1]
        assert not app.editor.state.dirty


async def test_goto_node(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("slash")
        await pilot.pause()
        for ch in "ordr":
            await pilot.press(ch)
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.editor.state.selected == "order"
        assert app.query_one(GraphTree).current.node == "order"


async def test_command_palette_has_every_action(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        helps = " ".join(c.help for c in app.get_system_commands(app.screen))
        for bid, *_ in EDITOR_KEYS:
            if bid not in ("editor.quit", "editor.palette"):  # the palette is open already
                assert bid in helps, bid
        assert any(t.startswith("Rename") for t in titles)
        await pilot.press("ctrl+p")
        await pilot.pause()
        for ch in "rename the node":
            await pilot.press(ch if ch != " " else "space")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TextScreen)


async def test_help_lists_every_key(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        listed = {b.id for _, bindings in app.screen.groups for b in bindings}
        for bid, *_ in EDITOR_KEYS:
            assert bid in listed
        # the palette's key is the editor's own row (it replaces Textual's binding)
        assert {"tree.down", "tree.up", "editor.palette"} <= listed
        assert "app.command_palette" not in listed
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_every_binding_has_an_id_and_can_be_remapped(graph_file: Path) -> None:
    assert all(b.id for b in EditorScreen.BINDINGS)
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        app.set_keymap({"editor.rename": "n"})
        await goto_row(pilot, app, node_key("order", "extract"))
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, TextScreen)
        await pilot.press("escape", "f1")
        await pilot.pause()
        listed = {b.id: b.key for _, bindings in app.screen.groups for b in bindings}
        assert listed["editor.rename"] == "n"  # help shows the remapped key


async def test_quit_asks_when_dirty(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("order", "extract"))
        await pilot.press("v")
        await pilot.pause()
        await pilot.press("escape", "ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("escape")  # cancel
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, ChoiceScreen)
        await pilot.press("ctrl+q")
        await pilot.pause()
        app.screen.query_one("#discard").press()
        await pilot.pause()
    assert app.return_code == 0
    assert "Label 4" not in graph_file.read_text()


async def test_quit_save_and_quit(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("order", "extract"))
        await pilot.press("v", "escape", "q")
        await pilot.pause()
        await pilot.press("enter")  # "Save and quit" is focused first
        await pilot.pause()
    assert '"Label 4"' in graph_file.read_text()


@pytest.mark.parametrize("poll", [0, 0.01], ids=["no-poll", "disk-poll"])
async def test_ctrl_q_right_after_ctrl_s_in_a_field_quits(graph_file: Path,
                                                          poll: float) -> None:
    """ctrl+q pressed right behind ctrl+s, the label field still focused (what the tmux
    test does): the save's form refresh and the disk poll that follows leave the quit
    alone, so the app leaves at once, with no question (nothing is unsaved)."""
    app = make_app(graph_file, poll_interval=poll)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("order", "extract"))
        form(app).field("label").focus()
        await pilot.pause()
        await pilot.press(*" (tmux)", "ctrl+s", "ctrl+q")
        await pilot.pause()
        assert app.return_code == 0, f"still running, on {app.screen!r}"
        assert isinstance(app.screen, EditorScreen)  # no dialog asked anything
    assert "(tmux)" in graph_file.read_text()


async def test_graph_view_whole_and_focus(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("present", "extract"))
        await pilot.press("g")
        await pilot.pause()
        view = app.query_one(GraphView)
        for nid in ("extract", "present", "order"):
            assert nid in view.drawing_text
        assert "true" in view.drawing_text and "▼" in view.drawing_text
        await pilot.press("f")
        await pilot.pause()
        assert view.focus_mode and "upstream" in view.border_title


async def test_paths_table(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.pause()
        table = app.query_one(PathsTable)
        assert table.row_count == 4
        cells = [str(c) for c in table.get_row_at(0)]
        assert "present=false" in cells[5]
        assert cells[2] == "fail"  # short columns first: a narrow terminal keeps them


async def test_metric_form(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, ("metric", None, None, None, None))
        threshold = form(app).field("threshold")
        threshold.focus()
        await pilot.press("end", "backspace", "backspace", "backspace", "1", ".", "5")
        await pilot.pause()
        assert app.editor.state.graph.metric.threshold == 1.5
        assert any(p.startswith("DAG021") for p in problems_shown(app))
        assert "DAG021" in str(form(app).message("threshold").render())


async def test_change_type_keeps_text(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("present", "extract"))
        form(app).field("type").value = "non_binary"
        await pilot.pause()
        node = app.editor.state.graph.nodes["present"]
        assert node.type == "non_binary" and node.criteria.startswith("Do the summary")


async def test_debugger_key_without_debugger(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f5")
        await pilot.pause()
        try:
            import dagtui.tui.debugger  # noqa: F401
        except ImportError:
            assert "debugger not available yet" in app.notices[-1]


def test_cli_edit_is_registered() -> None:
    from dagtui.cli import build_parser

    args = build_parser().parse_args(["edit", "x.toml", "--starter", "blank"])
    assert args.graph == "x.toml" and args.starter == "blank"


def test_opening_the_editor_does_not_import_litellm(graph_file: Path) -> None:
    import subprocess

    code = textwrap.dedent(f"""
        import asyncio, sys
        from dagtui.tui.app import editor_app
        async def main():
            app = editor_app({str(graph_file)!r}, poll_interval=0)
            async with app.run_test(size=(120, 36)) as pilot:
                await pilot.press("g", "t", "p")
                await pilot.pause()
        asyncio.run(main())
        assert "litellm" not in sys.modules, "litellm was imported"
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


async def test_walking_the_tree_never_edits(graph_file: Path) -> None:
    """Moving through every row (each node type's form page is built and refilled) must not
    change the model: stale widget messages are ignored."""
    graph_file.write_text((GRAPHS / "refund_policy.toml").read_text())
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        before = app.editor.state.graph.to_raw()
        rows = len(app.query_one(GraphTree)._rows)
        for key in ["j"] * rows + ["k"] * rows:
            await pilot.press(key)
        await pilot.pause()
        assert app.editor.state.graph.to_raw() == before
        assert not app.editor.state.dirty


async def test_structural_edit_keeps_collapsed_rows_and_cursor(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(GraphTree)
        await goto_row(pilot, app, node_key("order", "extract"))
        await pilot.press("h")  # collapse order's verdicts
        await pilot.pause()
        assert not tree._rows[node_key("order", "extract")].is_expanded
        await goto_row(pilot, app, node_key("present", "extract"))
        await pilot.press("v")  # structural: present gets a third verdict row
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert verdict_key("present", 2, None) in tree._rows
        assert not tree._rows[node_key("order", "extract")].is_expanded
        assert tree.current.node == "present"


async def test_typing_a_label_updates_the_form_title_at_once(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        await goto_row(pilot, app, node_key("order", "extract"))
        title = form(app).page._title
        assert "Heading order" in str(title.render())
        label = form(app).field("label")
        label.focus()
        await pilot.press("end", "!", "!")
        await pilot.pause()
        assert app.editor.state.graph.nodes["order"].label == "Heading order!!"
        assert "Heading order!!" in str(title.render())  # without showing the node again


async def test_problems_table_rewrites_rows_in_place(graph_file: Path) -> None:
    """Adding and fixing problems leaves the table showing exactly the state's problems,
    whether rows are rewritten in place, appended or dropped."""
    app = make_app(graph_file)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(ProblemsTable)

        def rows() -> list[str]:
            return [" ".join(str(c) for c in table.get_row_at(r)) for r in range(table.row_count)]

        def expected() -> list[str]:
            return [f"{d.code} {d.message}" for d in app.editor.state.diagnostics]

        def check() -> None:
            shown = rows()
            assert len(shown) == max(1, len(expected()))
            for row, want in zip(shown, expected(), strict=False):
                code, message = want.split(" ", 1)
                assert code in row and message in row

        check()
        before = len(app.editor.state.diagnostics)
        for nid, field in (("present", "criteria"), ("order", "criteria")):
            app.editor.state.set_field(nid, field, "")
            await app.editor.sync()
            await pilot.pause()
            check()
        assert len(app.editor.state.diagnostics) > before
        app.editor.state.undo()
        await app.editor.sync()
        await pilot.pause()
        check()
        app.editor.state.undo()
        await app.editor.sync()
        await pilot.pause()
        check()
        assert len(app.editor.state.diagnostics) == before

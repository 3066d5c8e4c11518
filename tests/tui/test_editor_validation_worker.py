"""Validation off the event loop: an edit leaves its check to a worker, a newer edit's check
supersedes it, and only the newest result is shown."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagtui.tui.state import EditorState
from tui.conftest import make_app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def state(tmp_path: Path) -> EditorState:
    target = tmp_path / "g.toml"
    shutil.copy(ROOT / "graphs" / "meeting_summary.toml", target)
    return EditorState.open(target)


def codes(state: EditorState) -> set[tuple[str, str | None]]:
    return {(d.code, d.node) for d in state.diagnostics}


def test_without_check_later_an_edit_validates_at_once(state: EditorState) -> None:
    state.set_field("present", "criteria", "")
    assert ("DAG003", "present") in codes(state) and not state.stale


def test_with_check_later_the_edit_waits_for_the_newest_job(state: EditorState) -> None:
    asked: list[int] = []
    state.check_later = lambda: asked.append(state.version)
    state.set_field("present", "criteria", "")
    assert asked == [state.version] and state.stale
    assert ("DAG003", "present") not in codes(state)  # the graph before the edit
    older = state.check_job()
    assert older is not None
    state.set_field("present", "criteria", "Are all three headings there?")
    newer = state.check_job()
    assert newer is not None and older.graph.nodes is not newer.graph.nodes
    # the older job's result arrives late: ignored, the state stays stale
    assert not state.apply_check(older, older.run())
    assert state.stale
    assert state.apply_check(newer, newer.run())
    assert not state.stale and ("DAG003", "present") not in codes(state)
    assert state.check_job() is None  # nothing owed


def test_a_job_is_a_snapshot_the_next_edit_does_not_change(state: EditorState) -> None:
    state.check_later = lambda: None
    state.set_field("present", "criteria", "")
    job = state.check_job()
    assert job is not None
    state.set_field("present", "criteria", "Back again?")
    assert job.graph.nodes["present"].criteria == ""
    assert ("DAG003", "present") in {(d.code, d.node) for d in job.run().diagnostics}


def test_settle_validates_what_is_still_owed(state: EditorState) -> None:
    state.check_later = lambda: None
    state.set_field("present", "criteria", "")
    state.settle()
    assert not state.stale and ("DAG003", "present") in codes(state)


async def test_typing_revalidates_in_the_validate_worker(graph_file: Path) -> None:
    app = make_app(graph_file)
    async with app.run_test(size=(120, 36)) as pilot:
        assert app.editor.state.check_later is not None
        app.editor.state.set_field("present", "criteria", "")
        app.editor.state.set_field("present", "criteria", "")  # no change: no second job
        app.editor.state.set_field("order", "criteria", "")
        workers = [w for w in app.workers if w.group == "validate"]
        assert workers and app.editor.state.stale
        # exclusive: the newer edit's run cancelled the older one (waiting on a cancelled
        # worker raises, so only the live one is awaited)
        assert sum(not w.is_cancelled for w in workers) == 1
        await app.workers.wait_for_complete([w for w in workers if not w.is_cancelled])
        await pilot.pause()
        assert not app.editor.state.stale
        assert {("DAG003", "present"), ("DAG003", "order")} <= codes(app.editor.state)
        shown = app.query_one("#status").render()
        assert "2 errors" in str(shown)

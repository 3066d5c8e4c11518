"""Shared helpers for the debugger's Pilot tests: build the app, wait for the judge worker."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from dagtui.api import load_checked
from dagtui.run.cases import load_cases
from dagtui.tui.app import DagtuiApp, debugger_app
from dagtui.tui.debugger.screen import DebuggerScreen
from dagtui.tui.debugger.widgets import PathTree

ROOT = Path(__file__).resolve().parents[2]
GRAPH = ROOT / "graphs" / "meeting_summary.toml"
CASES = ROOT / "graphs" / "meeting_summary.cases.jsonl"
SIZE = (120, 36)


def meeting_app(judge: Any, case: Any = 0, **kwargs: Any) -> DagtuiApp:
    graph, _ = load_checked(GRAPH)
    cases = load_cases(CASES)
    kwargs.setdefault("cases_source", "graphs/meeting_summary.cases.jsonl")
    return debugger_app(graph, "graphs/meeting_summary.toml", cases=cases, case=case,
                       judge=judge, cursor_blink=False, **kwargs)


def held_task_app(case: Any = 0) -> tuple[DagtuiApp, asyncio.Event]:
    """The meeting-summary debugger with a judge whose task call waits for the returned
    event (stop/cancel tests); other nodes answer at once."""
    from dagtui.judges import CallbackJudge

    gate = asyncio.Event()

    async def held(ask: Any) -> Any:
        if ask.kind == "task":
            await gate.wait()
            return "Intro\nBody\nConclusion"
        return True if ask.kind == "binary" else ask.prompt.labels[0]

    return meeting_app(CallbackJudge(held, needs_params=False), case=case), gate


async def settle(app: DagtuiApp, pilot: Any) -> DebuggerScreen:
    """Let the judge worker finish and the screen redraw; return the debugger screen."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app.debugger


async def select(app: DagtuiApp, pilot: Any, node: str) -> None:
    app.debugger.query_one(PathTree).select_node(node)
    await pilot.pause()


def tree_label(screen: DebuggerScreen, node: str) -> str:
    tree = screen.query_one(PathTree)
    return str(tree._rows[(node, None)].label)


def result_text(screen: DebuggerScreen) -> str:
    from textual.widgets import Static

    return str(screen.query_one("#dbg-result", Static).render())


def copied_graph(tmp_path: Path, case: Any = 0, judge: Any = None) -> DagtuiApp:
    """`dagtui step` (standalone: esc quits) on a copy of the meeting-summary graph and its
    cases under `tmp_path`, so what it writes never touches the repository's files."""
    import shutil

    graph_path = tmp_path / "meeting_summary.toml"
    cases_path = tmp_path / "meeting_summary.cases.jsonl"
    shutil.copy(GRAPH, graph_path)
    shutil.copy(CASES, cases_path)
    graph, _ = load_checked(graph_path)
    from dagtui.judges.labels import LabelsJudge

    return debugger_app(graph, str(graph_path), cases=load_cases(cases_path), case=case,
                       judge=judge or LabelsJudge(), cursor_blink=False,
                       cases_source=str(cases_path))

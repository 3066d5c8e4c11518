"""Write screenshots/debugger_*.svg by driving the real debugger (120×36, no blinking).

    .venv/bin/python scripts/screenshots_debugger.py [--png]

Every picture comes from the app itself: the labels judge for the meeting-summary graph,
the loopback stub for a litellm run (real HTTP through litellm, no internet), the human
judge's question. `--png` also writes PNG copies next to them (for looking, not for git).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
OUT = ROOT / "screenshots"
SIZE = (120, 36)
GRAPH = ROOT / "graphs" / "meeting_summary.toml"
CASES = ROOT / "graphs" / "meeting_summary.cases.jsonl"


def make_app(judge: Any, case: Any) -> Any:
    from dagtui.api import load_checked
    from dagtui.run.cases import load_cases
    from dagtui.tui.app import debugger_app

    graph, _ = load_checked(GRAPH)
    return debugger_app(graph, "graphs/meeting_summary.toml", cases=load_cases(CASES),
                        case=case, judge=judge, cursor_blink=False,
                        cases_source="graphs/meeting_summary.cases.jsonl")


async def press(pilot: Any, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def shoot(name: str, judge: Any, case: Any,
                drive: Callable[[Any], Awaitable[None]]) -> Path:
    app = make_app(judge, case)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await drive(pilot)
        await pilot.pause()
        # notifications are transient; a screenshot should show the screen, not a toast
        app.clear_notifications()
        await pilot.pause()
        path = OUT / f"debugger_{name}.svg"
        app.save_screenshot(str(path))
    return path


async def main(png: bool) -> None:
    from stub_server import StubServer

    from dagtui.judges.labels import LabelsJudge
    from dagtui.judges.litellm_judge import LiteLLMJudge
    from dagtui.tui.debugger.human import TuiHumanJudge
    from dagtui.tui.debugger.widgets import PathTree

    OUT.mkdir(exist_ok=True)
    shots: list[Path] = []

    async def mid_run(pilot: Any) -> None:
        await press(pilot, "n", "n")
        await press(pilot, "4")

    shots.append(await shoot("mid_run", LabelsJudge(), "intro and body swapped", mid_run))

    async def finished(pilot: Any) -> None:
        await press(pilot, "c")

    shots.append(await shoot("finished", LabelsJudge(), "intro and body swapped", finished))

    async def what_if(pilot: Any) -> None:
        await press(pilot, "c")
        pilot.app.debugger.query_one(PathTree).select_node("present")
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        await press(pilot, "enter")  # false: the gate fails the summary

    shots.append(await shoot("what_if", LabelsJudge(), "all headings in order", what_if))

    with StubServer(latency=0.01) as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="stub",
                             cache=None, retries=0)

        async def model_run(pilot: Any) -> None:
            await press(pilot, "c")
            pilot.app.debugger.query_one(PathTree).select_node("order")
            await pilot.pause()
            await press(pilot, "5")

        shots.append(await shoot("litellm_usage", judge, "all headings in order", model_run))

    async def human(pilot: Any) -> None:
        await pilot.press("o")
        await pilot.pause()
        pilot.app.screen.query_one("#text-value").load_text("Intro\nBody\nConclusion")
        await pilot.press("f2")
        await pilot.pause()
        await press(pilot, "n")
        await pilot.press("n")
        await pilot.pause()
        await pilot.pause()

    shots.append(await shoot("human_judge", TuiHumanJudge(), "all headings in order", human))

    for path in shots:
        print(path.relative_to(ROOT))
        if png:
            import cairosvg

            cairosvg.svg2png(url=str(path), write_to=str(path.with_suffix(".png")))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--png", action="store_true", help="also write PNG copies")
    asyncio.run(main(parser.parse_args().png))

"""Debugger timings, headless at 120×36 (run by hand; prints figures, asserts nothing).

    .venv/bin/python tests/benchmarks/bench_debugger.py

- open: app start to the first drawn screen;
- step: `n` pressed to the step drawn (labels judge, so this is the UI's own cost);
- refresh: one full `refresh_view` (tree relabel + five panes);
- responsiveness: while a judge takes 1 s to answer, how often the event loop still runs
  (a 20 ms interval timer's ticks; ~50 means the UI never froze);
- first model call: the same count while litellm is imported (seconds) and the stub asked.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from tui.debugger_helpers import SIZE, meeting_app  # noqa: E402

from dagtui.judges.base import CallbackJudge  # noqa: E402
from dagtui.judges.labels import LabelsJudge  # noqa: E402


async def bench_steps(rounds: int = 5) -> None:
    opens, steps, refreshes = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        app = meeting_app(LabelsJudge(), case=2)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            opens.append(time.perf_counter() - t0)
            for _ in range(3):
                t1 = time.perf_counter()
                await pilot.press("n")
                await app.workers.wait_for_complete()
                await pilot.pause()
                steps.append(time.perf_counter() - t1)
            screen = app.debugger
            for _ in range(10):
                t2 = time.perf_counter()
                screen.refresh_view()
                refreshes.append(time.perf_counter() - t2)
    print(f"open      median {statistics.median(opens) * 1000:7.1f} ms  (n={len(opens)})")
    print(f"step      median {statistics.median(steps) * 1000:7.1f} ms  "
          f"max {max(steps) * 1000:.1f} ms  (n={len(steps)})")
    print(f"refresh   median {statistics.median(refreshes) * 1000:7.1f} ms  (n={len(refreshes)})")


async def bench_responsiveness() -> None:
    async def slow(ask):  # type: ignore[no-untyped-def]
        await asyncio.sleep(1.0)
        return "Intro\nBody\nConclusion"

    app = meeting_app(CallbackJudge(slow, needs_params=False), case=0)
    ticks = 0

    def tick() -> None:
        nonlocal ticks
        ticks += 1

    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.set_interval(0.02, tick)
        await pilot.press("n")
        start = time.perf_counter()
        await app.workers.wait_for_complete()
        elapsed = time.perf_counter() - start
    print(f"responsiveness: {ticks} timer ticks of 20 ms during a {elapsed:.2f} s judge call "
          f"(ideal {elapsed / 0.02:.0f})")




async def bench_first_model_call() -> None:
    """Ticks while the first litellm call (import included) is made against the stub."""
    from stub_server import StubServer

    from dagtui.judges.litellm_judge import LiteLLMJudge

    with StubServer() as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="x",
                             cache=None, retries=0)
        app = meeting_app(judge, case=0)
        ticks = 0

        def tick() -> None:
            nonlocal ticks
            ticks += 1

        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            app.set_interval(0.02, tick)
            await pilot.press("n")
            start = time.perf_counter()
            await app.workers.wait_for_complete()
            elapsed = time.perf_counter() - start
    print(f"first model call (litellm import + 1 request): {elapsed:.2f} s, {ticks} ticks of "
          f"20 ms (ideal {elapsed / 0.02:.0f})")


if __name__ == "__main__":
    asyncio.run(bench_first_model_call())  # first: litellm must not be imported yet
    asyncio.run(bench_steps())
    asyncio.run(bench_responsiveness())

"""Lanes: litellm calls on event loops in daemon threads, awaited from the engine's loop."""

from __future__ import annotations

import asyncio
import threading

import pytest
from stub_server import StubServer

from dagtui.graph.loader import load_file
from dagtui.judges import LiteLLMJudge
from dagtui.judges.lanes import Lanes, shared_lanes
from dagtui.run.cases import Case
from dagtui.run.engine import Engine


async def _where() -> str:
    await asyncio.sleep(0)
    return threading.current_thread().name


def test_calls_run_round_robin_on_lane_threads_and_return_their_value():
    lanes = Lanes(3)

    async def main() -> list[str]:
        return await asyncio.gather(*(lanes.run(_where()) for _ in range(6)))

    names = asyncio.run(main())
    assert names == [f"dagtui-lane-{i % 3}" for i in range(6)]
    assert threading.current_thread().name not in names


def test_an_exception_on_a_lane_reaches_the_caller():
    async def boom() -> None:
        raise KeyError("lost")

    with pytest.raises(KeyError, match="lost"):
        asyncio.run(Lanes(1).run(boom()))


def test_cancelling_the_await_cancels_the_call_on_its_lane():
    lanes = Lanes(1)
    cancelled = threading.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(lanes.run(slow()), timeout=0.05)

    asyncio.run(main())
    assert cancelled.wait(5), "the lane's task was not cancelled"


def test_shared_lanes_are_one_pool_per_count():
    assert shared_lanes(2) is shared_lanes(2)
    assert shared_lanes(2) is not shared_lanes(3)
    with pytest.raises(ValueError):
        Lanes(0)


@pytest.mark.parametrize("lanes", [0, 4])
def test_a_batch_through_lanes_scores_and_counts_like_the_callers_loop(lanes: int):
    """The same 12 cases with litellm on the engine's loop and on 4 lanes: same scores,
    same calls at the stub, nothing lost or doubled."""
    graph = load_file("graphs/meeting_summary.toml").graph
    cases = [Case(f"c{i}", {"actual_output": f"Intro\nBody {i}\nConclusion"}) for i in range(12)]
    with StubServer(latency=0.01) as stub:
        judge = LiteLLMJudge("openai/gpt-4.1-mini", api_base=stub.base_url, api_key="test",
                             concurrency=6, lanes=lanes)
        engine = Engine(graph, judge)

        async def main() -> list:
            return await asyncio.gather(*(engine.run(c) for c in cases))

        results = asyncio.run(main())
        assert stub.calls == 36 == judge.calls_sent
    assert [r.score for r in results] == [1.0] * 12
    assert all(r.error is None and r.calls == 3 for r in results)

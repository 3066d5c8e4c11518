"""The debugger with a real litellm judge against the loopback stub (real HTTP, no internet).

What is shown must be what was sent: the Prompt pane of every step is compared byte for byte
with the messages the stub received. Edit & re-run is proved by the stub's call counter, and
faults injected by the stub (500, a body that is not JSON, an answer that is not JSON) must
end as failed steps in an app that keeps working.
"""

from __future__ import annotations

import pytest
from stub_server import StubServer

from dagtui.judges.litellm_judge import LiteLLMJudge
from dagtui.tui.debugger.panes_text import format_messages
from dagtui.tui.debugger.widgets import StepPanes
from tui.debugger_helpers import SIZE, meeting_app, result_text, select, settle, tree_label

MODEL = "openai/gpt-4.1-mini"

pytestmark = pytest.mark.slow


def judge_for(stub: StubServer, **kw: object) -> LiteLLMJudge:
    kw.setdefault("retries", 0)
    return LiteLLMJudge(MODEL, api_base=stub.base_url, api_key="test", cache=None,
                        **kw)  # type: ignore[arg-type]


@pytest.fixture
def stub():  # type: ignore[no-untyped-def]
    with StubServer() as server:
        yield server


async def test_prompts_shown_are_the_bytes_the_stub_received(stub: StubServer) -> None:
    app = meeting_app(judge_for(stub), case="all headings in order")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        screen = await settle(app, pilot)
        assert stub.calls == 3
        result = screen.live.result()
        assert result.score == 1.0 and result.calls == 3
        panes = screen.query_one(StepPanes)
        for i, node in enumerate(["extract", "present", "order"]):
            await select(app, pilot, node)
            sent = stub.requests[i]["body"]["messages"]
            shown = panes.text_of("prompt")
            assert format_messages(sent) in shown
            for message in sent:  # every message's content, byte for byte
                assert message["content"] in shown
            rec = screen.live.record(node)
            assert rec.request["messages"] == sent
            assert panes.text_of("response") == rec.raw
            usage = panes.text_of("usage")
            assert "calls sent        1" in usage and "cache hit         no" in usage
        header = str(screen.query_one("#dbg-header-right").render())
        assert "3 calls" in header


async def test_the_preview_of_the_next_prompt_is_what_gets_sent(stub: StubServer) -> None:
    app = meeting_app(judge_for(stub), case="intro and body swapped")
    async with app.run_test(size=SIZE) as pilot:
        screen = await settle(app, pilot)
        panes = screen.query_one(StepPanes)
        for i, node in enumerate(["extract", "present", "order"]):
            await select(app, pilot, node)
            preview = panes.text_of("prompt")
            assert preview.startswith("(not sent yet")
            await pilot.press("n")
            await settle(app, pilot)
            sent = stub.requests[i]["body"]["messages"]
            assert preview.endswith(format_messages(sent))
        assert stub.calls == 3


async def test_edit_and_rerun_reuses_upstream_steps_at_the_stub(stub: StubServer) -> None:
    app = meeting_app(judge_for(stub), case=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        assert stub.calls == 3
        await select(app, pilot, "order")
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#text-value").load_text(
            "Classify the order of the headings: Intro, then Body, then Conclusion.")
        await pilot.press("f2")
        screen = await settle(app, pilot)
        assert stub.calls == 4  # only the edited node was asked again
        assert "Intro, then Body, then Conclusion" in str(stub.requests[3]["body"]["messages"])
        assert [r.source for r in screen.live.records] == ["reused", "reused", "judge"]
        assert screen.live.result().score == 1.0
        # a what-if on the gate: upstream reused, the gate overridden, no call at all
        await select(app, pilot, "present")
        await pilot.press("o")
        await pilot.pause()
        await pilot.press("enter")  # false
        screen = await settle(app, pilot)
        assert stub.calls == 4
        assert screen.live.result().score == 0.0 and "overridden" in result_text(screen)


@pytest.mark.parametrize("fault", ["500", "malformed"])
async def test_http_faults_become_failed_steps(fault: str) -> None:
    with StubServer(fault_plan={1: fault}) as stub:
        app = meeting_app(judge_for(stub), case=0)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await pilot.press("c")
            screen = await settle(app, pilot)
            assert stub.calls == 2
            assert "✘" in tree_label(screen, "present")
            await select(app, pilot, "present")
            panes = screen.query_one(StepPanes)
            kind = "5xx" if fault == "500" else "malformed"
            assert kind in panes.text_of("verdict") and "FAILED" in panes.text_of("verdict")
            assert "error" in result_text(screen)
            # still usable: restart and run again (the stub answers normally now)
            await pilot.press("r", "c")
            screen = await settle(app, pilot)
            assert screen.live.result().score == 1.0 and stub.calls == 5


async def test_an_answer_that_is_not_json_gets_one_correction_then_fails() -> None:
    with StubServer(fault_plan={0: "bad_json", 1: "bad_json"}) as stub:
        app = meeting_app(judge_for(stub), case=0)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await pilot.press("n")
            screen = await settle(app, pilot)
            assert stub.calls == 2
            rec = screen.live.record("extract")
            assert rec.error is not None and len(rec.calls) == 2
            panes = screen.query_one(StepPanes)
            response = panes.text_of("response")
            assert "Sure! The verdict is probably yes" in response
            assert "call 2 · correction" in response
            prompt = panes.text_of("prompt")
            assert "call 2 of 2 · correction" in prompt
            for i in range(2):
                assert format_messages(stub.requests[i]["body"]["messages"]) in prompt
            await pilot.press("r", "c")
            screen = await settle(app, pilot)
            assert screen.live.result().score == 1.0


async def test_stop_cancels_a_model_call_that_hangs() -> None:
    import asyncio

    with StubServer(fault_plan={0: "timeout"}, hang=5.0) as stub:
        app = meeting_app(judge_for(stub, timeout=30.0), case=0)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await pilot.press("n")
            for _ in range(100):  # until the request reaches the stub
                await asyncio.sleep(0.05)
                if stub.calls:
                    break
            screen = app.debugger
            assert screen.busy and "asking" in tree_label(screen, "extract")
            await pilot.press("x")
            screen = await settle(app, pilot)
            assert not screen.busy and screen.live.records == []
            assert "ready: n steps into extract" in result_text(screen)
            await pilot.press("c")  # the stub answers normally from the second request on
            screen = await settle(app, pilot)
            assert screen.live.result().score == 1.0 and stub.calls == 4

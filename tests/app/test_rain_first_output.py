"""The Matrix rain stops at a sub-agent's first streamed output, a tool call included.

A streamed tool call has no delta event of its own; the engine's ``streaming`` status,
sent with the first delta of any kind, is what ends the wait.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.app import App, ComposeResult

from smith_tui.engine import events as ev
from smith_tui.widgets.matrix_rain import MatrixRain
from tests.app.app_harness import wait_until
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import ScriptedLLMServer, stall, text_reply
from tests.support.runtime import open_runtime


class RainHost(App[None]):
    def compose(self) -> ComposeResult:
        yield MatrixRain(id="rain")


def test_streaming_status_ends_the_wait_and_thinking_does_not() -> None:
    rain = MatrixRain()
    rain.handle_event(ev.LLMRequestStarted(turn_id="t", model="m", role="worker", job_id="j1"))
    assert rain.raining
    rain.handle_event(ev.StatusChanged(status="thinking", role="worker", job_id="j1"))
    assert rain.raining
    rain.handle_event(ev.StatusChanged(status="streaming", role="explorer", job_id="j2"))
    assert rain.raining  # another job's output does not count
    rain.handle_event(ev.StatusChanged(status="streaming", role="worker", job_id="j1"))
    assert not rain.raining


async def test_rain_stops_while_the_childs_tool_call_is_still_streaming(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    child_answer = text_reply(
        tool_calls=[report(status="ok", summary="all good", changes=[], verification=[])],
        chunk_chars=4,
    )
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "Tidy the README")]),
        # role delta, the call's header and one argument piece, then the stream hangs open
        stall(after_events=3, base=child_answer, hold_s=30),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    app = RainHost()
    async with app.run_test() as pilot:
        rain = app.query_one(MatrixRain)
        seen: list[tuple[ev.Event, bool]] = []

        def follow(event: ev.Event) -> None:
            rain.handle_event(event)
            seen.append((event, rain.raining))

        runtime.bus.subscribe(follow)
        turn = asyncio.create_task(runtime.run_turn("tidy up", role="direct"))

        def child_streaming() -> bool:
            return any(
                isinstance(e, ev.StatusChanged) and e.status == "streaming" and e.job_id
                for e, _ in seen
            )

        await wait_until(pilot, child_streaming, what="the child's first output")
        child = [(e, raining) for e, raining in seen if e.job_id is not None]
        started = next(i for i, (e, _) in enumerate(child) if isinstance(e, ev.LLMRequestStarted))
        first = next(
            i
            for i, (e, _) in enumerate(child)
            if isinstance(e, ev.StatusChanged) and e.status == "streaming"
        )
        assert child[started][1] is True  # the worker waits: rain
        assert child[first][1] is False  # its tool call began: no more rain
        assert not rain.raining and not rain.has_class("-raining")
        # the call is still streaming: nothing of it was delivered as a message yet
        assert not [e for e, _ in child if isinstance(e, ev.AssistantMessage | ev.TextDelta)]
        runtime.cancel_turn()
        result = await asyncio.wait_for(turn, 10)
    assert result.stop_reason == "cancelled"
    assert rec.of(ev.DispatchStarted)
    await runtime.aclose()

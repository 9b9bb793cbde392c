"""Pause, step and resume of a running turn (engine/turn_control.py), end to end: a real
runtime, the scripted Chat-Completions server's request log as the proof of what was sent."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from smith_tui.engine import events as ev
from smith_tui.engine.runtime import Runtime
from tests.dispatch.support import (
    assert_transcript_valid,
    child_requests,
    dispatch,
    report,
    results,
    stored,
    task_of,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import open_runtime

WAIT_S = 10.0
FOUND = {
    "status": "ok",
    "summary": "The README says demo.",
    "findings": ["README.md holds # demo"],
    "evidence": ["README.md:1"],
}


async def until(condition: Callable[[], object], what: str, within: float = WAIT_S) -> None:
    """Wait until ``condition()`` is true (checked as the event loop runs), else fail."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.005)


def three_rounds(server: ScriptedLLMServer) -> None:
    """Tool calls twice, then the answer."""
    server.enqueue(
        text_reply(tool_calls=[tool_call("read", {"path": "README.md"})]),
        text_reply(tool_calls=[tool_call("read", {"path": "README.md"})]),
        text_reply("Read it twice."),
    )


def pause_on(runtime: Runtime, kind: type[ev.Event], job: bool = False) -> None:
    """Pause the turn as the first event of ``kind`` arrives (a key press at that moment)."""
    done: list[bool] = []

    def listener(event: ev.Event) -> None:
        if isinstance(event, kind) and not done and (event.job_id is not None) == job:
            done.append(True)
            assert runtime.pause_turn(event.job_id if job else None) is not None

    runtime.bus.subscribe(listener)


async def test_a_paused_turn_sends_nothing_until_stepped_or_resumed(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    three_rounds(llm_server)
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    pause_on(runtime, ev.ToolCallStarted)  # round one's tool is running: it finishes
    turn = asyncio.create_task(runtime.run_turn("read the README twice"))

    await until(lambda: rec.of(ev.TurnPaused), "the first hold")
    (held,) = rec.of(ev.TurnPaused)
    assert (held.at, held.rounds) == ("request", 1)
    assert rec.of(ev.ToolCallFinished)[0].ok  # the running tool call finished
    assert runtime.paused and runtime.turn_control().state == "paused"  # type: ignore[union-attr]
    assert len(llm_server.chat_requests()) == 1 and llm_server.pending == 2
    await asyncio.sleep(0)  # the loop gets every chance to run on; it holds
    assert len(llm_server.chat_requests()) == 1 and not turn.done()

    assert runtime.step_turn() == "running"
    await until(lambda: len(rec.of(ev.TurnPaused)) == 2, "the hold after the step")
    assert [e.how for e in rec.of(ev.TurnResumed)] == ["stepped"]
    assert rec.of(ev.TurnPaused)[1].rounds == 2
    assert len(llm_server.chat_requests()) == 2  # exactly one more round
    assert len(rec.of(ev.ToolCallFinished)) == 2 and not turn.done()

    assert runtime.resume_turn() == "running"
    result = await asyncio.wait_for(turn, WAIT_S)
    assert result.stop_reason == "completed" and result.text == "Read it twice."
    assert [e.how for e in rec.of(ev.TurnResumed)] == ["stepped", "resumed"]
    assert len(llm_server.chat_requests()) == 3
    assert not runtime.paused and runtime.turn_control() is None
    assert_transcript_valid(stored(runtime))
    await runtime.aclose()


async def test_a_pause_while_the_reply_streams_holds_before_its_tools(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    three_rounds(llm_server)
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    pause_on(runtime, ev.TextDelta)
    llm_server.clear()
    llm_server.enqueue(
        text_reply("Reading.", tool_calls=[tool_call("read", {"path": "README.md"})]),
        text_reply("Done."),
    )
    turn = asyncio.create_task(runtime.run_turn("read it"))
    await until(lambda: rec.of(ev.TurnPaused), "the hold before the tools")
    assert rec.of(ev.TurnPaused)[0].at == "tools"
    assert rec.of(ev.AssistantMessage) and not rec.of(ev.ToolCallStarted)

    runtime.step_turn()  # the rest of the round: its tool runs, then the turn holds again
    await until(lambda: len(rec.of(ev.TurnPaused)) == 2, "the hold at the round boundary")
    assert rec.of(ev.TurnPaused)[1].at == "request"
    assert len(rec.of(ev.ToolCallFinished)) == 1 and len(llm_server.chat_requests()) == 1

    runtime.resume_turn()
    assert (await asyncio.wait_for(turn, WAIT_S)).text == "Done."
    await runtime.aclose()


async def test_cancel_while_paused_ends_the_turn_at_once(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    three_rounds(llm_server)
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    pause_on(runtime, ev.ToolCallStarted)
    turn = asyncio.create_task(runtime.run_turn("read the README twice"))
    await until(lambda: rec.of(ev.TurnPaused), "the hold")

    started = time.monotonic()
    assert runtime.cancel_turn("user pressed ctrl+c")
    result = await asyncio.wait_for(turn, WAIT_S)
    assert time.monotonic() - started < 1.0
    assert result.stop_reason == "cancelled"
    assert rec.of(ev.TurnResumed)[-1].how == "cancelled"
    assert len(llm_server.chat_requests()) == 1
    assert_transcript_valid(stored(runtime))
    await runtime.aclose()


async def test_a_paused_child_holds_while_its_sibling_finishes_and_keeps_its_deadline(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(
            tool_calls=[dispatch("explorer", "task alpha"), dispatch("explorer", "task beta")]
        ),
        text_reply(tool_calls=[report(**FOUND)]),
        text_reply(tool_calls=[report(**FOUND)]),
        text_reply("Both reported."),
    )
    deadline = 1.0  # the sibling has it to report, on a busy machine too
    runtime, rec = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={"services": {"dispatch": {"child_timeout_s": deadline}}},
    )
    pause_on(runtime, ev.DispatchStarted, job=True)  # the first child, before its first request
    turn = asyncio.create_task(runtime.run_turn("look twice", role="orchestrator"))

    await until(lambda: len(rec.of(ev.DispatchFinished)) == 1, "the sibling's report")
    paused_job = rec.of(ev.DispatchStarted)[0].job_id
    (finished,) = rec.of(ev.DispatchFinished)
    assert finished.job_id != paused_job
    assert finished.status == "ok", finished.summary
    held = [e for e in rec.of(ev.TurnPaused) if e.job_id == paused_job]
    assert held and held[0].rounds == 0
    assert [task_of(r.json) for r in child_requests(llm_server)] == ["task beta"]
    assert runtime.paused and not turn.done()

    # Paused past its deadline: its clock is stopped, so it is not cancelled.
    paused_at = time.monotonic()
    await until(lambda: time.monotonic() - paused_at > 1.5 * deadline, "the deadline to pass")
    assert len(rec.of(ev.DispatchFinished)) == 1 and len(child_requests(llm_server)) == 1

    assert runtime.step_turn(paused_job) == "running"  # one round: its report
    result = await asyncio.wait_for(turn, WAIT_S)
    assert result.stop_reason == "completed" and result.text == "Both reported."
    assert sorted(r["status"] for r in results(runtime)) == ["ok", "ok"]
    assert [task_of(r.json) for r in child_requests(llm_server)] == ["task beta", "task alpha"]
    assert [e.how for e in rec.of(ev.TurnResumed) if e.job_id == paused_job] == ["stepped"]
    await runtime.aclose()


async def test_pausing_the_turn_pauses_the_child_it_is_waiting_for(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("explorer", "task alpha")]),
        text_reply(tool_calls=[tool_call("read", {"path": "README.md"})]),
        text_reply(tool_calls=[report(**FOUND)]),
        text_reply("It reported."),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)

    def listener(event: ev.Event) -> None:
        if isinstance(event, ev.ToolCallStarted) and event.job_id and not rec.of(ev.TurnPaused):
            runtime.pause_turn()  # the top level, while its child's first tool runs

    runtime.bus.subscribe(listener)
    turn = asyncio.create_task(runtime.run_turn("look", role="orchestrator"))
    await until(lambda: rec.of(ev.TurnPaused), "the child's hold")
    job = rec.of(ev.DispatchStarted)[0].job_id
    (held,) = rec.of(ev.TurnPaused)
    assert (held.job_id, held.at, held.rounds) == (job, "request", 1)
    assert len(llm_server.chat_requests()) == 2  # the parent's and the child's first
    top = runtime.turn_control()
    assert top is not None and top.state == "pausing"  # it waits in its dispatch call
    assert top.stopped  # every child it waits for holds: its clock is stopped too

    assert runtime.resume_turn() == "running"  # the whole tree goes on
    result = await asyncio.wait_for(turn, WAIT_S)
    assert result.text == "It reported."
    assert [e.how for e in rec.of(ev.TurnResumed)] == ["resumed"]
    assert len(llm_server.chat_requests()) == 4
    await runtime.aclose()

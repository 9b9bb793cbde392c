"""The runtime's parts: the event bus, and the one turn driver shared by parent and child."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine.bus import EventBus
from tests.dispatch.support import USAGE, dispatch, report
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import open_runtime

EXPLORER_REPORT = {
    "status": "ok",
    "summary": "tests run with pytest",
    "findings": "pytest is configured in pyproject.toml",
    "evidence": ["pyproject.toml:40"],
}


def test_a_failing_subscriber_is_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    bus = EventBus()
    seen: list[ev.Event] = []

    def broken(event: ev.Event) -> None:
        raise ValueError("front end bug")

    bus.subscribe(broken)
    unsubscribe = bus.subscribe(seen.append)
    event = ev.StatusChanged(status="thinking")
    with caplog.at_level(logging.ERROR, logger="smith_tui.engine.bus"):
        bus.emit(event)
    assert seen == [event]
    [record] = caplog.records
    assert "status" in record.getMessage() and record.exc_info[0] is ValueError
    unsubscribe()
    bus.emit(event)
    assert seen == [event]


async def test_a_turn_completes_past_a_failing_subscriber(
    tmp_path: Path, llm_server: ScriptedLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.enqueue(text_reply("fine"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)

    def broken_on_text(event: ev.Event) -> None:
        if isinstance(event, ev.TextDelta):
            raise RuntimeError("widget gone")

    runtime.bus.subscribe(broken_on_text)
    with caplog.at_level(logging.ERROR, logger="smith_tui.engine.bus"):
        result = await runtime.run_turn("hi")
    assert result.stop_reason == "completed" and result.text == "fine"
    assert rec.of(ev.TurnFinished)[-1].stop_reason == "completed"
    assert any("text_delta" in r.getMessage() for r in caplog.records)
    await runtime.aclose()


async def test_parent_and_child_turns_are_recorded_by_the_same_driver(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("explorer", "Find how the tests are run")]),
        text_reply(tool_calls=[report(**EXPLORER_REPORT)], usage=USAGE),
        text_reply("done"),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("how are tests run?", role="orchestrator")
    assert result.stop_reason == "completed", result.error

    started = {e.job_id: e for e in rec.of(ev.TurnStarted)}
    finished = {e.job_id: e for e in rec.of(ev.TurnFinished)}
    [job_id] = [j for j in started if j is not None]
    assert set(finished) == {None, job_id}
    records = {
        job: runtime.store.notes.get_turn_record(e.conversation_id, e.turn_id)
        for job, e in started.items()
    }
    parent, child = records[None], records[job_id]
    shared = {"turn_id", "role", "prompt", "model", "stop_reason", "error", "rounds", "usage"}
    assert shared <= parent.keys() and shared <= child.keys()
    assert parent["role"] == "orchestrator" and child["role"] == "explorer"
    assert child["prompt"].startswith("# Task") and child["job_id"] == job_id
    assert child["session"] == f"session-child-{job_id}"
    assert child["stop_reason"] == parent["stop_reason"] == "completed"
    assert child["usage"]["input_tokens"] == USAGE["prompt_tokens"]
    assert finished[job_id].usage == child["usage"]
    assert child["model"] == parent["model"] == "scripted-model"
    await runtime.aclose()


async def test_a_child_whose_model_cannot_be_chosen_fails_alone(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    # An empty catalog and no configured model: the explicit --model is for top-level turns
    # only, so the child's selection fails; the driver turns that into the child's error
    # (as it does for a top-level turn), and the parent goes on.
    llm_server.catalog = {"object": "list", "data": []}
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("explorer", "look around")]),
        text_reply("the explorer could not start"),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("go", role="orchestrator")
    assert result.stop_reason == "completed", result.error
    [child_end] = [e for e in rec.of(ev.TurnFinished) if e.job_id is not None]
    assert child_end.stop_reason == "error"
    assert child_end.error["code"] == "no_model"
    errors = [e for e in rec.of(ev.StatusChanged) if e.status == "error"]
    assert [e.job_id for e in errors] == [child_end.job_id]
    [dispatched] = rec.of(ev.DispatchFinished)
    assert dispatched.status != "ok"
    assert "empty" in str(dispatched.result)
    await runtime.aclose()

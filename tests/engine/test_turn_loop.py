"""The tool loop end to end: real runtime, real SQLite file, scripted server over HTTP."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from smith_tui.engine import events as ev
from smith_tui.llm import sanitize_messages
from tests.support.llm_server import (
    ScriptedLLMServer,
    disconnect_after,
    http_error,
    stall,
    text_reply,
    tool_call,
)
from tests.support.runtime import open_runtime


def _roles(messages: list[dict]) -> list[str]:
    return [m["role"] for m in messages]


async def test_multi_round_tool_loop_persists_every_round(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": "echo round-one"})]),
        text_reply(tool_calls=[tool_call("read", {"path": "README.md"})]),
        text_reply("All done: round-one and the README."),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("do two things")
    assert result.stop_reason == "completed"
    assert result.text == "All done: round-one and the README."
    assert result.rounds == 3

    bodies = llm_server.chat_requests()
    assert len(bodies) == 3
    second = bodies[1]["messages"]
    tool_msg = next(m for m in second if m["role"] == "tool")
    assert "round-one" in tool_msg["content"]
    assert tool_msg["tool_call_id"] == second[-3]["tool_calls"][0]["id"]
    third = bodies[2]["messages"]
    assert "# demo" in [m for m in third if m["role"] == "tool"][-1]["content"]

    stored = runtime.store.conversations.list_messages(runtime.conversations.conversation_id)
    assert _roles([m.__dict__ for m in stored]) == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert [m.round for m in stored] == [0, 1, 1, 2, 2, 3]
    record = runtime.store.notes.get_turn_record(
        runtime.conversations.conversation_id, result_turn(rec)
    )
    assert record is not None and record["stop_reason"] == "completed"
    kinds = [type(e) for e in rec.events]
    assert kinds.index(ev.ToolCallStarted) < kinds.index(ev.ToolCallFinished)
    assert rec.of(ev.TurnFinished)[-1].stop_reason == "completed"
    await runtime.aclose()


def result_turn(rec) -> str:
    return rec.of(ev.TurnStarted)[0].turn_id


async def test_budget_exhausted_stops_and_leaves_valid_transcript(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(
            tool_calls=[
                tool_call("bash", {"command": "echo a"}),
                tool_call("bash", {"command": "echo b"}),
            ]
        ),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, config={"tool_step_budget": 1})
    result = await runtime.run_turn("two calls, budget one")
    assert result.stop_reason == "budget_exhausted"
    tools = [m for m in runtime.conversations.messages if m["role"] == "tool"]
    assert len(tools) == 2
    assert "a" in tools[0]["content"] and "budget" in tools[1]["content"]
    sanitize_messages([{"role": "system", "content": "s"}, *_wire(runtime.conversations.messages)])
    await runtime.aclose()


def _wire(messages: list[dict]) -> list[dict]:
    keys = ("role", "content", "tool_calls", "tool_call_id", "name")
    return [{k: m[k] for k in keys if k in m and m[k] is not None} for m in messages]


async def test_http_error_not_retryable_stops_with_error(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(http_error(400, {"error": {"message": "bad model"}}))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "error"
    assert result.error is not None and result.error.code == "http_400"
    assert len(llm_server.chat_requests()) == 1
    assert not rec.of(ev.RetryScheduled)
    await runtime.aclose()


async def test_transport_retries_follow_backoff_then_succeed(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(http_error(500), http_error(503), text_reply("third time lucky"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "completed" and result.text == "third time lucky"
    retries = rec.of(ev.RetryScheduled)
    assert [(r.layer, r.attempt, r.delay_s) for r in retries] == [
        ("transport", 1, 0.01),
        ("transport", 2, 0.02),
    ]
    # The reason is the error's message, which names the status once (not "http_500: HTTP 500").
    assert retries[0].reason.startswith("HTTP 500") and retries[1].reason.startswith("HTTP 503")
    assert "http_5" not in retries[0].reason + retries[1].reason
    await runtime.aclose()


async def test_worst_case_is_nine_calls(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    # Each empty-response attempt burns two 500s and then gets an empty reply.
    for _ in range(3):
        llm_server.enqueue(http_error(500), http_error(500), text_reply(""))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "error"
    assert result.error is not None and result.error.code == "empty_response"
    assert len(llm_server.chat_requests()) == 9
    layers = [r.layer for r in rec.of(ev.RetryScheduled)]
    assert layers.count("transport") == 6 and layers.count("empty_response") == 2
    await runtime.aclose()


async def test_transport_retries_exhausted(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(http_error(502), http_error(502), http_error(502), text_reply("never"))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "error" and result.error.code == "http_502"
    assert len(llm_server.chat_requests()) == 3
    await runtime.aclose()


async def test_retry_after_is_honoured_and_capped(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(http_error(429, retry_after=0.3), text_reply("ok after wait"))
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"llm_config": {"retry_backoff_ms": [10, 1000]}}
    )
    started = time.monotonic()
    result = await runtime.run_turn("hi")
    assert result.text == "ok after wait"
    assert rec.of(ev.RetryScheduled)[0].delay_s == 0.3
    assert time.monotonic() - started >= 0.3
    await runtime.aclose()

    llm_server.enqueue(http_error(429, retry_after=50), text_reply("capped"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url, db_name="b.db")
    result = await runtime.run_turn("hi")
    assert result.text == "capped"
    assert rec.of(ev.RetryScheduled)[0].delay_s == 0.02  # the largest backoff, not 50 s
    await runtime.aclose()


async def test_failed_stream_after_output_is_not_retried_by_default(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(disconnect_after(4, text_reply("partial output that is cut", chunk_chars=3)))
    llm_server.enqueue(text_reply("not reached"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "error"
    assert len(llm_server.chat_requests()) == 1
    assert rec.of(ev.TextDelta) and not rec.of(ev.StreamReset)
    # What was shown is kept, marked partial.
    assert runtime.conversations.messages[-1]["metadata"].get("partial") is True
    await runtime.aclose()


async def test_failed_stream_after_output_retried_when_enabled(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(disconnect_after(4, text_reply("partial output that is cut", chunk_chars=3)))
    llm_server.enqueue(text_reply("complete answer"))
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"llm_config": {"stream_retry_after_output": True}}
    )
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "completed" and result.text == "complete answer"
    resets = rec.of(ev.StreamReset)
    assert len(resets) == 1
    reset_at = rec.events.index(resets[0])
    later_text = "".join(e.text for e in rec.events[reset_at:] if isinstance(e, ev.TextDelta))
    assert later_text == "complete answer"
    await runtime.aclose()


async def test_cancel_mid_stream_returns_quickly(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(stall(after_events=2, base=text_reply("hello there", chunk_chars=2)))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    task = asyncio.create_task(runtime.run_turn("hi"))
    await llm_server.wait_for_chats_async(1, 5)
    await asyncio.sleep(0.3)
    started = time.monotonic()
    assert runtime.cancel_turn()
    result = await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 1.0
    assert result.stop_reason == "cancelled"
    assert not runtime.busy
    await runtime.aclose()


async def test_cancel_mid_tool_kills_it_and_keeps_transcript_valid(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    command = "echo sleeping; sleep 30"
    llm_server.enqueue(text_reply(tool_calls=[tool_call("bash", {"command": command})]))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    task = asyncio.create_task(runtime.run_turn("sleep"))
    # Mid tool: the command printed, so it runs (a fixed wait let a loaded machine cancel
    # before bash had started).
    deadline = time.monotonic() + 30
    while not any("sleeping" in e.text for e in rec.of(ev.ToolOutputDelta)):
        assert time.monotonic() < deadline, "the command never started"
        await asyncio.sleep(0.02)
    started = time.monotonic()
    runtime.cancel_turn()
    result = await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 1.5
    assert result.stop_reason == "cancelled"
    finished = rec.of(ev.ToolCallFinished)[0]
    assert finished.cancelled and not finished.ok

    llm_server.enqueue(text_reply("fine"))
    result = await runtime.run_turn("next")
    assert result.stop_reason == "completed"
    body = llm_server.chat_requests()[-1]
    sanitize_messages(body["messages"])  # raises on an invalid sequence
    tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 1
    await runtime.aclose()


async def test_bad_tool_calls_become_error_results(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(
            tool_calls=[
                tool_call("bash", "{not json"),
                tool_call("no_such_tool", {}),
                tool_call("report", {"status": "ok", "summary": "x"}),
            ]
        ),
        text_reply("recovered"),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("try things")
    assert result.stop_reason == "completed" and result.text == "recovered"
    tool_msgs = [m for m in llm_server.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 3
    assert "not valid JSON" in tool_msgs[0]["content"]
    assert "unknown tool 'no_such_tool'" in tool_msgs[1]["content"]
    assert "not available to the direct role" in tool_msgs[2]["content"]
    await runtime.aclose()


async def test_system_prompt_byte_stable_and_snapshot_transient(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("one"), text_reply("two"))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    await runtime.run_turn("first")
    await runtime.run_turn("second")
    first, second = llm_server.chat_requests()
    assert first["messages"][0] == second["messages"][0]
    assert first["messages"][0]["role"] == "system"
    assert "Project information" in first["messages"][0]["content"]
    for body in (first, second):
        assert body["messages"][-1]["role"] == "user"
        assert body["messages"][-1]["content"].startswith("[state snapshot]")
    stored = [m["content"] for m in runtime.conversations.messages]
    assert stored == ["first", "one", "second", "two"]
    snapshots = runtime.store.snapshots.list_for_conversation(runtime.conversations.conversation_id)
    assert len(snapshots) == 2 and snapshots[0].system_prompt == first["messages"][0]["content"]
    assert snapshots[0].model == "scripted-model"
    await runtime.aclose()


async def test_usage_is_tracked_and_persisted(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    usage = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": "true"})], usage=usage),
        text_reply("done", usage=usage),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.usage == {"input_tokens": 240, "output_tokens": 60, "total_tokens": 300}
    assert runtime.usage.by_role["direct"]["input_tokens"] == 240
    totals = runtime.store.usage.totals_by_role(runtime.conversations.conversation_id)
    assert totals["direct"].input_tokens == 240 and totals["direct"].output_tokens == 60
    assert rec.of(ev.UsageUpdated)[-1].totals["direct"]["total_tokens"] == 300
    assert llm_server.chat_requests()[0]["stream_options"] == {"include_usage": True}
    await runtime.aclose()


async def test_second_turn_while_busy_is_refused(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    from smith_tui.engine.runtime import UserRequestError

    llm_server.enqueue(stall(after_events=1))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    task = asyncio.create_task(runtime.run_turn("one"))
    await llm_server.wait_for_chats_async(1, 5)
    try:
        await runtime.run_turn("two")
    except UserRequestError as exc:
        assert "already running" in exc.message
    else:
        raise AssertionError("a second turn must be refused")
    runtime.cancel_turn()
    await asyncio.wait_for(task, 5)
    await runtime.aclose()


def test_event_to_dict_is_json_ready() -> None:
    event = ev.ToolCallFinished(
        turn_id="t", call_id="c", name="bash", ok=True, duration_s=0.5, summary="ok"
    )
    data = json.loads(json.dumps(event.to_dict()))
    assert data["type"] == "tool_call_finished" and data["name"] == "bash"


async def test_window_budget_counts_the_system_prompt(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    """A large project index eats into the window, so old rounds are dropped sooner."""
    from tests.support.runtime import make_git_repo

    repo = make_git_repo(tmp_path / "repo")
    (repo / "INDEX.md").write_text("index line. " * 500)  # ~6,000 chars ≈ 1,500 tokens
    llm_server.catalog = {
        "data": [{"id": "scripted-model", "context_length": 2_500, "name": "tiny"}]
    }
    llm_server.enqueue(text_reply("first answer"), text_reply("second answer"))
    runtime, _ = open_runtime(
        tmp_path,
        llm_server.base_url,
        cwd=repo,
        config={"context_management": {"trim_threshold_pct": 100}},
    )
    await runtime.run_turn("old question " + "x" * 3_600)  # ≈ 900 tokens
    await runtime.run_turn("new question")
    assert runtime.last_selection.context_window == 2_500
    sent = llm_server.chat_requests()[-1]["messages"]
    assert "index line." in sent[0]["content"]
    contents = [m["content"] for m in sent[1:]]
    # Without counting the system prompt the old question (900 tokens) would still fit.
    assert not any(c.startswith("old question") for c in contents)
    assert "new question" in contents
    await runtime.aclose()

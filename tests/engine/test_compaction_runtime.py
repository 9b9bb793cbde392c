"""Compaction and overflow recovery through a real runtime and the scripted server.

The model's window comes from the server's catalog (``context_length``); the tests size it
from the real request overhead (system prompt, tool schemas, snapshot), so a prompt of
``UNIT`` characters is about as big as that overhead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from smith_tui.engine import events as ev
from smith_tui.engine.compaction import COMPACTION_NOTE_ID, SUMMARY_PREFIX, load_record
from smith_tui.engine.prompt import PARTIAL_PREFIX, RequestBudget, build_system_prompt
from smith_tui.engine.roles import resolve_role
from smith_tui.engine.runtime import Runtime
from smith_tui.engine.window import WindowSettings
from smith_tui.store.notes import scratchpad_note_id
from tests.support.llm_server import (
    ScriptedLLMServer,
    http_error,
    in_stream_error,
    text_reply,
    tool_call,
)
from tests.support.runtime import Recorder, open_runtime

NO_RESERVE = {"context_management": {"output_reserve_pct": 0}}
OPENAI_OVERFLOW = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, your "
        "messages resulted in 9120 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


def catalog(context_length: int) -> dict[str, Any]:
    entry = {"id": "scripted-model", "object": "model", "context_length": context_length}
    return {"object": "list", "data": [entry]}


def overhead(runtime: Runtime) -> int:
    """The fixed part of a direct-role request in tokens (prompt, tools, snapshot)."""
    role = resolve_role("direct")
    return RequestBudget.of(
        build_system_prompt(role, runtime.compute_scope()),
        runtime.services.tool.llm_specs("direct"),
        10**6,
        None,
        WindowSettings(output_reserve_pct=0),
    ).fixed


def prompt(tag: str, chars: int) -> str:
    return f"PROMPT-{tag} " + "w" * chars


def texts(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


async def sized(
    tmp_path: Path, server: ScriptedLLMServer, factor: float, config: dict[str, Any] | None = None
) -> tuple[Runtime, Recorder, int]:
    """A runtime whose model window is ``factor`` times the request overhead; also the
    number of characters that weigh as much as that overhead."""
    runtime, rec = open_runtime(tmp_path, server.base_url, config=config or NO_RESERVE)
    fixed = overhead(runtime)
    server.catalog = catalog(int(fixed * factor))
    return runtime, rec, fixed * 4


async def two_turns(runtime: Runtime, server: ScriptedLLMServer, unit: int) -> None:
    server.enqueue(text_reply("ok1"), text_reply("ok2"))
    for tag in "AB":
        result = await runtime.run_turn(prompt(tag, unit))
        assert result.stop_reason == "completed", result.error


async def test_automatic_compaction_then_restart_rebuilds_summary_and_tail(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, rec, unit = await sized(tmp_path, llm_server, 4)
    await two_turns(runtime, llm_server, unit)
    assert not rec.of(ev.ContextCompacted)  # 3 units of 4: under 85%

    llm_server.enqueue(text_reply("SUMMARY-ONE: A and B were long prompts."), text_reply("ok3"))
    result = await runtime.run_turn(prompt("C", unit))
    assert result.stop_reason == "completed" and result.text == "ok3"

    bodies = llm_server.chat_requests()
    assert len(bodies) == 4
    summary_request, after = bodies[2], bodies[3]
    assert "tools" not in summary_request  # a summary request offers no tools
    assert "PROMPT-A" in texts(summary_request) and "PROMPT-B" in texts(summary_request)
    assert "PROMPT-C" not in texts(summary_request)
    assert "PROMPT-A" not in texts(after) and "PROMPT-B" not in texts(after)
    assert after["messages"][1]["content"].startswith(SUMMARY_PREFIX)
    assert "SUMMARY-ONE" in after["messages"][1]["content"]
    assert "PROMPT-C" in texts(after) and after["tools"]
    (event,) = rec.of(ev.ContextCompacted)
    assert (event.reason, event.summarised, event.kept) == ("auto", 3, 2)
    assert event.tokens_after < event.tokens_before

    # The stored history is whole: the pager, inspect and search still see A and B.
    contents = [m["content"] for m in runtime.conversations.messages]
    assert any(c.startswith("PROMPT-A") for c in contents) and len(contents) == 6
    assert runtime.store.search_messages("PROMPT", project_id=runtime.project_id)
    record = load_record(runtime.store, runtime.conversations.conversation_id)
    assert record is not None and record.summary.startswith("SUMMARY-ONE")
    conversation = runtime.conversations.conversation_id
    await runtime.aclose()

    # A restart (--continue) rebuilds [summary + kept tail] from the stored record.
    again, _ = open_runtime(tmp_path, llm_server.base_url, config=NO_RESERVE)
    assert again.conversations.continue_latest() == conversation
    llm_server.enqueue(text_reply("ok4"))
    result = await again.run_turn("PROMPT-D short")
    assert result.stop_reason == "completed"
    resumed = llm_server.chat_requests()[-1]
    assert "SUMMARY-ONE" in texts(resumed) and "PROMPT-C" in texts(resumed)
    assert "PROMPT-A" not in texts(resumed)
    await again.aclose()


async def test_a_boundary_that_cannot_be_found_means_the_full_history(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _rec, unit = await sized(tmp_path, llm_server, 4)
    await two_turns(runtime, llm_server, unit)
    llm_server.enqueue(text_reply("SUMMARY-TWO"), text_reply("ok3"))
    await runtime.run_turn(prompt("C", unit))
    conversation = runtime.conversations.conversation_id
    note = runtime.store.notes.get(conversation, COMPACTION_NOTE_ID)
    data = json.loads(note.content)
    data["boundary_check"] = "0" * 16  # as if the first kept message had been edited
    runtime.store.notes.put(conversation, COMPACTION_NOTE_ID, json.dumps(data))
    llm_server.catalog = catalog(10**6)  # room for everything now
    await runtime.aclose()

    again, _ = open_runtime(tmp_path, llm_server.base_url, config=NO_RESERVE)
    again.conversations.continue_latest()
    llm_server.enqueue(text_reply("ok4"))
    await again.run_turn("PROMPT-D")
    last = llm_server.chat_requests()[-1]
    assert "SUMMARY-TWO" not in texts(last) and "PROMPT-A" in texts(last)
    await again.aclose()


async def test_manual_compact_with_a_focus(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    empty = await runtime.submit("/compact")
    assert not empty.ok and "nothing to compact" in empty.text

    await two_turns(runtime, llm_server, 50)
    llm_server.enqueue(text_reply("SUMMARY-MANUAL"))
    out = await runtime.submit("/compact keep the file names")
    assert out.ok, out.text
    assert out.data["summarised"] >= 1 and "summarised" in out.text
    summary_request = llm_server.chat_requests()[-1]
    assert "tools" not in summary_request
    assert "keep the file names" in summary_request["messages"][0]["content"]
    (event,) = rec.of(ev.ContextCompacted)
    assert event.reason == "manual"

    llm_server.enqueue(text_reply("ok3"))
    await runtime.run_turn("PROMPT-C")
    assert "SUMMARY-MANUAL" in texts(llm_server.chat_requests()[-1])
    await runtime.aclose()


async def test_overflow_compacts_and_retries_to_completion(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    await two_turns(runtime, llm_server, 50)
    llm_server.enqueue(
        http_error(400, OPENAI_OVERFLOW), text_reply("SUMMARY-OVERFLOW"), text_reply("answer")
    )
    result = await runtime.run_turn("PROMPT-C")
    assert result.stop_reason == "completed" and result.text == "answer"
    bodies = llm_server.chat_requests()
    assert len(bodies) == 5
    assert "tools" not in bodies[3] and "SUMMARY-OVERFLOW" in texts(bodies[4])
    assert "PROMPT-A" not in texts(bodies[4]) and "PROMPT-C" in texts(bodies[4])
    (event,) = rec.of(ev.ContextCompacted)
    assert event.reason == "overflow"
    await runtime.aclose()


async def test_overflow_that_compaction_cannot_fix_stops_with_what_to_do(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    await two_turns(runtime, llm_server, 50)
    anthropic_style = in_stream_error("prompt is too long: 210000 tokens > 200000 maximum", 400)
    llm_server.enqueue(http_error(400, OPENAI_OVERFLOW), text_reply("S"), anthropic_style)
    result = await runtime.run_turn("PROMPT-C")
    assert result.stop_reason == "error"
    assert result.error.code == "context_overflow"
    assert "still did not fit" in result.error.message and "/new" in result.error.message
    assert len(llm_server.chat_requests()) == 5  # no loop: one compaction, one retry
    (finished,) = [e for e in rec.of(ev.TurnFinished) if e.stop_reason == "error"]
    assert finished.error["code"] == "context_overflow"
    await runtime.aclose()


async def test_overflow_on_the_first_message_cannot_compact(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    body = {"error": {"code": 400, "message": "the request exceeds the available context size"}}
    llm_server.enqueue(http_error(400, body))
    result = await runtime.run_turn("PROMPT-A")
    assert result.error.code == "context_overflow"
    assert "compacting the conversation was not possible" in result.error.message
    assert len(llm_server.chat_requests()) == 1
    await runtime.aclose()


async def test_a_fresh_oversized_tool_result_is_cut_and_kept_for_recall(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    # Over the compaction threshold too, but the older part (the prompt) is too small to be
    # worth a summary: the window cuts the result instead.
    runtime, rec, unit = await sized(tmp_path, llm_server, 1.5)
    big = runtime.options.cwd / "big.txt"
    big.write_text("".join(f"line {k} " + "z" * 60 + "\n" for k in range(400)))
    read = tool_call("read", {"path": "big.txt", "limit": 400})
    llm_server.enqueue(text_reply(tool_calls=[read]), text_reply("read it"))
    result = await runtime.run_turn("read big.txt")
    assert result.stop_reason == "completed"

    stored = next(m for m in runtime.conversations.messages if m["role"] == "tool")
    assert len(stored["content"]) > unit // 2  # the stored result is whole
    key = f"tool-output/{read.id}"
    assert stored["recall_key"] == key
    note = runtime.store.notes.get(runtime.conversations.conversation_id, scratchpad_note_id(key))
    assert note is not None and note.content == stored["content"]

    second = llm_server.chat_requests()[1]
    (sent,) = [m for m in second["messages"] if m["role"] == "tool"]  # the newest round stays
    assert len(sent["content"]) < len(stored["content"])
    assert sent["content"].startswith(stored["content"][:100])
    assert sent["content"].endswith(f'the whole output: recall(key="{key}")]')
    assert PARTIAL_PREFIX in second["messages"][-1]["content"]
    assert not rec.of(ev.ContextCompacted) and len(llm_server.chat_requests()) == 2
    await runtime.aclose()


async def test_todo_pinned_notes_and_index_come_back_after_compaction(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _rec = open_runtime(tmp_path, llm_server.base_url)
    (runtime.options.cwd / "INDEX.md").write_text("INDEX-MARKER: run make test\n")
    runtime.store.project_memory.put(runtime.project_id, "pinned/style", "PINNED-MARKER tabs")
    runtime.store.project_memory.put(runtime.project_id, "other", "UNPINNED-MARKER")
    await two_turns(runtime, llm_server, 50)
    todo = tool_call("todo", {"items": [{"content": "TODO-MARKER", "status": "in_progress"}]})
    llm_server.enqueue(
        text_reply(tool_calls=[todo]),
        http_error(400, OPENAI_OVERFLOW),
        text_reply("SUMMARY-R"),
        text_reply("done"),
    )
    result = await runtime.run_turn("PROMPT-C")
    assert result.stop_reason == "completed", result.error
    retry = llm_server.chat_requests()[-1]
    summary = retry["messages"][1]["content"]
    assert summary.startswith(SUMMARY_PREFIX) and "SUMMARY-R" in summary
    assert "TODO-MARKER" in summary and "PINNED-MARKER" in summary
    assert "UNPINNED-MARKER" not in texts(retry)
    assert "INDEX-MARKER" in retry["messages"][0]["content"]  # the system prompt holds it
    await runtime.aclose()

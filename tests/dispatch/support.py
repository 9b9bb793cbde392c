"""Helpers for the dispatch end-to-end tests: scripted calls and transcript lookups."""

from __future__ import annotations

import json
from typing import Any

from smith_tui.engine import events as ev
from smith_tui.engine.runtime import Runtime
from tests.support.llm_server import ScriptedLLMServer, ToolCall, tool_call
from tests.support.runtime import Recorder

CONTEXT = {
    "user_request_summary": "The user wants the README to mention the test command.",
    "role_instructions": "Keep the change small.",
}
USAGE = {"prompt_tokens": 100, "completion_tokens": 20}
PARENT_USAGE = {"prompt_tokens": 7, "completion_tokens": 1}


def dispatch(target: str, task: str, **extra: Any) -> ToolCall:
    """A scripted ``dispatch`` call."""
    return tool_call("dispatch", {"target_role": target, "task": task, "context": CONTEXT, **extra})


def report(**fields: Any) -> ToolCall:
    """A scripted ``report`` call."""
    return tool_call("report", fields)


def child_bodies(server: ScriptedLLMServer) -> list[dict[str, Any]]:
    """Chat request bodies sent by child turns (their first user message is the task)."""
    return [b for b in server.chat_requests() if first_user(b).startswith("# Task")]


def parent_bodies(server: ScriptedLLMServer) -> list[dict[str, Any]]:
    """Chat request bodies sent by the top-level turn."""
    return [b for b in server.chat_requests() if not first_user(b).startswith("# Task")]


def first_user(body: dict[str, Any]) -> str:
    """The content of the first user message of a request body."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def task_of(body: dict[str, Any]) -> str:
    """The task line of a child request body."""
    return first_user(body).split("\n", 2)[1]


def child_requests(server: ScriptedLLMServer) -> list[Any]:
    """Recorded chat requests of child turns (with ``received_at``), in arrival order."""
    return [
        r
        for r in server.requests
        if r.method == "POST"
        and isinstance(r.json, dict)
        and first_user(r.json).startswith("# Task")
    ]


def stored(runtime: Runtime, conversation_id: str | None = None) -> list[Any]:
    """The stored messages of a conversation (the active one by default)."""
    return runtime.store.conversations.list_messages(
        conversation_id or runtime.conversations.conversation_id
    )


def tool_messages(runtime: Runtime, conversation_id: str | None = None) -> list[Any]:
    """The stored tool-result messages of a conversation."""
    return [m for m in stored(runtime, conversation_id) if m.role == "tool"]


def results(runtime: Runtime) -> list[dict[str, Any]]:
    """The dispatch results the parent received, in transcript order."""
    return [json.loads(m.content) for m in tool_messages(runtime) if m.name == "dispatch"]


def child_conversation(rec: Recorder, job_id: str) -> str:
    """The conversation id of a child turn, from its TurnStarted event."""
    return next(e.conversation_id for e in rec.of(ev.TurnStarted) if e.job_id == job_id)


def assert_transcript_valid(messages: list[Any]) -> None:
    """Every tool call has exactly one result, right after its assistant message."""
    open_ids: list[str] = []
    for message in messages:
        if message.role == "tool":
            assert message.tool_call_id in open_ids, f"result without a call: {message}"
            open_ids.remove(message.tool_call_id)
            continue
        assert not open_ids, f"calls without results: {open_ids}"
        if message.role == "assistant" and message.tool_calls:
            open_ids = [c["id"] for c in message.tool_calls]
    assert not open_ids, f"calls without results: {open_ids}"

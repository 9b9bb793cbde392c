"""MCP servers through real turns: real server packages, the scripted LLM server, a runtime."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine.runtime import MCP_NOTICE_COMMAND
from tests.mcp.support import EXITS, HANGS, git_server, script_server, time_server
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import Recorder, open_runtime


def _notices(rec: Recorder) -> list[ev.CommandOutput]:
    return [e for e in rec.of(ev.CommandOutput) if e.command == MCP_NOTICE_COMMAND]


def _tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def _tool_message(request: dict, call_id: str) -> dict:
    [message] = [m for m in request["messages"] if m.get("tool_call_id") == call_id]
    return message


async def test_a_turn_calls_the_time_servers_tool_and_the_result_reaches_the_model(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    call = tool_call("mcp__time__get_current_time", {"timezone": "Europe/Paris"})
    llm_server.enqueue(text_reply(tool_calls=[call]), text_reply("it is late"))
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"time": time_server()}}
    )
    try:
        result = await runtime.run_turn("what time is it in Paris?")
    finally:
        await runtime.aclose()

    assert result.stop_reason == "completed"
    first, second = llm_server.chat_requests()
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(_tool_names(first))
    [offered] = [t for t in first["tools"] if t["function"]["name"] == call.name]
    assert offered["function"]["parameters"]["required"] == ["timezone"]
    assert offered["function"]["description"].startswith("[MCP server time]")
    answer = json.loads(_tool_message(second, call.id)["content"])
    assert answer["timezone"] == "Europe/Paris"
    assert answer["datetime"][-6:] in ("+01:00", "+02:00")
    [finished] = rec.of(ev.ToolCallFinished)
    assert finished.ok and finished.metadata["server"] == "time"
    assert _notices(rec) == []


async def test_bad_arguments_get_our_one_error_style_without_reaching_the_server(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    bad = tool_call("mcp__time__get_current_time", {"timezone": 5, "zone": "x"})
    llm_server.enqueue(text_reply(tool_calls=[bad]), text_reply("sorry"))
    runtime, _rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"time": time_server()}}
    )
    try:
        await runtime.run_turn("time?")
    finally:
        await runtime.aclose()
    content = _tool_message(llm_server.chat_requests()[1], bad.id)["content"]
    assert content == (
        "error: mcp__time__get_current_time: `timezone` must be a string, got 5."
    )

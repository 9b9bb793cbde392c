"""Calling MCP tools: timeouts, cancellation, a server dying mid-session, result shapes, env.

The server is tests/mcp/toy_server.py, a real MCP server built on the SDK, run over stdio.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine.runtime import MCP_NOTICE_COMMAND
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import Recorder, open_runtime

TOY = Path(__file__).with_name("toy_server.py")


def toy(**extra: Any) -> dict[str, Any]:
    """The toy server's config."""
    return {"command": sys.executable, "args": [str(TOY)], **extra}


def _notices(rec: Recorder) -> list[ev.CommandOutput]:
    return [e for e in rec.of(ev.CommandOutput) if e.command == MCP_NOTICE_COMMAND]


def _result(llm_server: ScriptedLLMServer, request: int, call_id: str) -> str:
    messages = llm_server.chat_requests()[request]["messages"]
    [message] = [m for m in messages if m.get("tool_call_id") == call_id]
    return message["content"]


async def test_a_call_past_timeout_s_is_an_error_result_and_the_server_stays(
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
) -> None:
    slow = tool_call("mcp__toy__slow", {"seconds": 60})
    picture = tool_call("mcp__toy__picture", {})
    llm_server.enqueue(
        text_reply(tool_calls=[slow]), text_reply(tool_calls=[picture]), text_reply("ok")
    )
    # timeout_s bounds the start-up too, and the toy server's start (importing the MCP
    # SDK: about 1 s of CPU) took 29 s on a loaded machine. So the server starts under a
    # wide bound, and its calls get 4 s once it is ready.
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"toy": toy(timeout_s=300)}}
    )
    try:
        runtime.start_mcp()
        await runtime.mcp.wait_started()
        server = runtime.mcp.get("toy")
        assert server is not None and server.status == "ready", server
        server.config = server.config.model_copy(update={"timeout_s": 4})
        result = await runtime.run_turn("go")
    finally:
        await runtime.aclose()
    assert result.stop_reason == "completed"
    assert _result(llm_server, 1, slow.id) == (
        "error: MCP server 'toy' did not answer slow within 4 s (mcp_servers.toy.timeout_s)"
    )
    shown = _result(llm_server, 2, picture.id)
    assert shown.startswith("here is the chart\n[image (image/png, 2 KiB) returned by the tool")
    assert "[resource: chart data <file:///reports/chart.csv> (text/csv)]" in shown
    assert "[resource: <memo://note>]\nembedded note text" in shown
    finished = rec.of(ev.ToolCallFinished)
    assert [f.ok for f in finished] == [False, True]
    assert finished[1].metadata["images"] == 1 and finished[1].metadata["resources"] == 2
    assert _notices(rec) == []


async def test_cancelling_the_turn_cancels_the_running_call(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    started = tmp_path / "started"
    slow = tool_call("mcp__toy__slow", {"seconds": 60})
    llm_server.enqueue(text_reply(tool_calls=[slow]))
    config = toy(env={"TOY_STARTED_FILE": str(started)}, timeout_s=120)
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"toy": config}}
    )
    try:
        turn = asyncio.create_task(runtime.run_turn("go"))
        # The server's start can take half a minute on a loaded machine (see above).
        for _ in range(6000):
            if started.exists():
                break
            await asyncio.sleep(0.02)
        assert started.exists(), "the slow tool never started"
        runtime.cancel_turn()
        result = await asyncio.wait_for(turn, 10)
        listing = await runtime.submit("/mcp")
    finally:
        await runtime.aclose()
    assert result.stop_reason == "cancelled"
    [finished] = rec.of(ev.ToolCallFinished)
    assert finished.cancelled
    assert "toy (stdio, for direct, worker, explorer): ready" in listing.text


async def test_a_server_that_dies_mid_session_is_reported_once_and_its_tools_go(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    die = tool_call("mcp__toy__die", {})
    llm_server.enqueue(text_reply(tool_calls=[die]), text_reply("it died"), text_reply("next"))
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"toy": toy()}}
    )
    try:
        first = await runtime.run_turn("die")
        server = runtime.mcp.get("toy")
        assert server is not None and server.task is not None
        await asyncio.wait_for(server.task, 10)
        second = await runtime.run_turn("still there?")
        listing = await runtime.submit("/mcp")
    finally:
        await runtime.aclose()
    assert first.stop_reason == second.stop_reason == "completed"
    assert _result(llm_server, 1, die.id).startswith("error: MCP server 'toy'")
    [notice] = _notices(rec)
    assert notice.text.startswith("MCP server toy stopped: its connection closed")
    assert "/mcp restart toy" in notice.text
    tools = [t["function"]["name"] for t in llm_server.chat_requests()[2].get("tools", [])]
    assert not [name for name in tools if name.startswith("mcp__")]
    assert "toy (stdio, for direct, worker, explorer): failed" in listing.text


async def test_the_server_environment_has_no_api_key_but_its_configured_env(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_API_KEY", "sk-secret-key-value-123")
    monkeypatch.setenv("SOME_USER_VARIABLE", "inherited")
    calls = [
        tool_call("mcp__toy__env", {"name": "LLM_API_KEY"}),
        tool_call("mcp__toy__env", {"name": "TOY_SETTING"}),
        tool_call("mcp__toy__env", {"name": "SOME_USER_VARIABLE"}),
    ]
    llm_server.enqueue(text_reply(tool_calls=calls), text_reply("ok"))
    config = toy(env={"TOY_SETTING": "configured"})
    runtime, _rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"toy": config}}
    )
    try:
        await runtime.run_turn("env")
    finally:
        await runtime.aclose()
    assert [_result(llm_server, 1, c.id) for c in calls] == ["<unset>", "configured", "inherited"]


async def test_mcp_lists_prompts_and_resources_too(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"toy": toy()}}
    )
    try:
        runtime.start_mcp()
        await runtime.mcp.wait_started()
        listing = await runtime.submit("/mcp")
    finally:
        await runtime.aclose()
    assert "toy (stdio, for direct, worker, explorer): ready, 4 tools" in listing.text
    assert "    prompt /mcp__toy__review PATH" in listing.text
    assert "    resource @toy:memo://readme" in listing.text

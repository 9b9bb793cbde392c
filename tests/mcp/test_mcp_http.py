"""The streamable-HTTP transport: a real MCP server (tests/mcp/http_server.py) on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from smith_tui.engine import events as ev
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import open_runtime

SERVER = Path(__file__).with_name("http_server.py")


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """The URL of the server, listening once this returns (stopped after the test)."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(16)
    port = listening.getsockname()[1]
    log = (tmp_path / "http_server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), str(listening.fileno())],
        stdout=log,
        stderr=subprocess.STDOUT,
        pass_fds=(listening.fileno(),),
    )
    listening.close()  # the server holds the port now
    try:
        # The port listens from the bind above: requests wait in its backlog until the
        # server starts accepting, so there is nothing to poll for.
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _tool_result(body: dict, call_id: str) -> str:
    [message] = [m for m in body["messages"] if m.get("tool_call_id") == call_id]
    return message["content"]


async def test_a_tool_call_over_streamable_http_with_headers_from_the_environment(
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
    http_server: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEB_MCP_TOKEN", "Bearer secret-from-env")
    config = {
        "url": http_server,
        "headers": {"X-Client": "smith-test"},
        "headers_env": {"Authorization": "WEB_MCP_TOKEN"},
    }
    calls = [
        tool_call("mcp__web__add", {"a": 2, "b": 40}),
        tool_call("mcp__web__header", {"name": "authorization"}),
        tool_call("mcp__web__header", {"name": "x-client"}),
    ]
    llm_server.enqueue(text_reply(tool_calls=calls), text_reply("done"))
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"web": config}}
    )
    try:
        result = await runtime.run_turn("add and check the headers")
        listing = await runtime.submit("/mcp")
    finally:
        await runtime.aclose()
    assert result.stop_reason == "completed"
    first, second = llm_server.chat_requests()
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"mcp__web__add", "mcp__web__header"} <= offered
    assert [_tool_result(second, c.id) for c in calls] == [
        "2 + 40 = 42",
        "Bearer secret-from-env",
        "smith-test",
    ]
    assert all(e.ok for e in rec.of(ev.ToolCallFinished))
    assert "web (http, for direct, worker, explorer): ready, 2 tools" in listing.text


async def test_an_unset_headers_env_variable_fails_the_start_with_its_name(
    tmp_path: Path, llm_server: ScriptedLLMServer, http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WEB_MCP_TOKEN", raising=False)
    config = {"url": http_server, "headers_env": {"Authorization": "WEB_MCP_TOKEN"}}
    runtime, _rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"web": config}}
    )
    try:
        runtime.start_mcp()
        await runtime.mcp.wait_started()
        server = runtime.mcp.get("web")
    finally:
        await runtime.aclose()
    assert server is not None and server.status == "failed"
    assert server.error == (
        "did not start: environment variable WEB_MCP_TOKEN (for Authorization) is not set"
    )

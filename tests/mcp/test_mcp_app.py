"""The app starts the MCP servers itself, after its first frame, and shows a failure once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
)
from tests.mcp.support import EXITS, script_server, time_server
from tests.support.pilot import wait_until


async def test_the_app_starts_servers_and_shows_a_failed_one_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server
) -> None:
    servers = {"broken": script_server(tmp_path, "broken", EXITS), "time": time_server()}
    config = {"mcp_servers": servers}
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as runtime:
        try:
            app = make_app(runtime)
            async with running(app) as pilot:
                # No turn and no command: the app itself started the servers.
                await wait_for_text(pilot, "MCP server broken did not start", within=30)
                time = runtime.mcp.get("time")
                assert time is not None
                await wait_until(pilot, lambda: time.status == "ready", "time ready", 30)
                await submit(pilot, "/mcp")
                text = await wait_for_text(pilot, "ready, 2 tools")
                assert "mcp__time__get_current_time" in text
                assert screen_text(app).count("MCP server broken did not start") == 1
        finally:
            await runtime.aclose()  # the MCP servers too

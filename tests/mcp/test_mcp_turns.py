"""MCP servers through real turns: real server packages, the scripted LLM server, a runtime."""

from __future__ import annotations

import json
from pathlib import Path

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
    assert content == ("error: mcp__time__get_current_time: `timezone` must be a string, got 5.")


async def test_the_git_server_reports_the_status_of_a_temporary_repository(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _rec = open_runtime(tmp_path, llm_server.base_url)
    repo = tmp_path / "repo"
    await runtime.aclose()
    (repo / "untracked-file.txt").write_text("new\n")
    call = tool_call("mcp__git__git_status", {"repo_path": str(repo)})
    llm_server.enqueue(text_reply(tool_calls=[call]), text_reply("one new file"))
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"git": git_server(repo)}}
    )
    try:
        result = await runtime.run_turn("git status please")
    finally:
        await runtime.aclose()
    assert result.stop_reason == "completed"
    content = _tool_message(llm_server.chat_requests()[1], call.id)["content"]
    assert "untracked-file.txt" in content
    assert rec.of(ev.ToolCallFinished)[0].ok


async def test_a_server_that_exits_at_once_is_reported_once_and_the_others_work(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    servers = {"broken": script_server(tmp_path, "broken", EXITS), "time": time_server()}
    call = tool_call("mcp__time__get_current_time", {"timezone": "UTC"})
    llm_server.enqueue(text_reply(tool_calls=[call]), text_reply("done"), text_reply("second turn"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url, config={"mcp_servers": servers})
    try:
        first = await runtime.run_turn("time?")
        second = await runtime.run_turn("again")
    finally:
        await runtime.aclose()

    assert first.stop_reason == second.stop_reason == "completed"
    [notice] = _notices(rec)
    assert notice.data == {"server": "broken", "status": "failed"}
    assert notice.text.startswith("MCP server broken did not start")
    assert "boom: this server exits at once" in notice.text  # its stderr says why
    assert "/mcp restart broken" in notice.text
    names = _tool_names(llm_server.chat_requests()[0])
    assert "mcp__time__get_current_time" in names
    assert not [n for n in names if n.startswith("mcp__broken")]
    assert rec.of(ev.ToolCallFinished)[0].ok


async def test_a_server_that_hangs_past_its_timeout_is_given_up_and_reported(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    servers = {"stuck": script_server(tmp_path, "stuck", HANGS, timeout_s=1), "time": time_server()}
    llm_server.enqueue(text_reply("hello"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url, config={"mcp_servers": servers})
    try:
        result = await runtime.run_turn("hi")
        listing = await runtime.submit("/mcp")
    finally:
        await runtime.aclose()
    assert result.stop_reason == "completed"
    [notice] = _notices(rec)
    assert "MCP server stuck did not start: no answer within 1 s" in notice.text
    assert "mcp_servers.stuck.timeout_s" in notice.text
    assert "stuck (stdio, for direct, worker, explorer): failed" in listing.text
    assert "time (stdio, for direct, worker, explorer): ready, 2 tools" in listing.text
    names = _tool_names(llm_server.chat_requests()[0])
    assert "mcp__time__convert_time" in names


async def test_mcp_lists_servers_and_tools_and_restart_brings_a_server_back(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    flag = tmp_path / "fixed"
    # Fails until the flag file exists, then runs the real time server.
    body = f"""
        import os, runpy, sys
        if not os.path.exists({str(flag)!r}):
            sys.exit("not fixed yet")
        sys.argv = ["mcp-server-time"]
        runpy.run_module("mcp_server_time", run_name="__main__")
    """
    servers = {
        "flaky": script_server(tmp_path, "flaky", body),
        "off": time_server(enabled=False),
    }
    runtime, rec = open_runtime(tmp_path, llm_server.base_url, config={"mcp_servers": servers})
    try:
        runtime.start_mcp()
        await runtime.mcp.wait_started()
        before = await runtime.submit("/mcp")
        bad = await runtime.submit("/mcp restart nope")
        flag.write_text("")
        restarted = await runtime.submit("/mcp restart flaky")
        after = await runtime.submit("/mcp")
        registry = runtime.services.tool
        offered = [spec.name for spec in registry.list("direct")]
    finally:
        await runtime.aclose()

    assert "flaky (stdio, for direct, worker, explorer): failed" in before.text
    assert "not fixed yet" in before.text
    assert "off (stdio, for direct, worker, explorer): disabled" in before.text
    assert not bad.ok and "no MCP server named 'nope'" in bad.text and "flaky, off" in bad.text
    assert restarted.ok and "ready, 2 tools" in restarted.text
    assert "    mcp__flaky__get_current_time" in after.text
    assert after.data["servers"][0]["tools"] == [
        "mcp__flaky__get_current_time",
        "mcp__flaky__convert_time",
    ]
    assert "mcp__flaky__convert_time" in offered
    assert len(_notices(rec)) == 1  # the first failure; the restart succeeded


async def test_roles_gate_the_tools_orchestrator_only_when_configured(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    servers = {"time": time_server(), "boss": time_server(roles=["orchestrator"])}
    runtime, _rec = open_runtime(tmp_path, llm_server.base_url, config={"mcp_servers": servers})
    try:
        runtime.start_mcp()
        await runtime.mcp.wait_started()
        registry = runtime.services.tool

        def offered(role: str) -> set[str]:
            return {
                t["function"]["name"]
                for t in registry.llm_specs(role)
                if t["function"]["name"].startswith("mcp__")
            }

        by_role = {role: offered(role) for role in ("direct", "orchestrator", "worker", "explorer")}
        denied = await _call(runtime, "mcp__time__get_current_time", "orchestrator")
    finally:
        await runtime.aclose()
    time_tools = {"mcp__time__get_current_time", "mcp__time__convert_time"}
    boss_tools = {"mcp__boss__get_current_time", "mcp__boss__convert_time"}
    assert by_role["direct"] == by_role["worker"] == by_role["explorer"] == time_tools
    assert by_role["orchestrator"] == boss_tools
    assert not denied.ok and "not available to the orchestrator role" in denied.content


async def _call(runtime, name: str, role: str):  # type: ignore[no-untyped-def]
    from smith_tui.cancel import CancelToken
    from smith_tui.tools.executor import execute_tool_call
    from smith_tui.tools.spec import ToolContext

    ctx = ToolContext(
        role=role, turn_id="t", cwd=runtime.options.cwd, cancel=CancelToken.new_root()
    )
    return await execute_tool_call(runtime.services.tool, "c1", name, {"timezone": "UTC"}, ctx)

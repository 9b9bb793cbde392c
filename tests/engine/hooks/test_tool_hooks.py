"""PreToolUse, PostToolUse and PermissionRequest hooks around real tool calls.

A real runtime over the scripted server; every hook is a real script in a tmp folder
(README, Hooks: Claude Code's stdin/stdout contract).
"""

from __future__ import annotations

from pathlib import Path

from smith_tui.engine import events as ev
from smith_tui.engine.permission_gate import PermissionReply, PermissionRequest
from tests.engine.hooks.support import hooks_runtime, logged, python_hook, tool_results
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call


def bash(command: str) -> object:
    return tool_call("bash", {"command": command}, id="call_1")


async def test_exit_2_blocks_the_call_and_the_model_reads_stderr(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    marker = tmp_path / "repo" / "ran"
    hook = python_hook(
        tmp_path / "hooks",
        "guard",
        """
        log(data)
        print("no bash today: " + data["tool_input"]["command"], file=sys.stderr)
        sys.exit(2)
        """,
    )
    llm_server.enqueue(
        text_reply(tool_calls=[bash(f"touch {marker}")]), text_reply("ok, I will not")
    )
    runtime, rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"PreToolUse": [{"matcher": "Bash", "command": hook}]},
        config={"permissions": {"mode": "yolo"}},
    )
    result = await runtime.run_turn("make the marker")
    assert result.stop_reason == "completed"
    assert not marker.exists()
    (second,) = llm_server.chat_requests()[1:]
    (content,) = tool_results(second)
    assert "blocked by a PreToolUse hook: no bash today: touch" in content
    # The stdin of Claude Code's contract.
    (seen,) = logged(tmp_path / "hooks", "guard")
    assert seen["hook_event_name"] == "PreToolUse"
    assert seen["tool_name"] == "Bash" and seen["tool_input"] == {"command": f"touch {marker}"}
    assert seen["smith_tool_name"] == "bash"  # Claude Code's name, and Smith's beside it
    assert seen["tool_use_id"] == "call_1" and seen["session_id"] == runtime.session_id
    assert seen["cwd"] == str(runtime.scope.cwd) and seen["smith_role"] == "direct"
    assert "agent_id" not in seen
    (run,) = rec.of(ev.HookRun)
    assert (run.event, run.outcome, run.exit_code, run.call_id) == (
        "PreToolUse",
        "denied",
        2,
        "call_1",
    )
    await runtime.aclose()


async def test_a_matcher_that_does_not_fit_leaves_the_call_alone(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    marker = tmp_path / "repo" / "ran"
    hook = python_hook(tmp_path / "hooks", "guard", "log(data); sys.exit(2)")
    llm_server.enqueue(text_reply(tool_calls=[bash(f"touch {marker}")]), text_reply("done"))
    runtime, rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"PreToolUse": [{"matcher": "edit|write", "command": hook}]},
        config={"permissions": {"mode": "yolo"}},
    )
    await runtime.run_turn("go")
    assert marker.exists()
    assert logged(tmp_path / "hooks", "guard") == [] and rec.of(ev.HookRun) == []
    await runtime.aclose()


CLAUDE_STYLE_GUARD = """
# Written for Claude Code's documented contract: JSON in, hookSpecificOutput out.
command = data.get("tool_input", {}).get("command", "")
if data.get("hook_event_name") == "PreToolUse" and "rm -rf" in command:
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "Destructive command blocked by policy",
        }
    }))
sys.exit(0)
"""


async def test_a_script_written_for_claude_code_works_unchanged(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    victim = tmp_path / "repo" / "victim"
    victim.mkdir(parents=True)
    (victim / "keep").write_text("x")
    hook = python_hook(tmp_path / "hooks", "claude_guard", CLAUDE_STYLE_GUARD)
    llm_server.enqueue(
        text_reply(tool_calls=[bash(f"rm -rf {victim}")]),
        text_reply(tool_calls=[tool_call("bash", {"command": "echo fine"}, id="call_2")]),
        text_reply("done"),
    )
    # Claude Code's nested settings form, as copied from a .claude/settings.json.
    hooks = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": hook, "timeout": 30}]}
        ]
    }
    runtime, rec = hooks_runtime(
        tmp_path, llm_server.base_url, hooks, config={"permissions": {"mode": "yolo"}}
    )
    await runtime.run_turn("clean up")
    assert (victim / "keep").exists()
    bodies = llm_server.chat_requests()
    assert "Destructive command blocked by policy" in tool_results(bodies[1])[0]
    assert "fine" in tool_results(bodies[2])[1]
    assert [r.outcome for r in rec.of(ev.HookRun)] == ["denied", "ok"]
    await runtime.aclose()


async def test_allow_skips_the_question_but_never_a_deny_rule(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    allow = python_hook(
        tmp_path / "hooks",
        "allow",
        """
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                 "permissionDecision": "allow"}}))
        """,
    )
    post = python_hook(tmp_path / "hooks", "post", "log(data)")
    asked: list[PermissionRequest] = []

    async def ask(request: PermissionRequest) -> PermissionReply:
        asked.append(request)
        return PermissionReply("deny")

    llm_server.enqueue(
        text_reply(tool_calls=[bash("echo allowed-by-hook")]),
        text_reply(tool_calls=[tool_call("bash", {"command": "rm -f nothing"}, id="c2")]),
        text_reply("done"),
    )
    runtime, _rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"PreToolUse": [{"command": allow}], "PostToolUse": [{"command": post}]},
        config={"permissions": {"mode": "ask", "deny": ["bash(rm *)"]}},
    )
    runtime.ask_permission = ask
    await runtime.run_turn("go")
    bodies = llm_server.chat_requests()
    assert "allowed-by-hook" in tool_results(bodies[1])[0]
    assert "permission denied" in tool_results(bodies[2])[1]
    assert asked == []  # allow skipped the question; the deny rule refused without one
    # PostToolUse heard the call that ran, not the refused one.
    assert [s["tool_input"]["command"] for s in logged(tmp_path / "hooks", "post")] == [
        "echo allowed-by-hook"
    ]
    await runtime.aclose()


async def test_ask_asks_even_where_everything_is_allowed(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    ask_hook = python_hook(
        tmp_path / "hooks",
        "ask",
        """
        print(json.dumps({"hookSpecificOutput": {"permissionDecision": "ask",
                                                 "permissionDecisionReason": "check it"}}))
        """,
    )
    asked: list[PermissionRequest] = []

    async def ask(request: PermissionRequest) -> PermissionReply:
        asked.append(request)
        return PermissionReply("deny", "not now")

    llm_server.enqueue(text_reply(tool_calls=[bash("echo hi")]), text_reply("done"))
    runtime, _rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"PreToolUse": [{"command": ask_hook}]},
        config={"permissions": {"mode": "yolo"}},
    )
    runtime.ask_permission = ask
    await runtime.run_turn("go")
    (request,) = asked
    assert request.tool == "bash" and "PreToolUse hook" in request.reason
    assert "not now" in tool_results(llm_server.chat_requests()[1])[0]
    await runtime.aclose()


async def test_post_tool_use_block_reason_reaches_the_model_with_the_result(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(
        tmp_path / "hooks",
        "post",
        """
        log(data)
        print(json.dumps({"decision": "block", "reason": "run the linter next"}))
        """,
    )
    llm_server.enqueue(text_reply(tool_calls=[bash("echo out-put")]), text_reply("done"))
    runtime, rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"PostToolUse": [{"matcher": "*", "command": hook}]},
        config={"permissions": {"mode": "yolo"}},
    )
    await runtime.run_turn("go")
    (content,) = tool_results(llm_server.chat_requests()[1])
    assert "out-put" in content and "[PostToolUse hook] run the linter next" in content
    (seen,) = logged(tmp_path / "hooks", "post")
    assert seen["hook_event_name"] == "PostToolUse" and seen["tool_name"] == "Bash"
    assert "out-put" in seen["tool_response"]["content"]
    assert seen["tool_response"]["success"] is True
    assert [r.outcome for r in rec.of(ev.HookRun)] == ["blocked"]
    await runtime.aclose()


async def test_permission_request_answers_for_the_user_where_nobody_can_be_asked(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(
        tmp_path / "hooks",
        "perm",
        """
        log(data)
        behavior = "allow" if "echo" in data["tool_input"]["command"] else "deny"
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": behavior, "message": "only echo, please"}}}))
        """,
    )
    llm_server.enqueue(
        text_reply(
            tool_calls=[
                bash("echo granted"),
                tool_call("bash", {"command": "touch nope"}, id="c2"),
            ]
        ),
        text_reply("done"),
    )
    # ask mode, headless (no ask port): without the hook both calls would be refused.
    runtime, rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"PermissionRequest": [{"matcher": "bash", "command": hook}]},
        config={"permissions": {"mode": "ask"}},
    )
    await runtime.run_turn("go")
    first, second = tool_results(llm_server.chat_requests()[1])
    assert "granted" in first
    assert "a PermissionRequest hook denied it: only echo, please" in second
    assert not (runtime.scope.cwd / "nope").exists()
    assert [s["tool_name"] for s in logged(tmp_path / "hooks", "perm")] == ["Bash", "Bash"]
    assert sorted(r.outcome for r in rec.of(ev.HookRun)) == ["allowed", "denied"]
    await runtime.aclose()


async def test_notification_hook_hears_of_a_permission_question(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(tmp_path / "hooks", "note", "log(data)")

    async def ask(request: PermissionRequest) -> PermissionReply:
        return PermissionReply("once")

    llm_server.enqueue(text_reply(tool_calls=[bash("echo hi")]), text_reply("done"))
    runtime, _rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"Notification": [{"command": hook}]},
        config={"permissions": {"mode": "ask"}},
    )
    runtime.ask_permission = ask
    await runtime.run_turn("go")
    await runtime.aclose()  # SessionEnd waits for the Notification hooks still running
    (seen,) = logged(tmp_path / "hooks", "note")
    assert seen["hook_event_name"] == "Notification"
    assert seen["notification_type"] == "permission_prompt" and "bash" in seen["message"]


async def test_continue_false_ends_the_turn_and_the_call_does_not_run(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    marker = tmp_path / "repo" / "ran"
    hook = python_hook(
        tmp_path / "hooks",
        "halt",
        'print(json.dumps({"continue": False, "stopReason": "the build is frozen"}))',
    )
    llm_server.enqueue(text_reply(tool_calls=[bash(f"touch {marker}")]), text_reply("never"))
    runtime, rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"PreToolUse": [{"command": hook}]},
        config={"permissions": {"mode": "yolo"}},
    )
    result = await runtime.run_turn("go")
    assert result.stop_reason == "cancelled"
    assert not marker.exists()
    assert len(llm_server.chat_requests()) == 1
    assert [r.outcome for r in rec.of(ev.HookRun)] == ["stopped"]
    await runtime.aclose()


async def test_notification_hook_hears_of_a_long_turn_ending(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(tmp_path / "hooks", "note", "log(data)")
    llm_server.enqueue(text_reply("slow", delay_s=1.0))
    runtime, _rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"Notification": [{"command": hook}]},
        config={"notifications": {"after_s": 0.5}},
    )
    await runtime.run_turn("slow one")
    await runtime.aclose()  # SessionEnd waits for the Notification hooks still running
    seen = logged(tmp_path / "hooks", "note")
    assert [s["notification_type"] for s in seen] == ["idle_prompt"]
    assert seen[0]["message"] == "Smith finished (completed)"


def test_claude_code_names_and_keys_are_added_never_replacing_smiths() -> None:
    from smith_tui.engine.hooks.claude_names import claude_input, claude_name

    assert claude_name("edit") == "Edit" and claude_name("note") == "note"
    assert claude_input("write", {"path": "a/b.py", "content": "x"}, "/repo") == {
        "file_path": "/repo/a/b.py",
        "path": "a/b.py",
        "content": "x",
    }
    assert claude_input("read", {"path": "/abs/f"}, "/repo")["file_path"] == "/abs/f"
    assert claude_input("bash", {"command": "ls", "timeout_s": 2.5}, "/r")["timeout"] == 2500
    dispatch = claude_input("dispatch", {"task": "t", "target_role": "worker"}, "/r")
    assert (dispatch["prompt"], dispatch["subagent_type"]) == ("t", "worker")
    # A key Smith has is never overwritten by an alias.
    assert claude_input("read", {"path": "p", "file_path": "mine"}, "/r")["file_path"] == "mine"

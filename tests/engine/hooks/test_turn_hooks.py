"""Hooks at a turn's and a session's ends, and around dispatched sub-agents.

UserPromptSubmit (context, a blocked prompt), SessionStart (once, its context in the
first turn), Stop (keeping the model going), SubagentStart/SubagentStop and a worker's
PreToolUse with its role, PreCompact and SessionEnd — real scripts, a real runtime.
"""

from __future__ import annotations

from pathlib import Path

from smith_tui.engine import events as ev
from smith_tui.engine.compaction import CompactionError
from tests.dispatch.support import child_bodies, dispatch, report
from tests.engine.hooks.support import (
    hooks_runtime,
    logged,
    python_hook,
    tool_results,
    user_texts,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call


async def test_user_prompt_submit_stdout_is_added_context(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(tmp_path / "hooks", "ctx", 'log(data); print("The sprint ends Friday.")')
    llm_server.enqueue(text_reply("noted"))
    runtime, rec = hooks_runtime(
        tmp_path, llm_server.base_url, {"UserPromptSubmit": [{"command": hook}]}
    )
    result = await runtime.run_turn("plan my week")
    assert result.stop_reason == "completed"
    (body,) = llm_server.chat_requests()
    prompt = next(t for t in user_texts(body) if "plan my week" in t)
    assert "The sprint ends Friday." in prompt
    (seen,) = logged(tmp_path / "hooks", "ctx")
    assert seen["prompt"] == "plan my week" and seen["hook_event_name"] == "UserPromptSubmit"
    assert [r.outcome for r in rec.of(ev.HookRun)] == ["ok"]
    await runtime.aclose()


async def test_user_prompt_submit_exit_2_keeps_the_prompt_from_being_sent(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(
        tmp_path / "hooks",
        "gate",
        """
        if "password" in data["prompt"]:
            print("prompts may not hold passwords", file=sys.stderr)
            sys.exit(2)
        """,
    )
    llm_server.enqueue(text_reply("never"))
    runtime, _rec = hooks_runtime(
        tmp_path, llm_server.base_url, {"UserPromptSubmit": [{"command": hook}]}
    )
    result = await runtime.run_turn("my password is hunter2")
    assert result.stop_reason == "error" and result.error is not None
    assert result.error.code == "hook_blocked"
    assert "prompts may not hold passwords" in result.error.message
    assert llm_server.chat_requests() == []
    assert not any("hunter2" in str(m.get("content")) for m in runtime.conversations.messages)
    await runtime.aclose()


async def test_session_start_runs_once_and_its_context_reaches_the_first_turn(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(tmp_path / "hooks", "start", 'log(data); print("Branch: feature/x")')
    llm_server.enqueue(text_reply("one"), text_reply("two"))
    runtime, _rec = hooks_runtime(
        tmp_path, llm_server.base_url, {"SessionStart": [{"command": hook}]}
    )
    await runtime.run_turn("first")
    await runtime.run_turn("second")
    first, second = llm_server.chat_requests()
    assert any("Branch: feature/x" in t and "first" in t for t in user_texts(first))
    assert not any("Branch" in t and "second" in t for t in user_texts(second))
    (seen,) = logged(tmp_path / "hooks", "start")
    assert seen["hook_event_name"] == "SessionStart" and seen["source"] == "startup"
    await runtime.aclose()


async def test_stop_hook_that_blocks_keeps_the_model_going_once(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(
        tmp_path / "hooks",
        "stop",
        """
        log(data)
        if not data["stop_hook_active"]:
            print(json.dumps({"decision": "block", "reason": "the tests were not run"}))
        """,
    )
    llm_server.enqueue(text_reply("all done"), text_reply("ran the tests, done"))
    runtime, rec = hooks_runtime(tmp_path, llm_server.base_url, {"Stop": [{"command": hook}]})
    result = await runtime.run_turn("fix it")
    assert result.stop_reason == "completed" and result.text == "ran the tests, done"
    _first, second = llm_server.chat_requests()
    assert any("[Stop hook] the tests were not run" in t for t in user_texts(second))
    seen = logged(tmp_path / "hooks", "stop")
    assert [s["stop_hook_active"] for s in seen] == [False, True]
    assert seen[0]["last_assistant_message"] == "all done"
    assert [r.outcome for r in rec.of(ev.HookRun)] == ["blocked", "ok"]
    await runtime.aclose()


async def test_a_workers_calls_go_through_the_hooks_with_its_role(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    folder = tmp_path / "hooks"
    pre = python_hook(
        folder,
        "pre",
        """
        log(data)
        if data.get("agent_type") == "worker" and data["tool_name"] == "Bash":
            print("workers may not run bash", file=sys.stderr)
            sys.exit(2)
        """,
    )
    start = python_hook(folder, "sub_start", 'log(data); print("worker note: be brief")')
    stop = python_hook(folder, "sub_stop", "log(data)")
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "list the files")]),
        text_reply(tool_calls=[tool_call("bash", {"command": "ls"})]),
        text_reply(tool_calls=[report(status="ok", summary="could not list")]),
        text_reply("the worker could not"),
    )
    runtime, rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {
            "PreToolUse": [{"command": pre}],
            "SubagentStart": [{"matcher": "worker", "command": start}],
            "SubagentStop": [{"command": stop}],
        },
        config={"active_role": "orchestrator", "permissions": {"mode": "yolo"}},
    )
    result = await runtime.run_turn("have a worker list the files")
    assert result.stop_reason == "completed"
    job_id = next(e.job_id for e in rec.of(ev.DispatchStarted))
    calls = logged(folder, "pre")
    by_role = {(c["smith_role"], c["smith_tool_name"]) for c in calls}
    assert ("orchestrator", "dispatch") in by_role and ("worker", "bash") in by_role
    assert {c["tool_name"] for c in calls} == {"Task", "Bash", "report"}  # Claude Code's names
    worker_bash = next(c for c in calls if c["tool_name"] == "Bash")
    assert worker_bash["agent_type"] == "worker" and worker_bash["agent_id"] == job_id
    # The worker's bash was refused with the hook's reason.
    child = child_bodies(llm_server)
    assert "workers may not run bash" in tool_results(child[1])[0]
    # SubagentStart's context went to the worker with its task; SubagentStop heard its end.
    assert any("worker note: be brief" in t for t in user_texts(child[0]))
    (started,) = logged(folder, "sub_start")
    assert started["agent_type"] == "worker" and started["agent_id"] == job_id
    (stopped,) = logged(folder, "sub_stop")
    assert stopped["hook_event_name"] == "SubagentStop" and stopped["agent_id"] == job_id
    worker_runs = [r for r in rec.of(ev.HookRun) if r.job_id == job_id]
    assert {r.event for r in worker_runs} == {"SubagentStart", "PreToolUse", "SubagentStop"}
    assert all(r.role == "worker" for r in worker_runs)
    await runtime.aclose()


async def test_pre_compact_sees_the_trigger_and_exit_2_blocks_compaction(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(
        tmp_path / "hooks",
        "compact",
        """
        log(data)
        if data["custom_instructions"] == "blocked":
            print("not while I review", file=sys.stderr)
            sys.exit(2)
        """,
    )
    llm_server.enqueue(*(text_reply(f"answer {n} " + "words " * 200) for n in range(4)))
    runtime, _rec = hooks_runtime(
        tmp_path, llm_server.base_url, {"PreCompact": [{"command": hook}]}
    )
    for n in range(4):
        await runtime.run_turn(f"question {n} " + "words " * 200)
    sent = len(llm_server.chat_requests())
    try:
        await runtime.compact("blocked")
    except CompactionError as exc:
        assert "a PreCompact hook blocked compaction: not while I review" in str(exc)
    else:
        raise AssertionError("compaction was not blocked")
    assert len(llm_server.chat_requests()) == sent  # no summary request went out
    (seen,) = logged(tmp_path / "hooks", "compact")
    assert seen["trigger"] == "manual" and seen["hook_event_name"] == "PreCompact"
    await runtime.aclose()


async def test_session_end_runs_when_the_runtime_closes(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(tmp_path / "hooks", "end", "log(data)")
    llm_server.enqueue(text_reply("hi"))
    runtime, _rec = hooks_runtime(
        tmp_path, llm_server.base_url, {"SessionEnd": [{"command": hook}]}
    )
    await runtime.run_turn("hello")
    assert logged(tmp_path / "hooks", "end") == []
    await runtime.aclose()
    (seen,) = logged(tmp_path / "hooks", "end")
    assert seen["hook_event_name"] == "SessionEnd" and seen["reason"] == "closed"
    assert seen["session_id"] == runtime.session_id

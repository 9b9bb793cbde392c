"""A hook never hangs or kills a turn: timeout, output caps, failures, cancellation.

Real processes: the hook's whole process group is killed when it runs too long or its
turn is cancelled, output past 1 MB per stream is drained and dropped, a failing hook is
a notice and the turn goes on, and the API key variables are not in its environment.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.engine import events as ev
from smith_tui.engine.hooks.hook_runner import OUTPUT_CAP, run_hook_command
from tests.engine.hooks.support import hooks_runtime, logged, python_hook, tool_results
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call


def bash(command: str) -> object:
    return tool_call("bash", {"command": command})


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


async def wait_for(condition: Callable[[], object]) -> None:
    deadline = time.monotonic() + 10.0
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def test_a_hook_past_its_timeout_is_killed_with_its_children_and_the_call_runs(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    pids = tmp_path / "pids"
    hook = f"sleep 300 & echo $! > {pids}; sleep 300"
    llm_server.enqueue(text_reply(tool_calls=[bash("echo still-ran")]), text_reply("done"))
    runtime, rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"PreToolUse": [{"command": hook, "timeout_s": 0.5}]},
        config={"permissions": {"mode": "yolo"}},
    )
    started = time.monotonic()
    result = await runtime.run_turn("go")
    assert time.monotonic() - started < 10
    assert result.stop_reason == "completed"
    assert "still-ran" in tool_results(llm_server.chat_requests()[1])[0]
    (run,) = rec.of(ev.HookRun)
    assert run.outcome == "timeout" and "ran too long" in run.message
    background = int(pids.read_text())
    await wait_for(lambda: not alive(background))
    await runtime.aclose()


async def test_a_hook_printing_10_mb_keeps_1_mb_and_the_turn_goes_on(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(
        tmp_path / "hooks",
        "flood",
        """
        chunk = "x" * (1 << 20)
        for _ in range(10):
            sys.stdout.write(chunk)
            sys.stderr.write(chunk)
        sys.stdout.flush()
        """,
    )
    llm_server.enqueue(text_reply("fine"))
    runtime, rec = hooks_runtime(
        tmp_path, llm_server.base_url, {"UserPromptSubmit": [{"command": hook}]}
    )
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "completed"
    (run,) = rec.of(ev.HookRun)
    assert run.outcome == "ok" and "output over 1 MB was dropped" in run.message
    (body,) = llm_server.chat_requests()
    # The context kept is bounded (a few thousand characters), not 10 MB.
    assert len(str(body["messages"])) < 100_000
    await runtime.aclose()


async def test_the_runner_keeps_the_first_megabyte_of_each_stream(tmp_path: Path) -> None:
    command = python_hook(
        tmp_path,
        "flood",
        """
        for _ in range(10):
            sys.stdout.write("o" * (1 << 20))
            sys.stderr.write("e" * (1 << 20))
        """,
    )
    run = await run_hook_command(command, b"{}", cwd=tmp_path, timeout_s=30)
    assert run.exit_code == 0 and run.truncated
    assert len(run.stdout) == OUTPUT_CAP and set(run.stdout) == {"o"}
    assert len(run.stderr) == OUTPUT_CAP and set(run.stderr) == {"e"}


async def test_a_hook_that_exits_1_is_a_notice_and_the_turn_goes_on(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    hook = python_hook(
        tmp_path / "hooks", "broken", 'print("config missing", file=sys.stderr); sys.exit(1)'
    )
    llm_server.enqueue(text_reply(tool_calls=[bash("echo went-on")]), text_reply("done"))
    runtime, rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"PreToolUse": [{"command": hook}], "UserPromptSubmit": [{"command": hook}]},
        config={"permissions": {"mode": "yolo"}},
    )
    result = await runtime.run_turn("go")
    assert result.stop_reason == "completed"
    assert "went-on" in tool_results(llm_server.chat_requests()[1])[0]
    runs = rec.of(ev.HookRun)
    assert [(r.event, r.outcome, r.exit_code) for r in runs] == [
        ("UserPromptSubmit", "notice", 1),
        ("PreToolUse", "notice", 1),
    ]
    assert "exited 1: config missing" in runs[0].message
    await runtime.aclose()


async def test_cancelling_the_turn_kills_a_running_hook(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    pids = tmp_path / "pid"
    hook = f"echo $$ > {pids}; sleep 300"
    llm_server.enqueue(text_reply(tool_calls=[bash("echo never")]), text_reply("never"))
    runtime, rec = hooks_runtime(
        tmp_path,
        llm_server.base_url,
        {"PreToolUse": [{"command": hook}]},
        config={"permissions": {"mode": "yolo"}},
    )
    task = asyncio.ensure_future(runtime.run_turn("go"))
    await wait_for(lambda: pids.exists() and pids.read_text().strip())
    shell = int(pids.read_text())
    started = time.monotonic()
    assert runtime.cancel_turn("user pressed ctrl+c")
    result = await asyncio.wait_for(task, 10)
    assert time.monotonic() - started < 5
    assert result.stop_reason == "cancelled"
    await wait_for(lambda: not alive(shell))
    (run,) = rec.of(ev.HookRun)
    assert run.outcome == "cancelled"
    assert len(llm_server.chat_requests()) == 1
    await runtime.aclose()


async def test_a_hook_that_does_not_read_its_input_is_fine(tmp_path: Path) -> None:
    run = await run_hook_command("exit 0", b"x" * (4 << 20), cwd=tmp_path, timeout_s=10)
    assert run.exit_code == 0 and not run.timed_out


async def test_a_cancelled_token_stops_the_runner(tmp_path: Path) -> None:
    token = CancelToken.new_root()
    task = asyncio.ensure_future(
        run_hook_command("sleep 300", b"{}", cwd=tmp_path, timeout_s=300, cancel=token)
    )
    await asyncio.sleep(0)  # let it start
    token.cancel("stop")
    run = await asyncio.wait_for(task, 10)
    assert run.cancelled and run.exit_code is not None and run.exit_code < 0


async def test_the_hook_environment_has_no_api_keys(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_API_KEY", "sk-very-secret-value-123")
    monkeypatch.setenv("LINKUP_API_KEY", "lk-very-secret-value-456")
    monkeypatch.setenv("HOOK_VISIBLE", "yes")
    hook = python_hook(
        tmp_path / "hooks",
        "env",
        "log({k: os.environ.get(k) for k in "
        "('LLM_API_KEY', 'LINKUP_API_KEY', 'HOOK_VISIBLE', 'SMITH_PROJECT_DIR', "
        "'CLAUDE_PROJECT_DIR')})",
    )
    llm_server.enqueue(text_reply("hi"))
    runtime, _rec = hooks_runtime(
        tmp_path, llm_server.base_url, {"UserPromptSubmit": [{"command": hook}]}
    )
    await runtime.run_turn("hello")
    (seen,) = logged(tmp_path / "hooks", "env")
    assert seen["LLM_API_KEY"] is None and seen["LINKUP_API_KEY"] is None
    assert seen["HOOK_VISIBLE"] == "yes"
    assert (
        seen["SMITH_PROJECT_DIR"] == seen["CLAUDE_PROJECT_DIR"] == str(runtime.scope.project_root)
    )
    await runtime.aclose()

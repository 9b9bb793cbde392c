"""The permission question in the app: real turns against the scripted server, driven by Pilot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smith_tui.app.screens.permission_screen import PermissionScreen
from smith_tui.engine.permission_gate import GRANTS_KEY
from smith_tui.widgets.status_line import StatusLine
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import text_reply, tool_call


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: Any) -> Any:
    config = {"permissions": {"mode": "ask"}, "sandbox": {"mode": "off"}}
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as opened:
        yield opened


def _bash(command: str) -> Any:
    return tool_call("bash", {"command": command})


def _results(runtime: Any) -> list[str]:
    return [m["content"] for m in runtime.messages if m["role"] == "tool"]


async def _asked(pilot: Any) -> None:
    await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, PermissionScreen), what="the question"
    )
    await pilot.pause()


async def test_allow_once_runs_the_command(runtime: Any, llm_server: Any) -> None:
    llm_server.enqueue(text_reply(tool_calls=[_bash("echo agreed-42")]), text_reply("ok"))
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "run it")
        await _asked(pilot)
        text = screen_text(app)
        assert "Smith (direct) wants to run bash" in text
        assert "echo agreed-42" in text and "allow bash(echo*) for this session" in text
        assert runtime.busy  # the turn waits for the answer
        await pilot.press("y")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
        await wait_for_text(pilot, "ok")
        assert "run it" in screen_text(app)  # the whole turn shows after the question
    assert "agreed-42" in _results(runtime)[0]


async def test_allow_prefix_is_kept_for_the_conversation(runtime: Any, llm_server: Any) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[_bash("git status")]),
        text_reply(tool_calls=[_bash("git status --short")]),
        text_reply("ok"),
    )
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "status twice")
        await _asked(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
    assert len(_results(runtime)) == 2  # the second call was not asked about
    conv = runtime.store.conversations.get(runtime.conversation_id)
    assert conv.metadata[GRANTS_KEY] == ["bash(git status*)"]


async def test_deny_with_a_reason_tells_the_model(runtime: Any, llm_server: Any) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("write", {"path": "x.txt", "content": "hi\n"})]),
        text_reply("understood"),
    )
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "write x")
        await _asked(pilot)
        assert "+hi" in screen_text(app)  # the diff of the new file
        await pilot.press("n")
        await pilot.press(*"not now", "enter")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
    [result] = _results(runtime)
    assert "the user denied this call" in result and "not now" in result
    assert not (Path(runtime.options.cwd) / "x.txt").exists()


async def test_escape_denies_and_cancel_closes_the_question(runtime: Any, llm_server: Any) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[_bash("echo one")]),
        text_reply(tool_calls=[_bash("echo two")]),
    )
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "go")
        await _asked(pilot)
        await pilot.press("escape")
        await _asked(pilot)  # the model tries again
        runtime.cancel_turn()
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
        await wait_until(
            pilot,
            lambda: not isinstance(app.screen, PermissionScreen),
            what="the question to close",
        )
        status = app.main_screen.query_one(StatusLine)
        assert status.asking == "" and "waiting for your answer" not in status.render().plain
    first, second = _results(runtime)
    assert "the user denied this call" in first
    assert "cancelled" in second


async def test_a_workers_question_names_the_worker(runtime: Any, llm_server: Any) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "say hi")]),
        text_reply(tool_calls=[_bash("echo from-worker")]),
        text_reply(tool_calls=[report(status="success", summary="said hi")]),
        text_reply("done"),
    )
    runtime.set_active_role("orchestrator")
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "delegate")
        await _asked(pilot)
        assert "(orchestrator) wants to run dispatch: worker" in screen_text(app)
        await pilot.press("y")
        await wait_until(
            pilot,
            lambda: "(worker) wants to run bash" in screen_text(app),
            what="the worker's question",
        )
        assert "Niobe" in screen_text(app)
        status = app.main_screen.query_one(StatusLine)
        assert "waiting for your answer: bash (Niobe)" in status.render().plain
        await pilot.press("y")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")


async def test_f4_cycles_the_mode_shown_in_the_status_line(runtime: Any) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        runtime.start_session()
        status = app.screen.query_one(StatusLine)
        await wait_until(pilot, lambda: status.mode == "ask", what="the mode")
        assert "mode: ask" in screen_text(app)
        await pilot.press("f4")
        await wait_until(pilot, lambda: status.mode == "auto-edit", what="the next mode")
        assert runtime.permission_mode == "auto-edit"
        await wait_for_text(pilot, "mode: auto-edit")


async def test_the_status_line_waits_for_the_answer_not_for_the_tool(
    runtime: Any, llm_server: Any
) -> None:
    llm_server.enqueue(text_reply(tool_calls=[_bash("sleep 30")]), text_reply("never"))
    app = make_app(runtime)
    app.animation_level = "full"  # the line's clock ticks only when animated
    async with running(app) as pilot:
        status = app.main_screen.query_one(StatusLine)
        now = [1000.0]
        status.clock = lambda: now[0]

        async def ticked() -> str:
            frame = status.frame
            await wait_until(pilot, lambda: status.frame != frame, what="a tick of the line")
            return status.render().plain

        await submit(pilot, "run it")
        await _asked(pilot)
        now[0] += 60
        line = await ticked()
        assert "waiting for your answer: bash" in line
        assert "no output" not in line and "esc to interrupt" not in line
        await pilot.press("y")
        await wait_until(pilot, lambda: status.asking == "", what="the answer")
        assert status.status == "tool" and status.detail == "bash"
        now[0] += 7.4
        await wait_until(
            pilot, lambda: "no output for 7s" in status.render().plain, what="the tool's wait"
        )  # counted from the answer, not from the question (67 s)
        assert "waiting for your answer" not in status.render().plain
        await pilot.press("escape")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to stop")

"""A question asked again after a denial offers "deny and stop the turn", and denied
identical calls count toward the repeat guard (issue 22): real turns against the scripted
server, driven by Pilot, and the question's snapshots at 80×24 and 160×45."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from smith_tui.app.screens.permission_screen import PermissionScreen
from smith_tui.engine.permission_gate import PermissionReply, PermissionRequest
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.app.test_permission_screen_snapshots import BASH, _still
from tests.support.llm_server import text_reply, tool_call
from tests.support.screen_host import ScreenHost

AGAIN = PermissionRequest(**{**BASH.__dict__, "denied_before": True})


def _bash(command: str) -> Any:
    return tool_call("bash", {"command": command})


def _results(runtime: Any) -> list[str]:
    return [m["content"] for m in runtime.messages if m["role"] == "tool"]


def _config(**permissions: Any) -> dict[str, Any]:
    return {"permissions": {"mode": "ask", **permissions}, "sandbox": {"mode": "off"}}


def _keys(screen: PermissionScreen) -> str:
    return str(screen.query_one("#permission-keys", Static).render())


async def _asked(pilot: Any) -> PermissionScreen:
    await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, PermissionScreen), what="the question"
    )
    await pilot.pause()
    return pilot.app.screen  # type: ignore[no-any-return]


async def test_the_same_call_asked_again_offers_to_stop_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: Any
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[_bash("rm -rf build")]),
        text_reply(tool_calls=[_bash("rm -rf build")]),
        text_reply("should never be asked for"),
    )
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, _config()) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await submit(pilot, "clean up")
            first = await _asked(pilot)
            assert not first.request.denied_before
            assert "deny and stop the turn" not in _keys(first)
            await pilot.press("s")  # not offered yet: does nothing
            await pilot.pause()
            assert app.screen is first
            await pilot.press("escape")
            second = await _asked(pilot)
            assert second is not first and second.request.denied_before
            text = screen_text(app)
            assert "You denied this same call before in this turn" in text
            assert "s deny and stop the turn" in _keys(second)
            await pilot.press("s")
            await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
            await wait_for_text(pilot, "cancelled")
        assert len(llm_server.chat_requests()) == 2  # the turn stopped: no third request
        assert llm_server.pending == 1
        first_result = _results(runtime)[0]
        assert "the user denied this call" in first_result


async def test_denied_identical_calls_count_toward_the_repeat_guard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: Any
) -> None:
    # The same denied call, with an allowed one between each try: never twice in a row.
    denied, allowed = _bash("echo try-again"), _bash("echo between")
    replies = [text_reply(tool_calls=[c]) for c in [denied, allowed] * 4 + [denied]]
    llm_server.enqueue(*replies, text_reply("should never be asked for"))
    config = _config(deny=["bash(echo try-again*)"], allow=["bash(echo between*)"])
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await submit(pilot, "loop")
            await wait_until(pilot, lambda: not runtime.busy, what="the turn to end", within=30)
            await wait_for_text(pilot, "after 4 denials in this turn")
        assert len(llm_server.chat_requests()) == 9
        results = _results(runtime)
        assert sum("permission denied" in r for r in results) == 4
        assert "stopped: bash was asked for again with the same arguments" in results[-1]


async def test_s_answers_deny_and_stop() -> None:
    app = ScreenHost(lambda: PermissionScreen(AGAIN))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
    assert app.results == [PermissionReply("stop")]


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
def test_the_question_asked_again_snapshot(snap_compare: Any, size: tuple[int, int]) -> None:
    async def still(pilot: Pilot[Any]) -> None:
        await _still(pilot)

    app = ScreenHost(lambda: PermissionScreen(AGAIN))
    assert snap_compare(app, terminal_size=size, run_before=still)

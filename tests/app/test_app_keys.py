"""Every key binding of the app, with the default keys and with keys from the config."""

from __future__ import annotations

import pytest
from textual.command import CommandPalette

from smith_tui.app.bindings import key_for, keymap_for, normalize_key
from smith_tui.config.service_options import KeyBindings
from smith_tui.widgets.prompt_input import PromptInput
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
from tests.support.llm_server import stall, text_reply


def test_configured_keys_are_normalised_into_a_keymap() -> None:
    assert normalize_key("ALT+h") == "alt+h"
    assert normalize_key("ctrl-c") == "ctrl+c"
    assert normalize_key("ctrl+shift+K, f5") == "ctrl+shift+K,f5"
    assert normalize_key("minus") == "minus"
    keys = KeyBindings(cancel="ctrl-x", pager="F6")
    keymap = keymap_for(keys)
    assert keymap["smith.cancel"] == "ctrl+x"
    assert keymap["smith.pager"] == "f6"
    assert keymap["smith.quit"] == "ctrl+q"
    assert keymap["smith.mode"] == "f4"
    assert key_for(keymap_for(KeyBindings()), "permission_mode") == "f4"
    assert keymap_for(KeyBindings(permission_mode="F9"))["smith.mode"] == "f9"


async def test_footer_shows_every_configurable_binding(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        await wait_for_text(pilot, "Quit")
        footer = screen_text(app).splitlines()[-1]
        for label in ("Cancel", "Transcript", "Inspect", "Commands", "Quit", "Help"):
            assert label in footer


async def test_ctrl_c_when_idle_says_how_to_quit(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.press("ctrl+c")
        await wait_for_text(pilot, "press ctrl+q to quit")
        assert app.is_running


async def test_ctrl_c_when_idle_copies_the_selection(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.press(*"copy me")
        prompt = app.screen.query_one(PromptInput)
        prompt.select_all()
        await pilot.press("ctrl+c")
        assert app.clipboard == "copy me"
        await wait_for_text(pilot, "Copied")


@pytest.mark.parametrize("key", ["ctrl+c", "escape"])
async def test_ctrl_c_and_escape_cancel_the_running_turn(key: str, runtime, llm_server) -> None:
    llm_server.enqueue(stall(after_events=2, hold_s=30))
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "wait forever")
        await wait_until(pilot, lambda: runtime.busy, what="the turn to start")
        await pilot.press(key)
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to stop")
        status = app.screen.query_one(StatusLine)
        await wait_until(pilot, lambda: status.status == "cancelled", what="cancelled status")
        assert "cancelled" in screen_text(app)


async def test_ctrl_q_quits_and_cancels_a_running_turn(runtime, llm_server) -> None:
    llm_server.enqueue(stall(after_events=2, hold_s=30))
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "long one")
        await wait_until(pilot, lambda: runtime.busy, what="the turn to start")
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, what="the app to exit")
    assert app.return_code == 0
    assert not runtime.busy
    # the cancelled turn was persisted before the app left
    assert runtime.messages[0]["content"] == "long one"


async def test_ctrl_p_opens_the_command_palette_with_smith_commands(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), what="palette")
        await pilot.press(*"new conv")
        await wait_for_text(pilot, "New conversation")
        first = runtime.conversation_id
        await pilot.press("enter")
        await wait_until(pilot, lambda: runtime.conversation_id != first, what="a new conversation")


@pytest.mark.parametrize(
    ("key", "screen"),
    [
        ("alt+h", "pager"),
        ("alt+i", "inspect"),
        ("ctrl+r", "history"),
        ("f2", "config"),
        ("f1", "help"),
    ],
)
async def test_screen_keys_open_their_screen(runtime, key, screen) -> None:
    from smith_tui.app.app import screen_class

    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.press(key)
        cls = screen_class(screen)
        await wait_until(pilot, lambda: isinstance(app.screen, cls), what=f"{screen} screen")
        await pilot.press(key)  # already showing: not pushed twice
        await pilot.pause()
        assert len(app.screen_stack) == 2
        await pilot.press("escape")
        await wait_until(
            pilot, lambda: app.screen is app.main_screen, what="back to the main screen"
        )


async def test_keys_come_from_services_ui_keys(tmp_path, monkeypatch, llm_server) -> None:
    config = {"services": {"ui": {"keys": {"cancel": "ctrl-g", "quit": "f10", "pager": "f6"}}}}
    llm_server.enqueue(stall(after_events=2, hold_s=30), text_reply("after"))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await wait_for_text(pilot, "Quit")
            footer = screen_text(app).splitlines()[-1]
            assert "^g Cancel" in footer and "f10 Quit" in footer and "f6 Transcript" in footer
            await pilot.press("ctrl+c")  # no longer the cancel key
            await pilot.pause()
            assert "to quit" not in screen_text(app)
            await submit(pilot, "slow")
            await wait_until(pilot, lambda: runtime.busy, what="the turn to start")
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: not runtime.busy, what="ctrl+g to cancel")
            await pilot.press("ctrl+g")
            await wait_for_text(pilot, "press f10 to quit")
            await pilot.press("f10")
            await wait_until(pilot, lambda: not app.is_running, what="f10 to quit")


async def test_the_permission_mode_key_comes_from_services_ui_keys(
    tmp_path, monkeypatch, llm_server
) -> None:
    config = {
        "permissions": {"mode": "ask"},
        "sandbox": {"mode": "off"},
        "services": {"ui": {"keys": {"permission_mode": "ctrl+t"}}},
    }
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            runtime.start_session()
            status = app.screen.query_one(StatusLine)
            await wait_until(pilot, lambda: status.mode == "ask", what="the mode")
            await pilot.press("f4")  # no longer the mode key
            await pilot.pause()
            assert runtime.permission_mode == "ask"
            await pilot.press("ctrl+t")
            await wait_until(pilot, lambda: status.mode == "auto-edit", what="ctrl+t to cycle")
            assert runtime.permission_mode == "auto-edit"

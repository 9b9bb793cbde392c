"""Vim keys in the prompt (``services.ui.vim``): modes, motions, operators, counts, the
register, undo/redo, the mode shown on the prompt's border, and the prompt's own keys
(enter, history, completion, escape reaching the app) under them.

Most tests drive the real :class:`PromptInput` in a small host app (quick); the app-level
ones run the real Smith app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from smith_tui.config.overrides import OverrideError
from smith_tui.widgets.completion.menu import CompletionMenu
from smith_tui.widgets.prompt_input import NORMAL_MODE_TITLE, PromptInput
from smith_tui.widgets.status_line import StatusLine
from smith_tui.widgets.vim_keys import Mode
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_until,
)
from tests.app.test_prompt_input import PromptHost, _static_completer
from tests.support.llm_server import stall

OFFLINE_URL = "http://127.0.0.1:9/v1"
VIM_ON = {"services": {"ui": {"vim": True}}}


class VimHost(PromptHost):
    """The prompt host with vim keys on (or off)."""

    def __init__(self, vim: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.vim = vim
        self.scrolls: list[str] = []

    def on_prompt_input_scroll_requested(self, message: PromptInput.ScrollRequested) -> None:
        self.scrolls.append(message.key)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(PromptInput).vim_enabled = lambda: self.vim


async def _normal(pilot: Pilot[Any], text: str, at: tuple[int, int]) -> PromptInput:
    """The prompt holding ``text``, in normal mode with the cursor at ``at``."""
    prompt = pilot.app.query_one(PromptInput)
    prompt.load_text(text)
    prompt.move_cursor(prompt.document.end)
    await pilot.press("escape")
    assert prompt.vim.mode is Mode.NORMAL
    prompt.move_cursor(at)
    return prompt


Case = tuple[str, tuple[int, int], list[str], str, tuple[int, int]]


async def _check(cases: list[Case], vim_host: Callable[[], VimHost] = VimHost) -> None:
    """Each case: text, cursor, keys pressed in normal mode -> the text and cursor after."""
    app = vim_host()
    async with app.run_test() as pilot:
        for text, at, keys, want_text, want_at in cases:
            prompt = await _normal(pilot, text, at)
            await pilot.press(*keys)
            got = (prompt.text, prompt.cursor_location)
            assert got == (want_text, want_at), f"{keys} on {text!r} at {at}"
            if prompt.vim.mode is Mode.INSERT:
                await pilot.press("escape")
            assert not prompt.vim.pending, keys


async def test_starts_in_insert_escape_shows_normal_and_i_goes_back() -> None:
    app = VimHost()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press(*"hello")  # insert mode from the start: typing works at once
        assert prompt.text == "hello"
        assert prompt.vim.mode is Mode.INSERT and not prompt.border_title
        await pilot.press("escape")
        assert prompt.vim.mode is Mode.NORMAL
        assert prompt.border_title == NORMAL_MODE_TITLE
        assert prompt.cursor_location == (0, 4)  # back onto the last letter typed, as in vim
        await pilot.press(*"hjkl;z", "backspace", "ctrl+j", "shift+enter")  # none types
        assert prompt.text == "hello"
        assert prompt.cursor_location == (0, 3)  # l, then backspace = h
        await pilot.press("i", "X")
        assert prompt.text == "helXlo"
        assert prompt.vim.mode is Mode.INSERT and not prompt.border_title


async def _terminal_bytes(pilot: Pilot[Any], data: str) -> None:
    """Deliver ``data`` as the terminal's bytes: through Textual's input parser, its key
    events posted to the app as its driver posts them."""
    from textual._xterm_parser import XTermParser

    parser = XTermParser()
    for event in [*parser.feed(data), *parser.feed("")]:
        pilot.app.post_message(event)
    await pilot.pause()


async def test_escape_and_a_key_typed_fast_are_both_keys() -> None:
    """A terminal sends esc then x within Textual's ESCDELAY as one alt+x."""
    app = VimHost()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press(*"abc")
        await _terminal_bytes(pilot, "\x1bx")
        assert prompt.text == "ab" and prompt.vim.mode is Mode.NORMAL
        await _terminal_bytes(pilot, "\x1bh")  # in normal mode: the key
        await _terminal_bytes(pilot, "\x1bx")
        assert prompt.text == "b" and prompt.cursor_location == (0, 0)
        app.vim = False
        await _terminal_bytes(pilot, "\x1bx")  # vim keys off: as before (the letter)
        assert prompt.text == "xb"


async def test_motions_with_counts() -> None:
    line = "  alpha beta.gamma  delta"
    await _check(
        [
            (line, (0, 10), ["h"], line, (0, 9)),
            (line, (0, 10), ["3", "h"], line, (0, 7)),
            (line, (0, 10), ["l"], line, (0, 11)),
            (line, (0, 10), ["9", "9", "l"], line, (0, 24)),  # stops on the last character
            (line, (0, 10), ["0"], line, (0, 0)),
            (line, (0, 10), ["^"], line, (0, 2)),
            (line, (0, 10), ["$"], line, (0, 24)),
            (line, (0, 2), ["w"], line, (0, 8)),
            (line, (0, 8), ["w"], line, (0, 12)),  # "." is a word of its own
            (line, (0, 2), ["3", "w"], line, (0, 13)),
            (line, (0, 2), ["5", "w"], line, (0, 24)),  # past the last word: the last character
            (line, (0, 20), ["b"], line, (0, 13)),
            (line, (0, 20), ["2", "b"], line, (0, 12)),
            (line, (0, 0), ["b"], line, (0, 0)),
            (line, (0, 2), ["e"], line, (0, 6)),
            (line, (0, 6), ["e"], line, (0, 11)),
            (line, (0, 2), ["3", "e"], line, (0, 12)),
        ]
    )


async def test_word_motions_cross_lines_and_stop_at_empty_lines() -> None:
    text = "one two\n\n  three"
    await _check(
        [
            (text, (0, 4), ["w"], text, (1, 0)),  # the empty line is a word
            (text, (1, 0), ["w"], text, (2, 2)),
            (text, (2, 2), ["b"], text, (1, 0)),
            (text, (1, 0), ["b"], text, (0, 4)),
            (text, (0, 6), ["e"], text, (2, 6)),  # e does not stop at empty lines
        ]
    )


async def test_line_motions_gg_g_and_counts() -> None:
    text = "first\n  second\nthird line\n    fourth"
    await _check(
        [
            (text, (0, 3), ["j"], text, (1, 3)),
            (text, (0, 3), ["2", "j"], text, (2, 3)),
            (text, (2, 8), ["j"], text, (3, 8)),
            (text, (3, 9), ["k"], text, (2, 9)),
            (text, (2, 9), ["k"], text, (1, 7)),  # the short line: its last character
            (text, (2, 5), ["g", "g"], text, (0, 0)),
            (text, (0, 2), ["G"], text, (3, 4)),  # the last line's first non-blank
            (text, (0, 2), ["2", "G"], text, (1, 2)),
            (text, (3, 2), ["2", "g", "g"], text, (1, 2)),
            (text, (1, 4), ["g", "x", "l"], text, (1, 5)),  # g then an unknown key: dropped
        ]
    )


async def test_delete_operator_with_motions_counts_and_shorthands() -> None:
    line = "alpha beta gamma delta"
    await _check(
        [
            (line, (0, 6), ["d", "w"], "alpha gamma delta", (0, 6)),
            (line, (0, 6), ["d", "2", "w"], "alpha delta", (0, 6)),
            (line, (0, 6), ["2", "d", "w"], "alpha delta", (0, 6)),
            (line, (0, 0), ["2", "d", "2", "w"], "", (0, 0)),  # counts multiply
            (line, (0, 6), ["d", "e"], "alpha  gamma delta", (0, 6)),
            (line, (0, 6), ["d", "b"], "beta gamma delta", (0, 0)),
            (line, (0, 8), ["d", "$"], "alpha be", (0, 7)),
            (line, (0, 8), ["D"], "alpha be", (0, 7)),
            (line, (0, 8), ["d", "0"], "ta gamma delta", (0, 0)),
            (line, (0, 8), ["d", "h"], "alpha bta gamma delta", (0, 7)),
            (line, (0, 8), ["d", "l"], "alpha bea gamma delta", (0, 8)),
            (line, (0, 0), ["x"], "lpha beta gamma delta", (0, 0)),
            (line, (0, 0), ["3", "x"], "ha beta gamma delta", (0, 0)),
            (line, (0, 20), ["5", "x"], "alpha beta gamma del", (0, 19)),  # to the line's end
            (line, (0, 3), ["X"], "alha beta gamma delta", (0, 2)),
            (line, (0, 3), ["2", "X"], "aha beta gamma delta", (0, 1)),
            (line, (0, 3), ["d", "escape", "x"], "alpa beta gamma delta", (0, 3)),
            ("one\n  two", (0, 0), ["d", "w"], "\n  two", (0, 0)),  # not the next line's word
        ]
    )


async def test_delete_whole_lines() -> None:
    text = "one\ntwo\nthree\nfour"
    await _check(
        [
            (text, (1, 1), ["d", "d"], "one\nthree\nfour", (1, 0)),
            (text, (1, 1), ["2", "d", "d"], "one\nfour", (1, 0)),
            (text, (3, 1), ["d", "d"], "one\ntwo\nthree", (2, 0)),
            (text, (1, 1), ["d", "j"], "one\nfour", (1, 0)),
            (text, (2, 1), ["d", "k"], "one\nfour", (1, 0)),
            (text, (3, 1), ["d", "j"], text, (3, 1)),  # no line below: nothing
            (text, (1, 0), ["d", "G"], "one", (0, 0)),
            (text, (2, 0), ["d", "g", "g"], "four", (0, 0)),
            ("only", (0, 2), ["d", "d"], "", (0, 0)),
        ]
    )


async def test_change_operator_enters_insert_mode() -> None:
    line = "alpha beta gamma"
    await _check(
        [
            (line, (0, 6), ["c", "w", *"BETA"], "alpha BETA gamma", (0, 10)),
            (line, (0, 9), ["c", "w", "X"], "alpha betX gamma", (0, 10)),  # last letter only
            (line, (0, 6), ["c", "2", "w", "Z"], "alpha Z", (0, 7)),
            (line, (0, 6), ["c", "$", "Z"], "alpha Z", (0, 7)),
            (line, (0, 6), ["C", "Z"], "alpha Z", (0, 7)),
            (line, (0, 6), ["c", "b", "Z"], "Zbeta gamma", (0, 1)),
            ("one\n  two\nthree", (1, 3), ["c", "c", "Z"], "one\nZ\nthree", (1, 1)),
            ("one\ntwo\nthree", (0, 1), ["2", "c", "c", "Z"], "Z\nthree", (0, 1)),
        ]
    )


async def test_yank_and_put_from_the_register() -> None:
    app = VimHost()
    async with app.run_test() as pilot:
        prompt = await _normal(pilot, "alpha beta", (0, 0))
        await pilot.press("y", "w")
        assert prompt.text == "alpha beta" and prompt.cursor_location == (0, 0)
        assert prompt.vim.register.text == "alpha "
        await pilot.press("$", "p")
        assert prompt.text == "alpha betaalpha "
        assert prompt.cursor_location == (0, 15)  # on the last character put
        await pilot.press("0", "P")
        assert prompt.text == "alpha alpha betaalpha "
        assert prompt.cursor_location == (0, 5)
        await pilot.press("u", "u")
        assert prompt.text == "alpha beta"

        prompt = await _normal(pilot, "one\n  two\nthree", (1, 4))
        await pilot.press("y", "y")
        assert prompt.cursor_location == (1, 4)  # yy leaves the cursor
        await pilot.press("p")
        assert prompt.text == "one\n  two\n  two\nthree"
        assert prompt.cursor_location == (2, 2)
        await pilot.press("g", "g", "P")
        assert prompt.text == "  two\none\n  two\n  two\nthree"
        assert prompt.cursor_location == (0, 2)
        await pilot.press("G", "2", "p")  # after the last line, twice
        assert prompt.text == "  two\none\n  two\n  two\nthree\n  two\n  two"
        assert prompt.cursor_location == (5, 2)

        prompt = await _normal(pilot, "a\nb\nc", (0, 0))
        await pilot.press("2", "y", "y", "G", "p")
        assert prompt.text == "a\nb\nc\na\nb"
        await pilot.press("d", "d", "k", "P")  # a delete fills the register too
        assert prompt.text == "a\nb\na\nc\nb"
        assert prompt.cursor_location == (2, 0)
        await pilot.press("x", "j", "p")
        assert prompt.text == "a\nb\n\nca\nb"


async def test_huge_counts_are_capped() -> None:
    app = VimHost()
    async with app.run_test() as pilot:
        prompt = await _normal(pilot, "ab\ncd", (0, 0))
        await pilot.press(*"123456789", "j", *"99999", "w")
        assert prompt.cursor_location == (1, 1)
        assert not prompt.vim.pending
        await pilot.press("0", "y", "l", *"88888", "p")  # digits past the fourth are dropped
        assert prompt.text == "ab\nc" + "c" * 8888 + "d"
        prompt = await _normal(pilot, "one two three", (0, 0))
        await pilot.press(*"999", "d", *"999", "w")  # 998001 is cut to 9999
        assert prompt.text == "" and not prompt.vim.pending


async def test_insert_commands_i_a_upper_i_upper_a_o_upper_o() -> None:
    text = "  word"
    await _check(
        [
            (text, (0, 3), ["i", "X"], "  wXord", (0, 4)),
            (text, (0, 3), ["a", "X"], "  woXrd", (0, 5)),
            (text, (0, 3), ["I", "X"], "  Xword", (0, 3)),
            (text, (0, 3), ["A", "X"], "  wordX", (0, 7)),
            (text, (0, 3), ["o", "X"], "  word\nX", (1, 1)),
            (text, (0, 3), ["O", "X"], "X\n  word", (0, 1)),
            ("", (0, 0), ["a", "X"], "X", (0, 1)),
        ]
    )


async def test_r_replaces_characters_and_escape_cancels_it() -> None:
    text = "abcdef"
    await _check(
        [
            (text, (0, 1), ["r", "Z"], "aZcdef", (0, 1)),
            (text, (0, 1), ["3", "r", "-"], "a---ef", (0, 3)),
            (text, (0, 4), ["3", "r", "-"], text, (0, 4)),  # too few characters: nothing
            (text, (0, 1), ["r", "escape", "x"], "acdef", (0, 1)),
        ]
    )


async def test_undo_and_redo_one_command_at_a_time() -> None:
    app = VimHost()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press(*"one two three", "escape")
        await pilot.press("0", "x", "w", "d", "w", "$", "x")
        assert prompt.text == "ne thre"
        await pilot.press("u")
        assert prompt.text == "ne three"
        await pilot.press("2", "u")
        assert prompt.text == "one two three"
        await pilot.press("u")
        assert prompt.text == ""  # the typing, one step
        await pilot.press("ctrl+r")
        assert prompt.text == "one two three"
        await pilot.press("ctrl+r", "ctrl+r")
        assert prompt.text == "ne three"
        assert prompt.vim.mode is Mode.NORMAL
        row, column = prompt.cursor_location
        assert column < len(prompt.document[row])  # on a character


async def test_enter_submits_in_normal_mode_and_the_next_prompt_starts_in_insert() -> None:
    app = VimHost()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press(*"send me", "escape", "d", "enter")  # a pending operator too
        await pilot.pause()
        assert app.submitted == ["send me"]
        assert prompt.text == "" and prompt.vim.mode is Mode.INSERT
        assert not prompt.vim.pending and not prompt.border_title
        await pilot.press("w")
        assert prompt.text == "w"


async def test_k_and_j_on_the_first_and_last_line_walk_the_history() -> None:
    app = VimHost()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        for line in ("first", "second"):
            await pilot.press(*line, "enter")
        await pilot.press(*"draft", "ctrl+j", *"two", "escape")
        await pilot.press("k")  # on the second line: moves up
        assert prompt.text == "draft\ntwo" and prompt.cursor_location == (0, 2)
        await pilot.press("k")  # the first line: the history, as up does
        assert prompt.text == "second"
        assert prompt.cursor_location == (0, 5)  # in normal mode: on the last character
        await pilot.press("k")
        assert prompt.text == "first"
        await pilot.press("j", "j")
        assert prompt.text == "draft\ntwo"
        assert prompt.vim.mode is Mode.NORMAL
        await pilot.press("up")  # the arrows keep their meaning in normal mode
        assert prompt.text == "draft\ntwo" and prompt.cursor_location[0] == 0
        await pilot.press("up")
        assert prompt.text == "second"


async def test_completion_menu_and_scroll_keys_work_in_insert_mode() -> None:
    app = VimHost(completer=_static_completer())
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        menu = app.query_one(CompletionMenu)
        await pilot.press("slash", "m")
        await wait_until(pilot, lambda: menu.is_open, what="menu")
        await pilot.press("down", "tab")
        assert prompt.text == "/models "
        prompt.clear()
        await pilot.press("slash", "m")
        await wait_until(pilot, lambda: menu.is_open, what="menu again")
        await pilot.press("escape")  # the menu goes first
        assert not menu.is_open and prompt.vim.mode is Mode.INSERT
        await pilot.press("escape")
        assert prompt.vim.mode is Mode.NORMAL
        await pilot.press("x")  # a normal-mode edit opens no menu
        await pilot.pause()
        assert prompt.text == "/" and not menu.is_open
        await pilot.press("pageup", "pagedown")
        await pilot.pause()
        assert app.scrolls == ["pageup", "pagedown"]


async def test_vim_off_leaves_the_prompt_as_it_was() -> None:
    app = VimHost(vim=False)
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press(*"hello", "escape", *"dd0x")
        assert prompt.text == "hellodd0x"
        assert prompt.vim.mode is Mode.INSERT and not prompt.border_title
        app.vim = True
        await pilot.press("escape", "0", "x")
        assert prompt.text == "ellodd0x" and prompt.border_title == NORMAL_MODE_TITLE
        app.vim = False  # turned off in normal mode: the next key is typed
        await pilot.press("z")
        assert prompt.text == "zellodd0x"
        assert prompt.vim.mode is Mode.INSERT and not prompt.border_title


# --- in the Smith app ---------------------------------------------------------------


async def test_escape_in_normal_mode_reaches_the_apps_cancel(
    tmp_path, monkeypatch, llm_server
) -> None:
    llm_server.enqueue(stall(after_events=2, hold_s=30))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config=VIM_ON) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            prompt = app.screen.query_one(PromptInput)
            await submit(pilot, "wait forever")
            await wait_until(pilot, lambda: runtime.busy, what="the turn to start")
            await pilot.press(*"next", "escape")  # insert -> normal: the turn goes on
            assert prompt.vim.mode is Mode.NORMAL
            await pilot.press("d")
            await pilot.press("escape")  # drops the pending d: still running
            await pilot.pause()
            assert runtime.busy
            await pilot.press("escape")  # nothing pending: the app's interrupt
            await wait_until(pilot, lambda: not runtime.busy, what="the turn to stop")
            status = app.screen.query_one(StatusLine)
            await wait_until(pilot, lambda: status.status == "cancelled", what="cancelled")
            assert prompt.text == "next"


async def test_ctrl_r_is_redo_in_normal_mode_and_history_in_insert_mode(runtime) -> None:
    from smith_tui.app.app import screen_class

    runtime.set_config("services.ui.vim", "true")  # as /config set does
    app = make_app(runtime)
    async with running(app) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await pilot.press(*"abc", "escape", "x")
        assert prompt.text == "ab"
        await pilot.press("u")
        assert prompt.text == "abc"
        await pilot.press("ctrl+r")
        assert prompt.text == "ab" and app.screen is app.main_screen
        await pilot.press("a", "ctrl+r")  # insert mode: the history screen, as without vim
        history = screen_class("history")
        await wait_until(pilot, lambda: isinstance(app.screen, history), what="history")


async def test_config_set_turns_vim_keys_on_in_the_running_prompt(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await pilot.press(*"ab", "escape", "x")
        assert prompt.text == "abx"  # off by default
        prompt.clear()
        await submit(pilot, "/config set services.ui.vim true")
        await wait_until(pilot, lambda: runtime.config.model.services.ui.vim, what="the set")
        await pilot.press(*"ab", "escape", "x")
        assert prompt.text == "a" and prompt.border_title == NORMAL_MODE_TITLE


def test_the_setting_validates_with_a_clear_message(tmp_path, monkeypatch) -> None:
    with isolated_runtime(tmp_path, monkeypatch, OFFLINE_URL) as runtime:
        assert runtime.config.model.services.ui.vim is False
        with pytest.raises(OverrideError) as raised:
            runtime.set_config("services.ui.vim", '"yes"')
        message = str(raised.value)
        assert "services.ui.vim" in message and "true or false" in message
        assert runtime.config.model.services.ui.vim is False


def test_normal_mode_indicator_snapshot(snap_compare, tmp_path, monkeypatch) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(
        tmp_path, api_url=OFFLINE_URL, ephemeral={"default_model": "qwen-coder", **VIM_ON}
    )
    app = make_app(runtime)

    async def normal_mode(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.main_screen.panes_ready, what="the panes")
        await pilot.press(*"fix the spoon", "escape", "b")
        prompt = app.screen.query_one(PromptInput)
        await wait_until(pilot, lambda: NORMAL_MODE_TITLE in screen_text(app), "NORMAL")
        assert prompt.cursor_location == (0, 8)

    try:
        assert snap_compare(app, terminal_size=(80, 24), run_before=normal_mode)
    finally:
        runtime.store.close()


def test_the_help_screen_tells_about_vim_keys() -> None:
    import io

    from rich.console import Console

    from smith_tui.app.screens.help_screen import help_renderable
    from smith_tui.config.service_options import KeyBindings

    console = Console(width=120, file=io.StringIO(), record=True)
    console.print(help_renderable(KeyBindings()))
    text = " ".join(console.export_text().split())
    assert "esc (vim keys)" in text and "services.ui.vim" in text and "NORMAL" in text

"""Kitty graphics detection: settings, multiplexers, probe replies, environment heuristics."""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.widgets.rain.detect import (
    graphics_query,
    in_multiplexer,
    kitty_graphics_supported,
    parse_graphics_setting,
    parse_query_reply,
    shm_transfer_usable,
)

OK_REPLY = "\x1b_Gi=31;OK\x1b\\\x1b[?62;22c"
DA1_ONLY = "\x1b[?1;2c"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"TERM": "xterm-kitty"}, True),
        ({"TERM": "xterm-256color", "KITTY_WINDOW_ID": "3"}, True),
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}, True),
        ({"TERM": "xterm-ghostty", "TERM_PROGRAM": "ghostty"}, True),
        ({"TERM": "xterm-256color"}, False),
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "Apple_Terminal"}, False),
        ({"TERM": "dumb", "TERM_PROGRAM": "WezTerm"}, False),
        ({}, False),
        # a multiplexer hides the outer terminal, whatever leaked into the environment
        ({"TERM": "tmux-256color", "KITTY_WINDOW_ID": "3", "TMUX": "/tmp/t,1,0"}, False),
        ({"TERM": "xterm-kitty", "TMUX": "/tmp/t,1,0"}, False),
        ({"TERM": "screen-256color", "KITTY_WINDOW_ID": "1"}, False),
        ({"TERM": "xterm-kitty", "STY": "1234.pts-0"}, False),
    ],
)
def test_environment_heuristics(env: dict[str, str], expected: bool) -> None:
    assert kitty_graphics_supported(env) is expected


def test_setting_overrides_everything_and_enables_tmux() -> None:
    tmux = {"TERM": "tmux-256color", "TMUX": "/tmp/t,1,0"}
    assert kitty_graphics_supported(tmux, override="on") is True
    assert kitty_graphics_supported(tmux, override=True) is True
    assert kitty_graphics_supported({"TERM": "xterm-kitty"}, override="off") is False
    assert kitty_graphics_supported({"TERM": "xterm-kitty"}, override="auto") is True
    with pytest.raises(ValueError, match="auto, on, off"):
        kitty_graphics_supported({}, override="maybe")


def test_probe_reply_decides_when_given() -> None:
    plain = {"TERM": "xterm-256color"}
    assert kitty_graphics_supported(plain, OK_REPLY) is True
    assert kitty_graphics_supported({"TERM": "xterm-kitty"}, DA1_ONLY) is False
    assert kitty_graphics_supported({"TERM": "xterm-kitty"}, "") is True  # no answer yet
    assert kitty_graphics_supported({"TMUX": "x", "TERM": "tmux"}, OK_REPLY) is False


def test_query_and_reply_parsing() -> None:
    query = graphics_query()
    assert query.startswith("\x1b_G") and "a=q" in query and "i=31" in query
    assert query.endswith("\x1b[c")
    assert parse_query_reply(OK_REPLY) is True
    assert parse_query_reply("\x1b_Gi=31;ENOTSUPPORTED:no\x1b\\\x1b[?62c") is False
    assert parse_query_reply(DA1_ONLY) is False
    assert parse_query_reply("") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("auto", None), (" ON ", True), ("yes", True), (False, False), ("0", False)],
)
def test_graphics_setting_words(value: object, expected: bool | None) -> None:
    assert parse_graphics_setting(value) is expected  # type: ignore[arg-type]


def test_multiplexer_detection() -> None:
    assert in_multiplexer({"TMUX": "/tmp/x"})
    assert in_multiplexer({"TERM": "screen"})
    assert not in_multiplexer({"TERM": "xterm-kitty"})


def test_shm_transfer_needs_a_local_session_and_a_directory(tmp_path: Path) -> None:
    assert shm_transfer_usable({}, str(tmp_path)) is True
    assert shm_transfer_usable({"SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"}, str(tmp_path)) is False
    assert shm_transfer_usable({}, str(tmp_path / "absent")) is False

"""Notifications while the terminal does not have the focus: the bytes, the rules, the
config, and the real ``smith`` on a pseudo-terminal sending them exactly when it should."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from smith_tui.app.terminal_notify import (
    BEL,
    Notifier,
    notification_bytes,
    notification_style,
    notify_attention,
    osc9,
    osc777,
    safe_text,
    tmux_allows_passthrough,
    tmux_passthrough,
)
from smith_tui.config import ConfigError
from smith_tui.config.notifications import NotificationsConfig
from smith_tui.config.overrides import is_overridable_path
from smith_tui.config.validation import check_config
from tests.support.llm_server import text_reply, tool_call
from tests.support.pty_smith import PtySmith
from tests.support.smith_cli import server_args, smith_env

HOSTILE = "evil\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b31m\nsecond;line\tend\x1b\\"

# -- the bytes --------------------------------------------------------------------------------


def test_the_three_kinds_of_notification() -> None:
    assert osc9("Smith: done") == "\x1b]9;Smith: done\x07"
    assert osc777("Smith", "done") == "\x1b]777;notify;Smith;done\x07"
    assert notification_bytes("bell", "done") == BEL == "\x07"
    assert notification_bytes("osc9", "done") == "\x1b]9;Smith: done\x07"
    assert notification_bytes("osc777", "done") == "\x1b]777;notify;Smith;done\x07"


def test_tmux_passthrough_wraps_the_sequence_with_every_escape_doubled() -> None:
    assert tmux_passthrough("\x1b]9;hi\x07") == "\x1bPtmux;\x1b\x1b]9;hi\x07\x1b\\"
    wrapped = notification_bytes("osc777", "done", tmux=True)
    assert wrapped == "\x1bPtmux;\x1b\x1b]777;notify;Smith;done\x07\x1b\\"
    assert notification_bytes("bell", "done", tmux=True) == BEL  # tmux rings a bell itself


def test_outside_text_cannot_end_the_sequence_or_start_another() -> None:
    text = safe_text(HOSTILE)
    assert not re.search("[\x00-\x1f\x7f-\x9f]", text), repr(text)
    assert ";" not in text  # OSC 777's field separator
    assert text.startswith("evil␛]52,c,cm0gLXJmIH4=␇␛[2J\\x9b31m second,line end␛\\")
    for sequence in (osc9(HOSTILE), osc777(HOSTILE, HOSTILE)):
        body = sequence[2:-1]  # between "ESC ]" and the BEL that ends it
        assert not re.search("[\x00-\x1f\x7f-\x9f]", body), repr(sequence)
    assert osc777(HOSTILE, "x").count(";") == 3  # "777;notify;TITLE;BODY": no extra field
    passed = notification_bytes("osc9", HOSTILE, tmux=True)
    inner = passed.removeprefix("\x1bPtmux;").removesuffix("\x1b\\")
    assert inner.count("\x1b\x1b") == 1 and "\x1b\\" not in inner.replace("\x1b\x1b", "")
    assert len(safe_text("x" * 1000)) == 160


def test_control_the_same_text_unsanitised_would_break_out() -> None:
    # Without safe_text the model's text would close the OSC and clear the screen.
    raw = f"\x1b]9;{HOSTILE}\x07"
    assert raw.index("\x07") < len(raw) - 1 and "\x1b[2J" in raw


@pytest.mark.parametrize(
    ("env", "style"),
    [
        ({"TERM": "xterm-kitty"}, "osc9"),
        ({"TERM": "xterm-256color", "KITTY_WINDOW_ID": "3"}, "osc9"),
        ({"TERM_PROGRAM": "WezTerm"}, "osc9"),
        ({"TERM_PROGRAM": "iTerm.app"}, "osc9"),
        ({"TERM_PROGRAM": "ghostty", "TERM": "xterm-ghostty"}, "osc9"),
        ({"TERM": "tmux-256color", "TERM_PROGRAM": "tmux", "WEZTERM_PANE": "0"}, "osc9"),
        ({"TERM": "screen", "LC_TERMINAL": "iTerm2"}, "osc9"),
        ({"TERM": "foot"}, "osc777"),
        ({"TERM": "rxvt-unicode-256color"}, "osc777"),
        ({"TERM": "xterm-256color"}, "bell"),
        ({"TERM": "tmux-256color", "TERM_PROGRAM": "tmux"}, "bell"),
        ({}, "bell"),
    ],
)
def test_the_terminal_is_recognised_from_its_environment(env: dict[str, str], style: str) -> None:
    assert notification_style(env) == style


# -- the rules ----------------------------------------------------------------------------


@dataclass
class FakeApp:
    app_focus: bool = False
    workers: list[Any] = field(default_factory=list)

    def run_worker(self, work: Any, **_: Any) -> None:
        self.workers.append(work)
        work()


@dataclass(frozen=True)
class Ev:
    type: str
    job_id: str | None = None
    stop_reason: str = "completed"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_notifier(
    app: FakeApp, env: dict[str, str] | None = None, **settings: Any
) -> tuple[Notifier, list[str], Clock]:
    written: list[str] = []
    clock = Clock()
    config = NotificationsConfig(**settings)
    notifier = Notifier(
        app,
        lambda: config,
        title=lambda: "Fix the \x1b[2Jparser",
        env=env if env is not None else {"TERM": "xterm-kitty"},
        write=written.append,
        clock=clock,
    )
    return notifier, written, clock


def test_a_question_notifies_only_while_the_terminal_lacks_the_focus() -> None:
    app = FakeApp(app_focus=True)
    notifier, written, _ = make_notifier(app)
    assert not notifier.attention("permission", "bash asks for permission")
    assert written == []
    app.app_focus = False
    assert notifier.attention("permission", "bash asks for permission")
    assert notifier.attention("permission", "edit asks for permission")  # each question
    assert written == [
        "\x1b]9;Smith: bash asks for permission\x07",
        "\x1b]9;Smith: edit asks for permission\x07",
    ]


def test_mode_off_sends_nothing_and_mode_bell_only_the_bell() -> None:
    app = FakeApp()
    off, written_off, _ = make_notifier(app, mode="off")
    assert not off.attention("permission", "x") and written_off == []
    bell, written_bell, _ = make_notifier(app, mode="bell")
    assert bell.attention("permission", "x") and written_bell == [BEL]


def test_a_turn_notifies_when_it_ran_longer_than_after_s() -> None:
    app = FakeApp()
    notifier, written, clock = make_notifier(app, after_s=10)
    notifier.follow([Ev("turn_started")])
    clock.now += 9.5
    notifier.follow([Ev("turn_finished")])
    assert written == []  # quick: the user did not wait
    notifier.follow([Ev("turn_started")])
    clock.now += 12
    notifier.follow([Ev("turn_started", job_id="j1"), Ev("turn_finished", job_id="j1")])
    assert written == []  # a sub-agent's turn is not the user's
    notifier.follow([Ev("turn_finished")])
    assert written == ["\x1b]9;Smith: the turn is done (12 s): Fix the ␛[2Jparser\x07"]
    notifier.follow([Ev("turn_started")])
    clock.now += 30
    notifier.follow([Ev("turn_finished", stop_reason="cancelled")])
    assert len(written) == 1  # cancelled: the user is there
    notifier.follow([Ev("turn_started")])
    clock.now += 11
    notifier.follow([Ev("turn_finished", stop_reason="error")])
    assert (
        written[-1] == "\x1b]9;Smith: the turn stopped with an error (11 s): Fix the ␛[2Jparser\x07"
    )


def test_a_plan_notifies_once_and_its_turn_does_not_again() -> None:
    app = FakeApp()
    notifier, written, clock = make_notifier(app, after_s=0)
    notifier.follow([Ev("turn_started")])
    clock.now += 60
    notifier.follow([Ev("plan_presented"), Ev("turn_finished")])
    assert written == ["\x1b]9;Smith: a plan waits for your approval\x07"]
    assert not notifier.attention("plan", "a plan waits for your approval")  # the screen's call
    notifier.follow([Ev("turn_started")])
    clock.now += 1
    notifier.follow([Ev("turn_finished")])
    assert written[-1].startswith("\x1b]9;Smith: the turn is done")  # a new turn notifies


def test_notify_attention_reaches_the_apps_notifier() -> None:
    app = FakeApp()
    notifier, written, _ = make_notifier(app)
    app.notifier = notifier  # type: ignore[attr-defined]
    assert notify_attention(app, "plan", "a plan waits")
    assert written == ["\x1b]9;Smith: a plan waits\x07"]
    assert not notify_attention(object(), "plan", "no notifier: nothing")


def test_inside_tmux_without_passthrough_it_rings_the_bell() -> None:
    app = FakeApp()
    env = {"TMUX": "/tmp/x,1,0", "KITTY_WINDOW_ID": "1"}
    notifier, written, _ = make_notifier(app, env=env)
    notifier.passthrough = True
    notifier.attention("permission", "x")
    notifier.passthrough = False
    notifier.attention("permission", "y")
    assert written == ["\x1bPtmux;\x1b\x1b]9;Smith: x\x07\x1b\\", BEL]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tmux_is_asked_whether_it_forwards_passthrough(tmp_path: Path) -> None:
    socket = tmp_path / f"t-{uuid.uuid4().hex[:6]}"
    base = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    subprocess.run(
        ["tmux", "-S", str(socket), "new-session", "-d", "sleep 60"], check=True, env=base
    )
    try:
        env = dict(base, TMUX=f"{socket},1,0")
        assert tmux_allows_passthrough(env) is False  # tmux's default
        subprocess.run(["tmux", "-S", str(socket), "set", "-g", "allow-passthrough", "on"])
        assert tmux_allows_passthrough(env) is True
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], check=False)
    assert tmux_allows_passthrough(dict(base, PATH=str(tmp_path))) is False  # no tmux at all


# -- the config -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "path", "words"),
    [
        ({"mode": "loud"}, "notifications.mode", "'auto', 'bell' or 'off'"),
        ({"after_s": -1}, "notifications.after_s", "must be 0 or more"),
        ({"after_s": "10"}, "notifications.after_s", "number"),
        ({"sound": True}, "notifications.sound", "unknown setting"),
    ],
)
def test_bad_notification_settings_are_refused_clearly(
    table: dict[str, Any], path: str, words: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        check_config({"notifications": table})
    problem = caught.value.problems[0]
    assert problem.path == path
    assert words in problem.rule, problem.rule


def test_notification_settings_default_and_can_be_changed_in_config() -> None:
    config = check_config({})
    assert (config.notifications.mode, config.notifications.after_s) == ("auto", 10)
    assert check_config({"notifications": None}).notifications.mode == "auto"
    assert is_overridable_path("notifications.mode")
    assert is_overridable_path("notifications.after_s")


# -- the real smith on a pseudo-terminal ----------------------------------------------------

FOCUS_IN, FOCUS_OUT = b"\x1b[I", b"\x1b[O"
_OSC = re.compile(rb"\x1b\](9|777);([^\x07\x1b]*)\x07")
#: Any OSC string (Textual sends OSC 22, the pointer shape): its BEL ends it, rings nothing.
_ANY_OSC = re.compile(rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def notifications_in(data: bytes) -> list[str]:
    """Every notification in ``data``, in order: ``osc9:TEXT``, ``osc777:TEXT`` or ``bell``."""
    found = [f"osc{m.group(1).decode()}:{m.group(2).decode()}" for m in _OSC.finditer(data)]
    bells = _ANY_OSC.sub(b"", data).count(b"\x07")
    return found + ["bell"] * bells


def test_smith_on_a_pty_notifies_exactly_when_unfocused_and_waiting(
    tmp_path: Path, llm_server
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"notifications": {"after_s": 0}}), encoding="utf-8")

    # Turn k uses 101 * k tokens: the usage pane's caption "tokens/turn (…, max N)" shows
    # the new largest exactly when a turn ends, which tells the test that turn k is over.
    def used(total: int) -> dict[str, int]:
        return {"prompt_tokens": total - 1, "completion_tokens": 1, "total_tokens": total}

    bash = [tool_call("bash", {"command": "true"})]
    llm_server.enqueue(
        text_reply("ALPHAWORD ready", usage=used(101)),
        text_reply("BETAWORD ready", usage=used(202)),
        text_reply("GAMMAWORD ready", usage=used(303)),
        text_reply("DELTAWORD ready", usage=used(404)),
        text_reply("Look.", tool_calls=bash, usage=used(250)),
        text_reply("EPSILONWORD then", usage=used(255)),  # turn 5: 250 + 255
    )
    env = smith_env(tmp_path, TERM="xterm-256color", KITTY_WINDOW_ID="7")
    for name in ("TMUX", "TMUX_PANE", "TERM_PROGRAM", "VTE_VERSION"):
        env.pop(name, None)
    smith = PtySmith(server_args(llm_server.base_url, tmp_path / "s.db", config), project, env)
    steps: list[tuple[str, int, int]] = []

    turns_ended = 0

    def turn_over(since: int) -> int:
        nonlocal turns_ended
        turns_ended += 1
        return smith.wait_for(b"max %d)" % (101 * turns_ended), since)

    def notified(since: int) -> int:
        # The notification follows the turn's end on screen (by a frame or so): wait for it
        # where one is expected, or it lands in the next step's bytes.
        deadline = time.monotonic() + 20
        while not notifications_in(bytes(smith.output[since:])):
            assert time.monotonic() < deadline, "no notification came"
            smith._read(0.1)
        return len(smith.output)

    def turn(name: str, keys: bytes, *, expected: bool = False) -> None:
        start = smith.send(keys)
        end = turn_over(start)
        steps.append((name, start, notified(start) if expected else end))

    def answered(keys: bytes) -> tuple[int, int]:
        start = smith.send(keys)  # the user is back and denies (escape)
        return start, turn_over(start)

    def command(line: bytes, prefix: bytes = b"") -> None:
        # Typed, seen in the prompt, then sent (an enter typed with it could meet the
        # completion menu still open).
        smith.wait_for(line, smith.send(prefix + line))
        smith.wait_for(b"(saved)", smith.send(b"\r"))

    try:
        smith.wait_for(b"Ask Smith")
        # Enter then the focus-out report in one write: the key would give the focus back.
        turn("unfocused turn", b"one\r" + FOCUS_OUT, expected=True)
        turn("focused turn", FOCUS_IN + b"two\r")
        command(b"/config set notifications.mode off")
        turn("unfocused turn, mode off", b"three\r" + FOCUS_OUT)
        command(b"/config set notifications.mode bell", FOCUS_IN)
        turn("unfocused turn, mode bell", b"four\r" + FOCUS_OUT, expected=True)
        command(b"/config set notifications.mode auto", FOCUS_IN)
        start = smith.send(b"five\r" + FOCUS_OUT)
        smith.wait_for(b"deny with a reason", start)
        steps.append(("unfocused question", start, notified(start)))
        steps.append(("answered, the turn ends", *answered(FOCUS_IN + b"\x1b")))
        smith.send(b"\x11")  # ctrl+q
        smith.process.wait(timeout=15)
    finally:
        smith.close()
    output = bytes(smith.output)
    seen = {
        name: [re.sub(r"\(\d+ s\)", "(N s)", found) for found in notifications_in(output[a:b])]
        for name, a, b in steps
    }
    assert seen == {
        "unfocused turn": ["osc9:Smith: the turn is done (N s)"],
        "focused turn": [],
        "unfocused turn, mode off": [],
        "unfocused turn, mode bell": ["bell"],
        "unfocused question": ["osc9:Smith: bash asks for permission"],
        "answered, the turn ends": [],
    }, seen
    assert len(notifications_in(output)) == 3  # and none anywhere else

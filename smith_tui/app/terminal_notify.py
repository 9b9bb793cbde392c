"""Tell the terminal that Smith needs the user, while the user looks elsewhere.

A permission question that opens, a plan that waits for approval, or a turn that ends
after running longer than ``notifications.after_s`` sends a notification, but only while
the terminal does not have the focus (Textual follows the terminal's focus reports:
``app.app_focus``). What is sent depends on ``notifications.mode`` and the terminal:
OSC 9 (kitty, WezTerm, iTerm2, Ghostty), OSC 777 (foot, rxvt), else the bell (BEL).
Inside tmux an OSC goes through tmux's DCS passthrough, which tmux forwards only with
``allow-passthrough`` on; Smith asks tmux once and rings the bell when it is off.

The text can hold outside words (a tool's name, a conversation title the model chose):
it passes :func:`~smith_tui.terminal_text.visible` and loses line breaks and the OSC
separators, so nothing in it can end the sequence or start another. The bytes go out
through Textual's driver (the terminal's one writer), as the Kitty-graphics rain's do.
This module knows nothing of the engine: the app hands it events by their ``type`` name.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from smith_tui.terminal_text import visible
from smith_tui.widgets.textual_compat import terminal_driver

Style = Literal["osc9", "osc777", "bell"]

BEL = "\x07"
#: The longest notification text sent (a terminal shows a line or two anyway).
MAX_TEXT = 160
#: Kinds sent at most once per turn: a plan presented at the end of a long turn notifies
#: once (as the plan), and a turn that already called the user does not again as it ends.
ONCE_PER_TURN = frozenset({"plan", "turn"})

#: How a turn that did not simply complete ended, in a notification.
_OUTCOMES = {"error": "stopped with an error", "budget_exhausted": "stopped at its budget"}
_OSC9_PROGRAMS = frozenset({"wezterm", "iterm.app", "ghostty", "kitty"})
_OSC9_MARKERS = ("KITTY_WINDOW_ID", "WEZTERM_PANE", "ITERM_SESSION_ID", "GHOSTTY_RESOURCES_DIR")
_OSC777_TERMS = ("foot", "rxvt", "urxvt")


def notification_style(env: Mapping[str, str]) -> Style:
    """Which notification the terminal understands, from its environment.

    Inside tmux ``TERM`` and ``TERM_PROGRAM`` name tmux, so the variables the outer
    terminal sets (and tmux's server inherits) are looked at first.
    """
    if any(env.get(name) for name in _OSC9_MARKERS) or env.get("LC_TERMINAL") == "iTerm2":
        return "osc9"
    program = env.get("TERM_PROGRAM", "").strip().lower()
    term = env.get("TERM", "").strip().lower()
    if program in _OSC9_PROGRAMS or term in ("xterm-kitty", "xterm-ghostty", "wezterm"):
        return "osc9"
    if term.startswith(_OSC777_TERMS):
        return "osc777"
    return "bell"


def safe_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` fit to sit inside an OSC string: controls shown (never obeyed), line breaks
    and tabs as spaces, ``;`` (OSC 777's separator) as ``,``, at most ``limit`` characters."""
    shown = visible(text).replace(";", ",")
    flat = " ".join(shown.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def osc9(text: str) -> str:
    """An OSC 9 desktop notification carrying ``text`` (made safe)."""
    return f"\x1b]9;{safe_text(text)}{BEL}"


def osc777(title: str, body: str) -> str:
    """An OSC 777 ``notify`` with ``title`` and ``body`` (both made safe)."""
    return f"\x1b]777;notify;{safe_text(title)};{safe_text(body)}{BEL}"


def tmux_passthrough(sequence: str) -> str:
    """``sequence`` wrapped in tmux's DCS passthrough (every ESC in it doubled)."""
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def notification_bytes(style: Style, text: str, *, tmux: bool = False) -> str:
    """What to write for a notification of ``style`` saying ``text`` (``"Smith: …"``).

    A bell needs no passthrough: tmux handles a pane's bell itself (``bell-action``).
    """
    if style == "bell":
        return BEL
    sequence = osc9(f"Smith: {text}") if style == "osc9" else osc777("Smith", text)
    return tmux_passthrough(sequence) if tmux else sequence


def tmux_allows_passthrough(env: Mapping[str, str], timeout: float = 2.0) -> bool:
    """Whether the tmux around us forwards passthrough sequences (``allow-passthrough``
    on or all, for our pane). False when tmux cannot be asked."""
    command = ["tmux", "show-options", "-Apv"]
    if env.get("TMUX_PANE"):
        command += ["-t", env["TMUX_PANE"]]
    try:
        answer = subprocess.run(
            [*command, "allow-passthrough"],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=dict(env),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return answer.returncode == 0 and answer.stdout.strip() in ("on", "all")


class Notifier:
    """Sends the app's notifications; :func:`notify_attention` reaches it from a screen.

    ``settings()`` gives the ``notifications`` table in effect (read at each use, so a
    ``/config`` change applies at once); ``title()`` the conversation's title, named when
    a turn ends; ``write`` takes the bytes (default: the app's terminal driver).
    """

    def __init__(
        self,
        app: Any,
        settings: Callable[[], Any],
        *,
        title: Callable[[], str] = lambda: "",
        env: Mapping[str, str] | None = None,
        write: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.settings = settings
        self.title = title
        self.env = dict(os.environ if env is None else env)
        self.style = notification_style(self.env)
        self.in_tmux = bool(self.env.get("TMUX"))
        self.passthrough: bool | None = None
        """Whether tmux forwards passthrough (None: not asked yet, or not in tmux)."""
        self._write = write
        self._clock = clock
        self._turn_started: float | None = None
        self._this_turn: set[str] = set()
        """The kinds notified since the last top-level turn started."""
        self.sent: list[tuple[str, str]] = []
        """``(kind, text)`` of every notification sent, oldest first."""

    def start(self) -> None:
        """Ask tmux about passthrough (in a thread) when an OSC would need it."""
        if self.in_tmux and self.style != "bell":
            self.app.run_worker(self._ask_tmux, thread=True, group="notify", exit_on_error=False)

    def _ask_tmux(self) -> None:
        self.passthrough = tmux_allows_passthrough(self.env)

    # -- what happens -----------------------------------------------------------------------

    def follow(self, events: Iterable[Any]) -> None:
        """Follow the top-level turns in engine events (by their ``type`` name): a plan
        presented notifies; a turn that ends after ``after_s`` does, unless it already
        called the user or the user cancelled it (they are there)."""
        for event in events:
            kind = getattr(event, "type", "")
            if getattr(event, "job_id", None) is not None:
                continue
            if kind == "turn_started":
                self._turn_started = self._clock()
                self._this_turn = set()
            elif kind == "plan_presented":
                self.attention("plan", "a plan waits for your approval")
            elif kind == "turn_finished" and self._turn_started is not None:
                took = self._clock() - self._turn_started
                self._turn_started = None
                stop_reason = str(getattr(event, "stop_reason", ""))
                if (
                    took > self._setting("after_s", 10.0)
                    and stop_reason != "cancelled"
                    and not self._this_turn
                ):
                    self.attention("turn", self._finished_text(stop_reason, took))

    def _finished_text(self, stop_reason: str, took: float) -> str:
        title = self.title().strip()
        outcome = _OUTCOMES.get(stop_reason, "is done")
        return f"the turn {outcome} ({round(took)} s)" + (f": {title}" if title else "")

    def attention(self, kind: str, text: str) -> bool:
        """Notify that ``kind`` (``permission``, ``plan``, ``turn``…) waits, saying
        ``text``; True when something was sent: the terminal does not have the focus, the
        mode is not off, and a kind of :data:`ONCE_PER_TURN` was not sent in this turn."""
        mode = self._setting("mode", "auto")
        if mode == "off" or getattr(self.app, "app_focus", True):
            return False
        if kind in ONCE_PER_TURN and kind in self._this_turn:
            return False
        style: Style = "bell" if mode == "bell" else self.style
        if style != "bell" and self.in_tmux and self.passthrough is False:
            style = "bell"  # tmux would drop the passthrough
        self._emit(notification_bytes(style, text, tmux=self.in_tmux))
        self._this_turn.add(kind)
        self.sent.append((kind, text))
        return True

    def _setting(self, name: str, default: Any) -> Any:
        try:
            return getattr(self.settings(), name)
        except Exception:  # no config yet (the runtime is opening)
            return default

    def _emit(self, data: str) -> None:
        if self._write is not None:
            self._write(data)
            return
        driver = terminal_driver(self.app)
        if driver is not None:
            driver.write(data)


def notify_attention(app: Any, kind: str, text: str) -> bool:
    """Notify through ``app``'s notifier (``app.notifier``) that ``kind`` waits for the
    user (the plan screen: ``notify_attention(app, "plan", "a plan waits for approval")``).

    False when nothing was sent: the terminal has the focus, notifications are off, the
    app has no notifier (not running, or before the session opened).
    """
    notifier = getattr(app, "notifier", None)
    return notifier.attention(kind, text) if isinstance(notifier, Notifier) else False

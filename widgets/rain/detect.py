"""Does this terminal speak the Kitty graphics protocol?

The answer comes, in order, from: an explicit setting (config), a multiplexer check
(tmux/screen swallow or misplace graphics, so they count as "no" unless the setting
says "on"), the terminal's reply to :func:`graphics_query` when the caller probed it,
and finally environment heuristics (kitty, WezTerm, Ghostty).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

QUERY_IMAGE_ID = 31
"""Image id of the probe; the terminal's answer names it."""
_KITTY_PROGRAMS = frozenset({"wezterm", "ghostty"})
_SETTINGS = {
    "auto": None,
    "on": True,
    "true": True,
    "yes": True,
    "1": True,
    "off": False,
    "false": False,
    "no": False,
    "0": False,
}
_DA1_REPLY = re.compile(r"\x1b\[\?[0-9;]*c")


def parse_graphics_setting(value: str | bool | None) -> bool | None:
    """Read a config value: ``"auto"``/None → None (detect), ``"on"``/True, ``"off"``/False.

    Raises ValueError naming the accepted words for anything else.
    """
    if value is None or isinstance(value, bool):
        return value
    key = str(value).strip().lower()
    if key not in _SETTINGS:
        raise ValueError(f"the Kitty graphics setting must be one of auto, on, off (got {value!r})")
    return _SETTINGS[key]


def in_multiplexer(env: Mapping[str, str]) -> bool:
    """Whether we run inside tmux or GNU screen."""
    term = env.get("TERM", "")
    return bool(env.get("TMUX") or env.get("STY")) or term.startswith(("tmux", "screen"))


def graphics_query() -> str:
    """The probe to write to the terminal: a 1×1 query command followed by a DA1 request.

    A terminal with graphics answers the query (``ESC _ G i=31;OK ESC \\``) before it
    answers DA1; one without answers DA1 only.
    """
    return f"\x1b_Gi={QUERY_IMAGE_ID},s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\\x1b[c"


def parse_query_reply(reply: str) -> bool | None:
    """What the terminal's reply to :func:`graphics_query` says: True, False, or None (no answer yet)."""
    match = re.search(rf"\x1b_Gi={QUERY_IMAGE_ID}(?:,[^;]*)?;([^\x1b]*)\x1b\\", reply)
    if match is not None:
        return match.group(1) == "OK"
    if _DA1_REPLY.search(reply):
        return False
    return None


def kitty_graphics_supported(
    env: Mapping[str, str],
    term_query: str | None = None,
    *,
    override: str | bool | None = None,
) -> bool:
    """Whether to draw the rain with Kitty graphics.

    ``env`` is the process environment; ``term_query`` the terminal's reply to
    :func:`graphics_query` if the caller probed; ``override`` the config setting
    (``"auto"``, ``"on"``, ``"off"`` or a bool; ValueError for anything else).
    """
    setting = parse_graphics_setting(override)
    if setting is not None:
        return setting
    if in_multiplexer(env):
        return False
    if term_query is not None:
        answer = parse_query_reply(term_query)
        if answer is not None:
            return answer
    term = env.get("TERM", "")
    if term == "dumb":
        return False
    return bool(
        env.get("KITTY_WINDOW_ID")
        or term == "xterm-kitty"
        or env.get("TERM_PROGRAM", "").strip().lower() in _KITTY_PROGRAMS
    )


def shm_transfer_usable(env: Mapping[str, str], shm_dir: str = "/dev/shm") -> bool:
    """Whether shared-memory frames can reach the terminal: a local session and a writable shm dir.

    Over SSH the terminal runs on another machine and cannot open our shared memory.
    """
    if env.get("SSH_CONNECTION") or env.get("SSH_TTY") or env.get("SSH_CLIENT"):
        return False
    return os.path.isdir(shm_dir) and os.access(shm_dir, os.W_OK | os.X_OK)

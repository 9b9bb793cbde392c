"""The ``notifications`` table: when Smith tells the terminal that it needs the user.

What is sent (OSC 9, OSC 777 or a bell) and when is :mod:`smith_tui.app.terminal_notify`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from smith_tui.config.section import Section

NotificationMode = Literal["auto", "bell", "off"]


class NotificationsConfig(Section):
    """Terminal notifications while the terminal does not have the focus."""

    mode: NotificationMode = Field(
        "auto",
        description=(
            "'auto': a desktop notification where the terminal offers one (OSC 9: kitty, "
            "WezTerm, iTerm2, Ghostty; OSC 777: foot, rxvt), else the bell; 'bell': always "
            "the bell; 'off': never. Sent only while the terminal does not have the focus."
        ),
    )
    after_s: float = Field(
        10,
        ge=0,
        le=86400,
        description=(
            "A turn that ends after running longer than this many seconds notifies "
            "(permission questions and plans waiting for approval always do)."
        ),
    )

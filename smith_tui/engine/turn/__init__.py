"""One turn of the agent (docs/DESIGN.md §5.5): the loop and the driver that runs it."""

from __future__ import annotations

from smith_tui.engine.turn.driver import TurnDriver
from smith_tui.engine.turn.loop import (
    CHILD_REPEAT_LIMIT,
    TOP_REPEAT_LIMIT,
    TurnLoop,
    TurnResult,
    TurnSettings,
)

__all__ = [
    "CHILD_REPEAT_LIMIT",
    "TOP_REPEAT_LIMIT",
    "TurnDriver",
    "TurnLoop",
    "TurnResult",
    "TurnSettings",
]

"""One turn of the agent (docs/DESIGN.md §5.5), top-level or dispatched.

:mod:`~smith_tui.engine.turn.frame` holds the two objects a turn runs on (:class:`Turn`,
:class:`TurnServices`); :mod:`~smith_tui.engine.turn.driver` runs a turn from its start to
its record; :mod:`~smith_tui.engine.turn.loop` is the tool loop, which asks its model
(:mod:`~smith_tui.engine.turn.model_requests`), runs the calls
(:mod:`~smith_tui.engine.turn.calls`) past the guards
(:mod:`~smith_tui.engine.turn.guards`) and ends with a :class:`Stop`
(:mod:`~smith_tui.engine.turn.stop`).
"""

from __future__ import annotations

from smith_tui.engine.turn.driver import TurnDriver
from smith_tui.engine.turn.frame import Turn, TurnServices
from smith_tui.engine.turn.loop import TurnLoop
from smith_tui.engine.turn.settings import CHILD_REPEAT_LIMIT, TOP_REPEAT_LIMIT, TurnSettings
from smith_tui.engine.turn.stop import Stop, TurnResult

__all__ = [
    "CHILD_REPEAT_LIMIT",
    "TOP_REPEAT_LIMIT",
    "Stop",
    "Turn",
    "TurnDriver",
    "TurnLoop",
    "TurnResult",
    "TurnServices",
    "TurnSettings",
]

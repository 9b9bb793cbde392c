"""What may stop a turn: each guard is asked before a request and before each call.

:class:`Cancellation`, :class:`SpendLimit`, :class:`StepBudget` and :class:`RepeatGuard`
each answer a :class:`~smith_tui.engine.turn.stop.Stop` or ``None``; :class:`Guards` asks
them in that order. A guard also hears of each call that was let through
(:meth:`Guard.admitted`) and of each result (:meth:`Guard.finished`).
"""

from __future__ import annotations

import json

from smith_tui.cancel import CancelToken
from smith_tui.engine.spend_limits import SpendMeter
from smith_tui.engine.turn.stop import Stop
from smith_tui.llm import ToolCall
from smith_tui.llm.nesting import load_json
from smith_tui.tools.spec import ToolResult


class Guard:
    """One reason a turn may stop; every check lets the turn go on unless overridden."""

    def before_request(self) -> Stop | None:
        """Whether the turn stops instead of sending its next request."""
        return None

    def before_call(self, call: ToolCall) -> Stop | None:
        """Whether the turn stops instead of running ``call``."""
        return None

    def admitted(self, call: ToolCall) -> None:
        """Every guard let ``call`` through; it will run."""

    def finished(self, call: ToolCall, result: ToolResult) -> None:
        """``call`` ran and answered ``result``."""


class Cancellation(Guard):
    """Stops the turn once it is cancelled."""

    def __init__(self, cancel: CancelToken) -> None:
        self.cancel = cancel

    def before_request(self) -> Stop | None:
        return Stop.cancelled() if self.cancel.is_cancelled() else None

    def before_call(self, call: ToolCall) -> Stop | None:
        return self.before_request()


class SpendLimit(Guard):
    """Stops the turn before a request once the ``budget`` token or cost limit is reached
    (the top-level turn's meter, shared by its children)."""

    def __init__(self, spend: SpendMeter | None) -> None:
        self.spend = spend

    def before_request(self) -> Stop | None:
        spent = self.spend.exhausted() if self.spend is not None else None
        return Stop.spent(spent) if spent is not None else None


class StepBudget(Guard):
    """Stops the turn when it has run its tool step budget of calls (``None``: no limit)."""

    def __init__(self, budget: int | None, *, child: bool) -> None:
        self.budget = budget
        self.child = child
        self.used = 0

    def before_call(self, call: ToolCall) -> Stop | None:
        if self.budget is not None and self.used >= self.budget:
            return Stop.steps_used_up(self.budget, child=self.child)
        return None

    def admitted(self, call: ToolCall) -> None:
        self.used += 1


def repeat_key(call: ToolCall) -> str:
    """Identify a call by name and arguments (JSON arguments compared by value)."""
    arguments = call.arguments
    try:
        arguments = json.dumps(load_json(arguments), sort_keys=True)
    except (TypeError, ValueError):
        pass
    return json.dumps([call.name, arguments])


class RepeatGuard(Guard):
    """Stops the turn when the same call comes ``limit`` times in a row, or is asked for
    again after ``limit - 1`` denials by the permission gate in this turn (other calls
    between them or not)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.key: str | None = None
        self.count = 0
        self.denied: dict[str, int] = {}
        """Times each call (name and arguments) was refused by the permission gate."""

    def before_call(self, call: ToolCall) -> Stop | None:
        key = repeat_key(call)
        if key == self.key:
            self.count += 1
        else:
            self.key, self.count = key, 1
        denied = self.denied.get(key, 0)
        if not self.limit or max(self.count, denied + 1) < self.limit:
            return None
        if denied + 1 > self.count:
            message = (
                f"stopped: {call.name} was asked for again with the same arguments after "
                f"{denied} denials in this turn"
            )
        else:
            message = (
                f"stopped: {call.name} was called {self.count} times "
                "in a row with the same arguments"
            )
        return Stop.repeated(message)

    def finished(self, call: ToolCall, result: ToolResult) -> None:
        if result.metadata.get("error_code") == "permission_denied":
            key = repeat_key(call)
            self.denied[key] = self.denied.get(key, 0) + 1


class Guards:
    """The guards of one turn, asked in order; the first stop wins."""

    def __init__(self, *guards: Guard) -> None:
        self.guards = guards

    def before_request(self) -> Stop | None:
        """The stop that comes before the next request, if any."""
        return next((s for g in self.guards if (s := g.before_request()) is not None), None)

    def admit(self, call: ToolCall) -> Stop | None:
        """The stop that comes before ``call``, if any; else every guard hears it runs."""
        for guard in self.guards:
            stop = guard.before_call(call)
            if stop is not None:
                return stop
        for guard in self.guards:
            guard.admitted(call)
        return None

    def finished(self, call: ToolCall, result: ToolResult) -> None:
        """Tell every guard what ``call`` answered."""
        for guard in self.guards:
            guard.finished(call, result)

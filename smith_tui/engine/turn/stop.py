"""How a turn stops: one :class:`Stop` value, and the :class:`TurnResult` it ends with.

A :class:`Stop` knows its stop reason, the status it shows, the error the user reads, and
the result of each call of the round that it did not run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from smith_tui.engine import events as ev
from smith_tui.engine.errors import AgentError, normalize
from smith_tui.llm import ToolCall
from smith_tui.tools.spec import ToolResult


@dataclass(frozen=True)
class Stop:
    """Why a turn ends (or a round stops running its calls)."""

    reason: ev.StopReason
    error: AgentError | None = None
    """What the user reads (``None``: the turn completed)."""
    not_run: str = ""
    """Why a call after the stop did not run (its result's error)."""
    not_run_code: str = ""
    tripped: str | None = None
    """The error of the call that tripped the stop, when it differs from ``not_run``."""
    terminal: ToolResult | None = None
    """The terminal tool's result that ended the turn (a sub-agent's ``report``)."""
    loop_detected: str | None = None

    @property
    def status(self) -> ev.Status:
        """The status the turn shows once stopped."""
        if self.reason == "completed":
            return "idle"
        return "cancelled" if self.reason == "cancelled" else "error"

    def skipped(self, call: ToolCall, *, tripped: bool = False) -> ToolResult:
        """The result of ``call``, which did not run because of this stop (``tripped``: it
        is the call the stop refused)."""
        reason = self.tripped if tripped and self.tripped else self.not_run
        return not_run(call, reason, self.not_run_code)

    # -- the ways a turn stops ------------------------------------------------------------
    @classmethod
    def completed(cls) -> Stop:
        """The model answered without calls (or a hand-off ran)."""
        return cls("completed")

    @classmethod
    def cancelled(cls) -> Stop:
        """The turn was cancelled."""
        return cls(
            "cancelled",
            normalize("cancelled"),
            not_run="the turn was cancelled before this call ran",
            not_run_code="cancelled",
        )

    @classmethod
    def failed(cls, error: AgentError) -> Stop:
        """A model request failed (or was cancelled while it ran)."""
        return cls("cancelled" if error.kind == "cancelled" else "error", error)

    @classmethod
    def spent(cls, message: str) -> Stop:
        """The ``budget`` token or cost limit is reached."""
        return cls("budget_exhausted", AgentError("budget_exhausted", "budget_exhausted", message))

    @classmethod
    def steps_used_up(cls, budget: int, *, child: bool) -> Stop:
        """The tool step budget is used up."""
        if child:
            how = "raise services.dispatch.child_step_budget in the config file"
        else:
            how = "raise it with /config set tool_step_budget N"
        return cls(
            "budget_exhausted",
            AgentError(
                "budget_exhausted",
                "budget_exhausted",
                f"the tool step budget ({budget}) is used up; {how}",
            ),
            not_run="the tool step budget is used up; this call did not run",
            not_run_code="budget_exhausted",
        )

    @classmethod
    def repeated(cls, message: str) -> Stop:
        """The same call came too often (the repeat guard)."""
        return cls(
            "error",
            AgentError("policy", "repeated_tool_call", message),
            not_run="not run: the turn was stopped for repeating a call",
            not_run_code="repeated_call",
            tripped=message,
            loop_detected=message,
        )

    @classmethod
    def ended_by(cls, result: ToolResult) -> Stop:
        """A terminal tool ran: the turn is complete."""
        return cls(
            "completed",
            terminal=result,
            not_run="not run: the turn already ended with a terminal tool",
            not_run_code="skipped",
        )


@dataclass
class TurnResult:
    """How a turn ended."""

    stop_reason: ev.StopReason
    text: str = ""
    error: AgentError | None = None
    terminal: ToolResult | None = None
    rounds: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    loop_detected: str | None = None


def not_run(call: ToolCall, reason: str, code: str) -> ToolResult:
    """The result of a call that did not run."""
    return ToolResult(
        call_id=call.id,
        name=call.name,
        ok=False,
        content=f"error: {reason}",
        error=reason,
        cancelled=code == "cancelled",
        metadata={"error_code": code},
    )

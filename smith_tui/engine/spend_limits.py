"""Spending limits of a turn and its conversation: tokens and dollars (``budget.*``).

One :class:`SpendMeter` follows a top-level turn and every sub-agent it dispatches (a
child's spend counts toward its parent's). The loop adds each model call's usage
(:meth:`SpendMeter.add`) and asks, before every request, whether a limit is reached
(:meth:`SpendMeter.exhausted`); the turn then stops with ``budget_exhausted`` and a
message naming the limit and how to raise it. Crossing :data:`WARN_SHARE` of a limit
emits :class:`~smith_tui.engine.events.BudgetWarning` once (also when one call goes from
below that share straight past the limit: the warning then comes just before the stop); every change emits
:class:`~smith_tui.engine.events.BudgetUpdated` so front ends can show spend against
each limit.

A call's cost is what the provider reported (``usage.cost``), else its tokens at the
catalog's prices (:func:`call_cost`), else unknown (counted as nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from smith_tui.config import SmithConfig
from smith_tui.engine import events as ev

#: Share of a limit from which the front end is warned.
WARN_SHARE = 0.8


@dataclass(frozen=True)
class Limit:
    """One kind of limit: its config key, what it counts and how to raise it."""

    key: str
    label: str
    scope: str
    """``turn`` or ``conversation``."""
    unit: str
    """``tokens`` or ``usd``."""
    flag: str | None = None
    """The headless flag that sets it for one run."""


LIMITS: tuple[Limit, ...] = (
    Limit("turn_tokens", "turn tokens", "turn", "tokens", "--max-tokens"),
    Limit("conversation_tokens", "conversation tokens", "conversation", "tokens"),
    Limit("turn_cost_usd", "turn cost", "turn", "usd", "--max-cost"),
    Limit("conversation_cost_usd", "conversation cost", "conversation", "usd"),
)


def read_limits(config: SmithConfig) -> dict[str, float]:
    """The limits set under ``budget`` in ``config``, by key (absent ones left out)."""
    table = config.budget
    return {
        limit.key: float(value)
        for limit in LIMITS
        if (value := getattr(table, limit.key)) is not None
    }


def call_cost(usage: Mapping[str, Any] | Any, pricing: Mapping[str, float] | None) -> float | None:
    """The dollars one model call cost: the provider's ``cost`` when it reported one,
    else its tokens at ``pricing`` (``prompt``/``completion`` dollars per token), else None."""
    if usage is None:
        return None
    get = usage.get if isinstance(usage, Mapping) else lambda k, d=None: getattr(usage, k, d)
    reported = get("cost", None)
    if isinstance(reported, int | float) and not isinstance(reported, bool):
        return float(reported)
    if not pricing or not ("prompt" in pricing or "completion" in pricing):
        return None
    inp = int(get("input_tokens", 0) or 0)
    out = int(get("output_tokens", 0) or 0)
    return inp * float(pricing.get("prompt", 0.0)) + out * float(pricing.get("completion", 0.0))


def format_amount(unit: str, value: float) -> str:
    """``12,345 tokens`` or ``$0.0123``."""
    if unit == "usd":
        return f"${value:.4f}" if value < 0.01 else f"${value:.2f}"
    return f"{int(value):,} tokens"


class SpendMeter:
    """The spend of one top-level turn (sub-agents included) against the ``budget`` limits.

    ``conversation_tokens``/``conversation_cost`` are what the conversation had spent
    before the turn began.
    """

    def __init__(
        self,
        limits: Mapping[str, float],
        *,
        turn_id: str,
        emit: Callable[[ev.Event], None],
        role: str = "direct",
        conversation_tokens: int = 0,
        conversation_cost: float = 0.0,
    ) -> None:
        self.limits = dict(limits)
        self.turn_id = turn_id
        self.emit = emit
        self.role = role
        self.turn_tokens = 0
        self.turn_cost = 0.0
        self.before_tokens = conversation_tokens
        self.before_cost = conversation_cost
        self.unpriced = False
        """Whether some call had neither a reported cost nor a catalog price."""
        self.warned: set[str] = set()

    def used(self, key: str) -> float:
        """What counts against the limit ``key`` so far."""
        return {
            "turn_tokens": self.turn_tokens,
            "conversation_tokens": self.before_tokens + self.turn_tokens,
            "turn_cost_usd": self.turn_cost,
            "conversation_cost_usd": self.before_cost + self.turn_cost,
        }[key]

    def spend(self) -> dict[str, dict[str, float]]:
        """``{key: {"used", "limit"}}`` for every limit that is set."""
        return {
            limit.key: {"used": self.used(limit.key), "limit": self.limits[limit.key]}
            for limit in LIMITS
            if limit.key in self.limits
        }

    def add(self, tokens: int, cost: float | None, *, job_id: str | None = None) -> None:
        """Count one model call (of the turn or one of its sub-agents)."""
        self.turn_tokens += max(0, int(tokens))
        if cost is None:
            self.unpriced = self.unpriced or tokens > 0
        else:
            self.turn_cost += max(0.0, float(cost))
        if not self.limits:
            return
        for limit in LIMITS:
            maximum = self.limits.get(limit.key)
            if maximum is None or limit.key in self.warned:
                continue
            used = self.used(limit.key)
            # Also when one call jumps from below the share past the limit: the
            # warning then comes with the stop instead of being skipped.
            if used >= WARN_SHARE * maximum:
                self.warned.add(limit.key)
                message = (
                    f"{round(100 * used / maximum)}% of the {limit.label} budget used "
                    f"({format_amount(limit.unit, used)} of "
                    f"{format_amount(limit.unit, maximum)}, budget.{limit.key})"
                )
                if used >= maximum:
                    message += f"; the limit is reached: no further request in this {limit.scope}"
                self.emit(
                    ev.BudgetWarning(
                        turn_id=self.turn_id,
                        limit=limit.key,
                        used=used,
                        maximum=maximum,
                        message=message,
                        role=self.role,
                        job_id=job_id,
                    )
                )
        self.emit(
            ev.BudgetUpdated(
                turn_id=self.turn_id,
                spend=self.spend(),
                unpriced=self.unpriced,
                role=self.role,
                job_id=job_id,
            )
        )

    def exhausted(self) -> str | None:
        """The message naming the first limit reached, or None while all have room."""
        for limit in LIMITS:
            maximum = self.limits.get(limit.key)
            if maximum is None:
                continue
            used = self.used(limit.key)
            if used < maximum:
                continue
            how = f"/config set budget.{limit.key} N"
            if limit.flag:
                how += f" (headless: {limit.flag} N)"
            if limit.scope == "conversation":
                how += ", or start a new conversation (/new)"
            return (
                f"the {limit.label} budget is used up: {format_amount(limit.unit, used)} of "
                f"{format_amount(limit.unit, maximum)} (budget.{limit.key}). Raise it with {how}."
            )
        return None

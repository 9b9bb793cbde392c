"""``usage_update`` after each LLM request: the context in use against the window, and the
session's cost so far.

The figures are the ones the TUI's usage pane shows, from the same event
(:class:`~smith_tui.engine.events.UsageUpdated`): the context follows the last top-level
request, the cost adds every request's (sub-agents' too: the provider's reported cost, else
the catalog's prices). ``_meta.smith.text`` says it in the pane's words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp.schema import Cost, UsageUpdate

from smith_tui.engine import events as ev
from smith_tui.engine.usage_ledger import format_cost, format_tokens


class UsageReporter:
    """Turns ``UsageUpdated`` events into ``usage_update`` session updates."""

    def __init__(self, send: Callable[[Any], None]) -> None:
        self.send = send
        self.used = 0
        self.size = 0
        self.cost = 0.0
        self.priced = False
        """Some request had a cost (otherwise none is sent: unknown is not free)."""

    def __call__(self, event: ev.Event) -> None:
        if not isinstance(event, ev.UsageUpdated):
            return
        if event.cost is not None:
            self.cost += event.cost
            self.priced = True
        if event.job_id is None:
            self.used = max(0, int(event.context_tokens))
            self.size = max(0, int(event.context_window))
        self.send(
            UsageUpdate(
                session_update="usage_update",
                used=self.used,
                size=self.size,
                cost=Cost(amount=self.cost, currency="USD") if self.priced else None,
                field_meta={"smith": {"text": self.text(), "model": event.model}},
            )
        )

    def text(self) -> str:
        """``context 12k / 128k · $0.0012`` (the usage pane's formatters)."""
        context = (
            f"context {format_tokens(self.used)} / {format_tokens(self.size)}"
            if self.size
            else "context —"
        )
        return f"{context} · {format_cost(self.cost)}" if self.priced else context

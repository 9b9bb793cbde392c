"""The event bus: front ends subscribe, the engine emits (docs/DESIGN.md §4)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from smith_tui.engine import events as ev

log = logging.getLogger(__name__)

Subscriber = Callable[[ev.Event], None]


class EventBus:
    """Delivers every event to every subscriber, in the order they subscribed.

    A subscriber that raises is logged (with the event type) and skipped: a broken
    front end must not break the turn that emitted the event.
    """

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(event)`` for every event; returns an unsubscribe function."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def emit(self, event: ev.Event) -> None:
        """Deliver ``event`` to every subscriber."""
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:
                log.exception("an event subscriber failed on %s; it is skipped", event.type)

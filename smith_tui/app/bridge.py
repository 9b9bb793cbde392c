"""Engine events into Textual: buffer, coalesce, deliver as one message per frame.

The runtime calls :class:`EventBridge` (a plain subscriber callback) for every event, from
the app's event loop or from another thread. Events wait in a buffer that is flushed at most
:data:`FRAME_S` after the first one arrived; adjacent text, reasoning and tool-output deltas
of the same stream are merged as they arrive, so a fast stream costs one Textual message per
frame rather than one per token. Tool output is cut to the tail that can still show
(:func:`~smith_tui.widgets.output_tail.tail_text`): a tool printing megabytes leaves a few
kilobytes waiting for the screen, whatever the screen's pace.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable

from textual.message import Message
from textual.message_pump import MessagePump

from smith_tui.engine import events as ev
from smith_tui.widgets.event_batches import append_merged
from smith_tui.widgets.event_batches import (
    coalesce as coalesce,  # the bridge's merge, also for tests
)

#: Seconds between two deliveries (about 30 frames per second).
FRAME_S = 1 / 30


class EngineEventsArrived(Message):
    """A batch of engine events, in the order the engine emitted them."""

    def __init__(self, events: list[ev.Event]) -> None:
        super().__init__()
        self.events = events


class EventBridge:
    """A runtime subscriber that delivers coalesced batches to ``target`` as messages."""

    def __init__(self, target: MessagePump, frame_s: float = FRAME_S) -> None:
        self.target = target
        self.frame_s = frame_s
        self._buffer: deque[ev.Event] = deque()
        self._lock = threading.Lock()
        self._scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self.delivered_batches = 0
        """How many messages were posted (for tests and benchmarks)."""

    def attach(self, subscribe: Callable[[Callable[[ev.Event], None]], Callable[[], None]]) -> None:
        """Subscribe to the runtime; call from the app's event loop."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._unsubscribe = subscribe(self)

    def detach(self) -> None:
        """Unsubscribe and drop anything still buffered."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._lock:
            self._buffer.clear()

    def __call__(self, event: ev.Event) -> None:
        """Receive one event (from any thread)."""
        with self._lock:
            append_merged(self._buffer, event)
            if self._scheduled:
                return
            self._scheduled = True
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        if threading.get_ident() == self._thread:
            loop.call_later(self.frame_s, self.flush)
        else:
            loop.call_soon_threadsafe(loop.call_later, self.frame_s, self.flush)

    def flush(self) -> None:
        """Deliver everything buffered as one :class:`EngineEventsArrived` (if any)."""
        with self._lock:
            batch = list(self._buffer)
            self._buffer.clear()
            self._scheduled = False
        if batch:
            self.delivered_batches += 1
            self.target.post_message(EngineEventsArrived(batch))

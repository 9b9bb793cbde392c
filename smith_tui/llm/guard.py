"""Watches a running request for cancellation, stalls and deadlines.

The watchdog lives beside the task doing the I/O. When the caller's cancel
token fires, when no SSE line arrived for ``stall`` seconds (seconds the event loop was
held up by other work do not count: nothing could be read then), or when the
deadline passes, it cancels that task; the client then turns the
``CancelledError`` into an :class:`LLMError` (see :meth:`Watchdog.reason`).
This reaches the task wherever it waits - connecting, waiting for headers or
blocked on a silent socket - so cancelling returns promptly even mid-stall.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

CANCELLED = "cancelled"
STALLED = "stalled"
DEADLINE = "deadline"


class Watchdog:
    """Cancels ``task`` on cancel-token / stall / deadline; records why in :attr:`reason`."""

    def __init__(
        self,
        cancel: Any = None,
        *,
        stall: float | None = None,
        deadline: float | None = None,
        task: asyncio.Task[Any] | None = None,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = task or asyncio.current_task()
        self._cancel = cancel
        self._stall = stall
        self._deadline = None if deadline is None else self._loop.time() + deadline
        self.reason: str | None = None
        self._stopped = False
        self.started = False  # set by the client once response headers arrived
        self.last_activity = self._loop.time()
        self._handle: asyncio.TimerHandle | None = None
        self._due = 0.0  # when the next tick was asked for
        self._waiter: asyncio.Task[Any] | None = None
        wait = getattr(cancel, "wait", None)
        self._has_wait = wait is not None and inspect.iscoroutinefunction(wait)
        interval = 0.5 if self._has_wait or cancel is None else 0.1
        if stall is not None:
            interval = min(interval, stall / 5)
        self._interval = max(interval, 0.01)

    def start(self) -> Watchdog:
        """Begin watching (call right before the guarded awaits)."""
        if self._has_wait:
            self._waiter = self._loop.create_task(self._wait_cancel())
        self._schedule()
        return self

    def _schedule(self) -> None:
        self._due = self._loop.time() + self._interval
        self._handle = self._loop.call_later(self._interval, self._tick)

    def touch(self) -> None:
        """Record activity (an SSE line arrived)."""
        self.last_activity = self._loop.time()

    def stop(self) -> None:
        """Stop watching; idempotent."""
        self._stopped = True
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._waiter is not None:
            self._waiter.cancel()
            self._waiter = None

    def claim(self) -> str | None:
        """After a ``CancelledError``: the watchdog's reason (and undo its cancel request), or
        ``None`` when the cancellation came from outside."""
        if self.reason is None:
            return None
        task = self._task
        if task is not None:
            task.uncancel()
        return self.reason

    async def _wait_cancel(self) -> None:
        await self._cancel.wait()
        self._fire(CANCELLED)

    def _tick(self) -> None:
        self._handle = None
        if self.reason is not None or self._stopped:
            return
        now = self._loop.time()
        # A tick that runs late means the loop itself was held up (a handler blocked on a
        # full stdout pipe, a starved process): nothing was read then, whatever the server
        # sent, so that time is not the server's silence.
        self.last_activity += max(0.0, now - self._due)
        cancel = self._cancel
        if cancel is not None and cancel.is_cancelled():
            self._fire(CANCELLED)
        elif self._stall is not None and now - self.last_activity > self._stall:
            self._fire(STALLED)
        elif self._deadline is not None and now >= self._deadline:
            self._fire(DEADLINE)
        else:
            self._schedule()

    def _fire(self, reason: str) -> None:
        if self.reason is not None or self._stopped:
            return
        self.reason = reason
        if self._task is not None and not self._task.done():
            self._task.cancel()

"""Cancellation tokens that form a parent → child tree.

Cancelling a token cancels every token derived from it, so cancelling a turn
cascades into its tool subprocesses and any dispatched sub-agents. The module
depends on nothing else in the project; the ``llm`` package accepts any object
with the same ``is_cancelled()`` / ``wait()`` shape.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class Cancelled(Exception):
    """Raised by :meth:`CancelToken.check` once the token is cancelled."""

    def __init__(self, reason: str = "cancelled") -> None:
        super().__init__(reason)
        self.reason = reason


class CancelToken:
    """A cancellation flag with children and callbacks.

    Tokens are created with :meth:`new_root` and :meth:`child`. Cancellation is
    eager: :meth:`cancel` sets the flag, runs the callbacks and fans out to all
    children before it returns.
    """

    def __init__(self, parent: CancelToken | None = None) -> None:
        self._parent = parent
        self._children: list[CancelToken] = []
        self._callbacks: list[Callable[[str], None]] = []
        self._reason: str | None = None
        self._event: asyncio.Event | None = None
        if parent is not None:
            parent._children.append(self)
            if parent.is_cancelled():
                self.cancel(parent.reason or "cancelled")

    @classmethod
    def new_root(cls) -> CancelToken:
        """Return a token with no parent."""
        return cls()

    def child(self) -> CancelToken:
        """Return a new token that is cancelled whenever this one is."""
        return CancelToken(self)

    @property
    def reason(self) -> str | None:
        """Why the token was cancelled, or ``None`` while it is live."""
        return self._reason

    def is_cancelled(self) -> bool:
        """Return ``True`` once the token (or an ancestor) was cancelled."""
        return self._reason is not None

    def cancel(self, reason: str = "cancelled") -> None:
        """Cancel this token and every descendant; idempotent."""
        if self._reason is not None:
            return
        self._reason = reason
        if self._event is not None:
            self._event.set()
        for callback in list(self._callbacks):
            try:
                callback(reason)
            except Exception:  # a failing observer must not stop the cascade
                pass
        for child in list(self._children):
            child.cancel(reason)

    def on_cancel(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` on cancellation; returns an unsubscribe function."""
        if self._reason is not None:
            callback(self._reason)
            return lambda: None
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    def check(self) -> None:
        """Raise :class:`Cancelled` if the token is cancelled."""
        if self._reason is not None:
            raise Cancelled(self._reason)

    async def wait(self) -> str:
        """Wait until the token is cancelled and return the reason."""
        if self._reason is None:
            if self._event is None:
                self._event = asyncio.Event()
            await self._event.wait()
        return self._reason or "cancelled"

    async def sleep(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; return ``True`` if cancelled meanwhile."""
        if self._reason is not None:
            return True
        try:
            await asyncio.wait_for(self.wait(), timeout=max(0.0, seconds))
        except TimeoutError:
            return False
        return True

    def __repr__(self) -> str:
        state = f"cancelled:{self._reason}" if self._reason else "live"
        return f"<CancelToken {state} children={len(self._children)}>"

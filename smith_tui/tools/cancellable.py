"""Await something on behalf of a tool call, giving up when the call is cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from smith_tui.tools.spec import ToolContext

T = TypeVar("T")


async def until_cancelled(ctx: ToolContext, awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` unless the call is cancelled first.

    On cancellation the awaitable is abandoned (its task cancelled) and
    :class:`asyncio.CancelledError` is raised, so callers can clean up in
    ``finally`` blocks.
    """
    task = asyncio.ensure_future(awaitable)
    waiter = asyncio.ensure_future(ctx.cancel.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
    if not task.done() or task.cancelled():
        raise asyncio.CancelledError(ctx.cancel.reason or "cancelled")
    return task.result()

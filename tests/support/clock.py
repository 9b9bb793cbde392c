"""A clock that tests move by hand, for code that takes an injectable clock and sleep."""

from __future__ import annotations

import asyncio


class ManualClock:
    """Monotonic seconds that only change when the test calls :meth:`advance`.

    Call the clock for the time. :meth:`sleep` is an ``asyncio.sleep`` stand-in: it returns
    once the clock has been advanced past its deadline (at once for a delay of zero or
    less), and records every delay asked for in :attr:`sleeps`.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        """Wait until the clock reaches ``now + delay``."""
        self.sleeps.append(delay)
        if delay <= 0:
            await asyncio.sleep(0)
            return
        waker = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + delay, waker))
        await waker

    @property
    def sleeping(self) -> int:
        """How many sleepers are waiting for the clock."""
        return sum(1 for _, waker in self._sleepers if not waker.done())

    async def advance(self, seconds: float) -> None:
        """Move the clock on, wake the sleepers whose deadline passed, and let them run
        until they sleep again or finish."""
        self.now += seconds
        due = [waker for deadline, waker in self._sleepers if deadline <= self.now]
        self._sleepers = [(d, w) for d, w in self._sleepers if d > self.now and not w.done()]
        for waker in due:
            if not waker.done():
                waker.set_result(None)
        for _ in range(5):  # a woken task runs one step per loop pass
            await asyncio.sleep(0)

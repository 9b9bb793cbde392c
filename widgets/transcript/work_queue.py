"""Widget work run one job at a time, in the order it was asked for."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

Job = Callable[[], Awaitable[None]]


class WorkQueue:
    """Runs queued jobs in order; a failing job is recorded, never stops the queue.

    ``run`` is the worker's body (start it once, e.g. with ``Widget.run_worker``).
    """

    def __init__(self, on_error: Callable[[Exception], None] | None = None) -> None:
        self._jobs: asyncio.Queue[Job] = asyncio.Queue()
        self._on_error = on_error
        self.errors: list[Exception] = []
        """Errors of failed jobs since :meth:`take_error` last emptied the list."""

    async def run(self) -> None:
        """Run jobs forever."""
        while True:
            job = await self._jobs.get()
            try:
                await job()
            except Exception as exc:
                self.errors.append(exc)
                if self._on_error is not None:
                    self._on_error(exc)
            finally:
                self._jobs.task_done()

    def put(self, job: Job) -> asyncio.Future[None]:
        """Queue ``job``; the returned future completes (or fails) when it has run."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def run_and_report() -> None:
            try:
                await job()
            except BaseException as exc:
                if not done.done():
                    done.set_exception(exc)
                    done.exception()  # mark retrieved: the queue reports the error
                raise
            else:
                if not done.done():
                    done.set_result(None)

        self._jobs.put_nowait(run_and_report)
        return done

    async def join(self) -> None:
        """Wait until every job queued so far has run."""
        await self._jobs.join()

    def take_error(self) -> Exception | None:
        """The first recorded error (and forget them all), or None."""
        if not self.errors:
            return None
        error, self.errors = self.errors[0], []
        return error

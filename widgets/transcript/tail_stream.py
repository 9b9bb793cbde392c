"""The stream that feeds the live tail of a streamed Markdown document.

It extends Textual's ``MarkdownStream`` (what ``Markdown.get_stream`` returns):
fragments written while the widget is busy are coalesced into one ``append``,
and a ``replace`` (the tail restarting after part of it was frozen) supersedes
everything queued before it. Nothing the caller does waits for rendering.
"""

from __future__ import annotations

import asyncio

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from smith_tui.widgets.textual_compat import wait_mounted


class TailStream(MarkdownStream):
    """A ``MarkdownStream`` with ``replace`` and ``close`` that never block the writer."""

    def __init__(self, markdown_widget: Markdown) -> None:
        super().__init__(markdown_widget)
        # Our own state, none of ``MarkdownStream``'s private attributes (no name is shared:
        # tests/app/test_textual_compat.py checks).
        self._queued: list[str] = []
        self._wakeup = asyncio.Event()
        self._feeder: asyncio.Task[None] | None = None
        self._ended = False
        self._replacement: str | None = None
        self._closing = False
        self._idle = asyncio.Event()
        self._idle.set()

    def start(self) -> None:
        """Start rendering in the background (once)."""
        if self._feeder is None:
            self._feeder = asyncio.create_task(self._render_queued())

    @property
    def running(self) -> bool:
        """True from :meth:`start` until the stream has rendered its last text (or was cancelled)."""
        return self._feeder is not None and not self._feeder.done()

    def cancel(self) -> None:
        """Stop rendering at once, dropping what is queued."""
        if self._feeder is not None:
            self._feeder.cancel()

    def feed(self, fragment: str) -> None:
        """Queue a fragment to append (the synchronous form of ``write``)."""
        if self._ended or self._closing:
            raise RuntimeError("Can't write to the stream after it has been closed.")
        if fragment:
            self._queued.append(fragment)
            self._wake()

    async def write(self, markdown_fragment: str) -> None:
        """Queue a fragment to append."""
        self.feed(markdown_fragment)

    def replace(self, markdown: str) -> None:
        """Show ``markdown`` instead of everything written so far."""
        self._replacement = markdown
        self._queued.clear()
        self._wake()

    def close(self) -> None:
        """Render what is queued, then end the stream (without waiting)."""
        self._closing = True
        self._wake()

    async def wait_idle(self) -> None:
        """Wait until everything queued so far is rendered."""
        await self._idle.wait()

    async def stop(self) -> None:
        """Render what is queued and end the stream."""
        self.close()
        if self._feeder is not None:
            await self._feeder
            self._feeder = None
        self._ended = True

    def _wake(self) -> None:
        self._idle.clear()
        self._wakeup.set()

    async def _render_queued(self) -> None:
        widget = self.markdown_widget
        # The widget renders its initial text on mount; appends must come after.
        await wait_mounted(widget)
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            replacement, self._replacement = self._replacement, None
            fragment = "".join(self._queued)
            self._queued.clear()
            if replacement is not None:
                await asyncio.shield(widget.update(replacement + fragment))
            elif fragment:
                await asyncio.shield(widget.append(fragment))
            if self._replacement is None and not self._queued:
                self._idle.set()
                if self._closing:
                    return

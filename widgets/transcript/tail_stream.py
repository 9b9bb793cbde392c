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


class TailStream(MarkdownStream):
    """A ``MarkdownStream`` with ``replace`` and ``close`` that never block the writer."""

    def __init__(self, markdown_widget: Markdown) -> None:
        super().__init__(markdown_widget)
        self._replacement: str | None = None
        self._closing = False
        self._idle = asyncio.Event()
        self._idle.set()

    def feed(self, fragment: str) -> None:
        """Queue a fragment to append (the synchronous form of ``write``)."""
        if self._stopped or self._closing:
            raise RuntimeError("Can't write to the stream after it has been closed.")
        if fragment:
            self._pending.append(fragment)
            self._wake()

    async def write(self, markdown_fragment: str) -> None:
        """Queue a fragment to append."""
        self.feed(markdown_fragment)

    def replace(self, markdown: str) -> None:
        """Show ``markdown`` instead of everything written so far."""
        self._replacement = markdown
        self._pending.clear()
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
        if self._task is not None:
            await self._task
            self._task = None
        self._stopped = True

    def _wake(self) -> None:
        self._idle.clear()
        self._new_markup.set()

    async def _run(self) -> None:
        widget = self.markdown_widget
        # The widget renders its initial text on mount; appends must come after.
        await widget._mounted_event.wait()
        while True:
            await self._new_markup.wait()
            self._new_markup.clear()
            replacement, self._replacement = self._replacement, None
            fragment = "".join(self._pending)
            self._pending.clear()
            if replacement is not None:
                await asyncio.shield(widget.update(replacement + fragment))
            elif fragment:
                await asyncio.shield(widget.append(fragment))
            if self._replacement is None and not self._pending:
                self._idle.set()
                if self._closing:
                    return

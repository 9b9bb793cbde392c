"""The exact-lines patch (``bench/stream_floor.py`` puts this folder on smith's PYTHONPATH).

A measurement, never shipped. A streamed answer's body (``StreamingMarkdown`` with
``defer_far_parts``) shows each of its parts, finished or growing, as one Line-API widget
whose lines :func:`line_markdown.part_lines` draws from template styles: no Markdown block
widget is mounted for the answer (the templates, one small hidden part per kind of first
block and ``follows``, are mounted once per answer). The lines match Textual's own widgets
cell for cell (``tests/bench/test_stream_floor.py``); what is left out is everything a
shipped version needs besides: interaction (hover, selection, links, copying code), parking
these parts, tables and other blocks the templates cannot draw (such a part shows blank),
a theme change, and the widgets the answer's end builds today.
"""

from __future__ import annotations

import asyncio
from typing import Any


def _install() -> None:
    from textual.geometry import Size
    from textual.strip import Strip
    from textual.widget import Widget

    from smith_tui.terminal_text import visible
    from smith_tui.widgets.textual_compat import wait_mounted
    from smith_tui.widgets.transcript import streaming_markdown as sm
    from smith_tui.widgets.transcript.line_markdown import Templates, Unsupported, part_lines

    firsts = [
        "# a\n\n", "## a\n\n", "### a\n\n", "#### a\n\n", "##### a\n\n", "###### a\n\n",
        "a *b* **c** `d` ~~e~~ [f](g)\n\n", "- a\n- b\n\n", "1. a\n2. b\n\n",
        "```python\nx = 1\n```\n\n",
    ]  # fmt: skip
    body = "".join(firsts)

    class Hidden(Widget):
        DEFAULT_CSS = "Hidden { display: none; height: auto; }"

    class LinesPart(Widget):
        """One part of the answer, drawn from lines."""

        DEFAULT_CSS = "LinesPart { height: auto; }"

        def __init__(self, owner: Any, text: str, follows: bool) -> None:
            super().__init__()
            self.owner, self.text, self.follows = owner, text, follows
            self.cached: tuple[int, list[Strip]] | None = None

        def set_text(self, text: str) -> None:
            if text != self.text:
                self.text, self.cached = text, None
                self.refresh(layout=True)

        def lines(self, width: int) -> list[Strip]:
            if self.cached is None or self.cached[0] != width:
                self.cached = (width, self.owner.lines_for(self.text, width, self.follows))
            return self.cached[1]

        def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
            return len(self.lines(width))

        def render_line(self, y: int) -> Strip:
            lines = self.lines(self.size.width)
            return lines[y] if 0 <= y < len(lines) else Strip.blank(self.size.width)

    def lines_for(self: Any, text: str, width: int, follows: bool) -> list[Strip]:
        templates = self.templates.get(follows)
        if templates is None:  # not mounted yet: blank until they are
            return [Strip.blank(width)]
        try:
            return part_lines(templates, text, width)
        except Unsupported:
            return [Strip.blank(width)]

    def mount_templates(self: Any) -> None:
        self.templates = {}
        holder = Hidden()
        self.mount(holder)
        sets = {f: [sm.MarkdownPart(first + body, follows=f) for first in firsts] for f in (0, 1)}
        holder.mount_all([part for parts in sets.values() for part in parts])

        async def index() -> None:
            every = [part for parts in sets.values() for part in parts]
            for part in every:
                await wait_mounted(part)
            # Their blocks mount a message later, and the first is marked once rendered.
            while not all(p.children and p.children[0].has_class("-first") for p in every):  # noqa: ASYNC110 (no event says a part rendered)
                await asyncio.sleep(0.01)
            for follows, parts in sets.items():
                self.templates[bool(follows)] = Templates(parts)
            for child in self.children:
                if isinstance(child, LinesPart):
                    child.cached = None
                    child.refresh(layout=True)

        self.template_task = asyncio.get_running_loop().create_task(index())

    streaming = sm.StreamingMarkdown
    original_write, original_finish = streaming.write, streaming.finish

    def write(self: Any, text: str) -> None:
        if not self.defer_far_parts:
            original_write(self, text)
            return
        if not text:
            return
        if getattr(self, "templates", None) is None:
            mount_templates(self)
        tail = getattr(self, "lines_tail", None)
        self._splitter.feed(visible(text))
        while (head := self._splitter.cut(self._part_chars)) is not None:
            if tail is None:
                self.mount(LinesPart(self, head, bool(self._frozen)))
            else:
                tail.set_text(head)
            self._frozen.append(head)
            tail = None
        rest = self._splitter.text
        if rest and tail is None:
            tail = LinesPart(self, rest, bool(self._frozen))
            self.mount(tail)
        elif rest and tail is not None:
            tail.set_text(rest)
        self.lines_tail = tail

    async def finish(self: Any) -> None:
        if getattr(self, "templates", None) is None:
            await original_finish(self)
            return
        self._frozen.append(self._splitter.text)
        self._splitter = sm.BlockSplitter()

    streaming.lines_for = lines_for  # type: ignore[attr-defined]
    streaming.write = write  # type: ignore[method-assign]
    streaming.finish = finish  # type: ignore[method-assign]


try:
    _install()
except ImportError:  # a Python started without smith_tui on its path (tools, pip)
    pass

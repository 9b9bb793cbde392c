"""The parts a streamed Markdown document is made of: built (:class:`MarkdownPart`) or
parked (:class:`ParkedPart`, its height and its source, to build it again)."""

from __future__ import annotations

from markdown_it import MarkdownIt
from textual.await_complete import AwaitComplete

from smith_tui.widgets.textual_compat import resume_parsing_at
from smith_tui.widgets.transcript.code_markdown import CodeMarkdown
from smith_tui.widgets.transcript.parking import Placeholder
from smith_tui.widgets.transcript.tail_stream import TailStream


def last_block_line(markdown: str) -> int:
    """The line where the last top-level block of ``markdown`` starts (0 when none)."""
    for token in reversed(MarkdownIt("gfm-like").parse(markdown)):
        if token.map is not None and token.level == 0:
            return token.map[0]
    return 0


class MarkdownPart(CodeMarkdown):
    """One part of a streamed document; the live tail while ``stream`` is open."""

    def __init__(self, text: str = "", *, follows: bool = False) -> None:
        super().__init__(text or None, classes="part -follows" if follows else "part")
        self.text = text
        self.follows = follows
        self.stream: TailStream | None = None
        self.has_rendered = False
        """True once the part has rendered its first text (and tagged its first block)."""

    def update(self, markdown: str) -> AwaitComplete:
        """Replace the document (then tag its first block)."""
        rendering = super().update(markdown)

        async def render_then_fix() -> None:
            await rendering
            self.mark_first_block()
            self.has_rendered = True
            if self.stream is not None:
                # ``Markdown.update`` assumes the last block is on the last line;
                # appends re-parse from there, so a multi-line last block (an open
                # code fence) would lose its first lines. Start from the block.
                resume_parsing_at(self, last_block_line(markdown))

        return AwaitComplete(render_then_fix())

    def append(self, markdown: str) -> AwaitComplete:
        """Append to the document (the first block may have been rebuilt: tag it)."""
        return self._then_mark(super().append(markdown))

    def _then_mark(self, rendering: AwaitComplete) -> AwaitComplete:
        async def render_then_mark() -> None:
            await rendering
            self.mark_first_block()

        return AwaitComplete(render_then_mark())

    def mark_first_block(self) -> None:
        """Tag the first block (its top margin depends on the part before)."""
        children = self.children
        if children and not children[0].has_class("-first"):
            children[0].add_class("-first")

    @property
    def live(self) -> bool:
        """True while text may still be rendered into this part."""
        return self.stream is not None and self.stream.running

    def open_stream(self) -> TailStream:
        """Start feeding this part (as ``Markdown.get_stream`` does)."""
        self.stream = TailStream(self)
        self.stream.start()
        return self.stream


class ParkedPart(Placeholder):
    """A parked part: its height and its Markdown, to rebuild it.

    An unmeasured part (``measured`` False) was never built: a long write froze it far
    above the view's bottom; it has no height until parking builds it.
    """

    def __init__(self, text: str, height: int, *, follows: bool, measured: bool = True) -> None:
        super().__init__(height)
        self.text = text
        self.follows = follows
        self.measured = measured

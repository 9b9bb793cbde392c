"""Markdown that grows while a model streams it, at a cost bounded by what is new.

The text is split at safe block boundaries (see :mod:`block_split`). Each finished
part lives in its own Markdown widget that is mounted once and never touched
again, so its layout stays cached; only the last part (the tail) is a live
Markdown fed through a :class:`TailStream` (the ``MarkdownStream`` that
``Markdown.get_stream`` returns, extended to restart the tail). Parts far from the viewport are
parked behind placeholders (see :mod:`parking`), so the number of widgets stays
bounded however long the answer grows. When text arrives faster than the screen updates
(a fast provider: 80 KB in one write), only the newest parts are built at once; the older
ones wait unmeasured and parking builds them a few at a time, newest first.
"""

from __future__ import annotations

from collections.abc import Awaitable

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget

from smith_tui.terminal_text import visible
from smith_tui.widgets.textual_compat import is_pruning
from smith_tui.widgets.transcript.answer_parts import MarkdownPart, ParkedPart
from smith_tui.widgets.transcript.block_split import (
    DEFAULT_PART_CHARS,
    BlockSplitter,
    split_parts,
)
from smith_tui.widgets.transcript.line_markdown import Unsupported
from smith_tui.widgets.transcript.line_part import LinePart, LineTemplates
from smith_tui.widgets.transcript.parking import (
    child_offsets,
    is_near,
    one_update,
    parked_height,
    swap_widgets,
)
from smith_tui.widgets.transcript.row_estimate import estimated_rows
from smith_tui.widgets.transcript.tail_stream import TailStream

__all__ = ["EAGER_CHARS", "MarkdownPart", "ParkedPart", "StreamingMarkdown"]

#: With ``defer_far_parts``: a write that freezes more text than this builds only its
#: newest parts (those that fill the bottom of the view) at once; the older ones wait,
#: unmeasured, until parking builds them (see :meth:`StreamingMarkdown.park_outside`).
EAGER_CHARS = 3_000

#: How much unmeasured text one parking pass builds (newest first): a few parts, so the
#: screen repaints and keys are answered between passes.
BUILD_CHARS_PER_PASS = 2_400

#: Frozen text after which a streamed answer's new parts are drawn as lines (see
#: :mod:`line_part`); the few-KB answers of most turns are built as before.
TEMPLATES_AFTER_CHARS = 4_000


def _first_built(parts: list[str], rows: int) -> int:
    """The index of the first of the last parts that fill about ``rows`` rows."""
    filled = 0
    for index in range(len(parts) - 1, -1, -1):
        filled += estimated_rows(parts[index])
        if filled >= rows:
            return index
    return 0


class StreamingMarkdown(Vertical):
    """A Markdown document made of frozen parts plus one live tail.

    Call :meth:`write` with new text while streaming and :meth:`finish` at the
    end; neither waits for rendering. A document given at construction is split
    into parts the same way; with ``built_rows`` only its last parts that fill about
    that many rows are built, the ones above start parked (built when scrolled near).
    """

    # Margins do not collapse across parts as they do between the blocks of one
    # document: a part that follows another drops its first block's top margin
    # (every block has a bottom margin of 1), keeping one line of a heading's two.
    # The first block is marked with a class, not ``:first-child``: order
    # pseudo-classes make Textual restyle every block on each mount.
    DEFAULT_CSS = """
    StreamingMarkdown {
        height: auto;
        layout: stream;
    }
    MarkdownPart.-follows > MarkdownBlock.-first {
        margin: 0 0 1 0;
    }
    MarkdownPart.-follows > MarkdownH1.-first,
    MarkdownPart.-follows > MarkdownH2.-first {
        margin: 1 0 1 0;
    }
    """

    def __init__(
        self,
        markdown: str = "",
        *,
        part_chars: int = DEFAULT_PART_CHARS,
        built_rows: int | None = None,
        defer_far_parts: bool = False,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.defer_far_parts = defer_far_parts
        """Build only the newest parts of a long write (its host parks, see :meth:`write`)."""
        # Shown before parsing: a code block or an entity cannot bring a control back.
        markdown = visible(markdown)
        self._part_chars = part_chars
        self._splitter = BlockSplitter()
        self._frozen: list[str] = split_parts(markdown, part_chars) if markdown else []
        self._built_from = 0
        """Parts before this index start parked (``built_rows``), the rest built."""
        if built_rows is not None:
            self._built_from = _first_built(self._frozen, built_rows)
        self._tail: MarkdownPart | LinePart | None = None
        self._tail_text = ""
        self._ending_streams: list[TailStream] = []
        self._mounts: list[Awaitable[None]] = []
        self._templates: LineTemplates | None = None
        """With ``defer_far_parts``: the templates parts are drawn from (see :mod:`line_part`),
        mounted once the answer is longer than a part."""
        self._ended = False

    def compose(self) -> ComposeResult:
        """The parts of a document given at construction."""
        for index, text in enumerate(self._frozen):
            if index < self._built_from:
                yield ParkedPart(text, estimated_rows(text), follows=index > 0)
            else:
                yield MarkdownPart(text, follows=index > 0)

    @property
    def source(self) -> str:
        """All the Markdown written so far (including a partial line held back)."""
        return "".join(self._frozen) + self._splitter.text

    @property
    def part_count(self) -> int:
        """How many parts (frozen and tail) the document has."""
        return len(self._frozen) + (1 if self._tail is not None else 0)

    @property
    def streaming(self) -> bool:
        """True while a live tail accepts text."""
        return self._tail is not None

    @property
    def unmeasured(self) -> int:
        """How many parts wait to be built (see ``defer_far_parts``)."""
        return sum(
            1 for child in self.children if isinstance(child, ParkedPart) and not child.measured
        )

    def write(self, text: str) -> None:
        """Append streamed text; freeze leading parts as safe boundaries pass by.

        With ``defer_far_parts``, when one write freezes more than :data:`EAGER_CHARS` of
        text (an answer arriving faster than the screen updates), only the newest parts
        are built; the older ones are mounted unmeasured and built by later parking passes,
        newest first (a long answer at wire speed shows its end at once). Once the answer
        is longer than a part, its new parts are drawn as lines (see :mod:`line_part`).
        """
        if not text:
            return
        self._splitter.feed(visible(text))
        appended: list[str] = []  # parts frozen in this write, to mount at the end
        while (head := self._splitter.cut(self._part_chars)) is not None:
            shown = self._tail_text
            tail = self._tail
            if len(head) >= len(shown):
                # The boundary lies in text the tail has not shown: the tail (if
                # any) takes what it lacks of ``head`` and freezes as it is.
                if tail is not None:
                    self._freeze_tail(tail, head)
                    self._tail = None
                else:
                    appended.append(head)
                self._tail_text = ""
            else:
                # The boundary was confirmed late, inside what the tail shows:
                # freeze ``head`` as a part of its own and restart the tail.
                assert tail is not None
                self._mounting(self.mount(self._part(head, bool(self._frozen)), before=tail))
                self._tail_text = shown[len(head) :]
                self._restart_tail(tail, self._tail_text)
            self._frozen.append(head)
        if appended:
            self._mount_frozen(appended)
        if self.defer_far_parts and self._templates is None and self._long_enough():
            self._templates = LineTemplates()
            self.mount(self._templates)  # nothing waits for it: parts are built until ready
        self._show(hold_back=True)

    def _long_enough(self) -> bool:
        """True once the answer is long enough for its parts to be drawn as lines: the
        templates cost about what building a few parts does, so shorter answers are built."""
        return sum(map(len, self._frozen)) >= TEMPLATES_AFTER_CHARS

    def _part(self, text: str, follows: bool) -> MarkdownPart | LinePart:
        """A part showing ``text``: drawn as lines while the answer streams and the
        templates can draw it, else built."""
        templates = self._templates
        width = self.size.width
        if templates is not None and not self._ended and width > 0 and templates.ready:
            try:
                part = LinePart.drawn(text, width, follows=follows, draw=templates.draw)
            except Unsupported:
                pass
            else:
                part.on_enter_build = self._build_line_part
                return part
        return MarkdownPart(text, follows=follows)

    def _freeze_tail(self, tail: MarkdownPart | LinePart, head: str) -> None:
        """The tail stops growing at ``head``: it stays as the part holding it."""
        if isinstance(tail, LinePart):
            try:
                tail.set_text(head)
            except Unsupported:
                self._swap(tail, MarkdownPart(head, follows=tail.follows))
            return
        assert tail.stream is not None
        tail.stream.feed(head[len(self._tail_text) :])
        tail.text = head
        self._close(tail.stream)

    def _restart_tail(self, tail: MarkdownPart | LinePart, text: str) -> None:
        """The tail now follows a part frozen from its start and shows ``text``."""
        if isinstance(tail, LinePart):
            try:
                tail.set_text(text, follows=True, growing=True)
            except Unsupported:
                self._tail = self._tail_as_widgets(tail, text, follows=True)
            return
        assert tail.stream is not None
        tail.set_class(True, "-follows")
        tail.follows = True
        tail.text = text
        tail.stream.replace(text)

    def _tail_as_widgets(self, tail: LinePart, text: str, *, follows: bool) -> MarkdownPart:
        """A built tail streaming from ``text`` in place of the line-drawn ``tail``."""
        built = MarkdownPart(text, follows=follows)
        self._swap(tail, built)
        built.open_stream()
        return built

    def _swap(self, old: Widget, new: Widget) -> None:
        """Put ``new`` in place of ``old`` (callers hold screen updates or accept a frame)."""
        self._mounting(self.mount(new, before=old))
        self._mounting(old.remove())

    def _build_line_part(self, part: LinePart) -> None:
        """The pointer entered a line-drawn part: build its widgets (selection, links)."""
        self.call_next(self._build_now, part)

    async def _build_now(self, part: LinePart) -> None:
        if part.parent is not self or is_pruning(part):
            return  # parked or built already
        with one_update(self):
            if part is self._tail:
                self._tail = self._tail_as_widgets(part, self._tail_text, follows=part.follows)
            else:
                self._swap(part, MarkdownPart(part.text, follows=part.follows))
            await self.wait_rendered()

    def _mount_frozen(self, heads: list[str]) -> None:
        """Mount the parts ``heads`` (the newest of ``_frozen``) after the others."""
        first = len(self._frozen) - len(heads)
        eager = len(heads)
        if self.defer_far_parts:
            newest = len(self._splitter.text)
            eager = 0
            while eager < len(heads) and newest < EAGER_CHARS:
                eager += 1
                newest += len(heads[-eager])
        deferred = len(heads) - eager
        parts: list[Widget] = []
        for index, head in enumerate(heads):
            follows = first + index > 0
            if index < deferred:
                parts.append(ParkedPart(head, 0, follows=follows, measured=False))
            else:
                parts.append(self._part(head, follows))
        self._mounting(self.mount_all(parts))

    def _show(self, hold_back: bool) -> None:
        """Hand the tail what it does not show yet.

        With ``hold_back``, text after a blank line whose next line is not complete
        waits when a cut there is likely: the tail then freezes as it is instead of
        being rendered twice (a later cut inside shown text re-renders it).
        """
        buffered = self._splitter.text
        end = len(buffered)
        pending = self._splitter.pending_boundary
        if hold_back and pending is not None and pending >= self._part_chars:
            end = max(len(self._tail_text), pending)
        unshown = buffered[len(self._tail_text) : end]
        if unshown:
            self._feed_tail(unshown)

    async def wait_rendered(self) -> None:
        """Wait until the text written so far is rendered (streaming goes on)."""
        mounts, self._mounts = self._mounts, []
        for mounted in mounts:
            await mounted  # a part renders its text while it mounts
        streams = list(self._ending_streams)
        tail = self._tail
        if isinstance(tail, MarkdownPart) and tail.stream is not None:
            streams.append(tail.stream)
        for stream in streams:
            await stream.wait_idle()

    async def finish(self) -> None:
        """End the stream and wait until the whole document is rendered.

        Parts drawn as lines stay so until parking builds those near the view and parks
        the others (:meth:`park_outside`).
        """
        self._show(hold_back=False)
        tail, self._tail = self._tail, None
        if tail is not None:
            self._frozen.append(self._tail_text)
            if isinstance(tail, LinePart):
                self._freeze_tail(tail, self._tail_text)  # its last line, if it held it back
            elif tail.stream is not None:
                self._close(tail.stream)
        self._ended = True
        self._tail_text = ""
        self._splitter = BlockSplitter()
        closed, self._ending_streams = self._ending_streams, []
        for stream in closed:
            await stream.stop()
        await self._drop_templates()

    async def clear(self) -> None:
        """Discard everything shown (a stream being retried starts again)."""
        tail, self._tail = self._tail, None
        tail_streams = [tail.stream] if isinstance(tail, MarkdownPart) and tail.stream else []
        streams = [*self._ending_streams, *tail_streams]
        self._ending_streams = []
        for stream in streams:
            stream.cancel()
        await self.remove_children()
        self._templates = None
        self._ended = False
        self._frozen.clear()
        self._tail_text = ""
        self._splitter = BlockSplitter()

    async def _drop_templates(self) -> None:
        """Once the answer has ended and no part is drawn as lines, remove the templates."""
        templates = self._templates
        if templates is None or not self._ended:
            return
        if any(isinstance(c, LinePart) and not is_pruning(c) for c in self.children):
            return
        self._templates = None
        await templates.remove()

    async def park_outside(self, window: tuple[int, int]) -> bool:
        """Park frozen parts outside ``window`` (rows of this widget); rebuild those inside.

        While the answer streams, parts near the view are drawn as lines when they can be;
        once it has ended, those near are built and those far parked.
        Returns False when some part had no height yet or parts were swapped (the
        caller should look again once they are laid out).
        """
        swaps: list[tuple[Widget, Widget]] = []
        unmeasured: list[ParkedPart] = []
        settled = True
        for child, top, height in child_offsets(self.children):
            if is_pruning(child):
                continue
            settled = settled and height > 0
            if isinstance(child, ParkedPart) and not child.measured:
                unmeasured.append(child)
                continue
            near = is_near(top, height, window)
            if isinstance(child, LinePart):
                if child is self._tail:
                    continue
                if not near:
                    swaps.append(
                        (child, ParkedPart(child.text, parked_height(child), follows=child.follows))
                    )
                elif self._ended:
                    swaps.append((child, MarkdownPart(child.text, follows=child.follows)))
            elif isinstance(child, MarkdownPart):
                if not near and child is not self._tail and child.live:
                    settled = False  # still rendering its last text: park it later
                elif not near and child is not self._tail:
                    swaps.append(
                        (child, ParkedPart(child.text, parked_height(child), follows=child.follows))
                    )
            elif isinstance(child, ParkedPart) and near:
                swaps.append((child, self._part(child.text, child.follows)))
        # Unmeasured parts are built a few at a time, newest first (nearest the view's
        # bottom); once laid out, a later pass parks those far from the view as usual.
        budget = BUILD_CHARS_PER_PASS
        for child in reversed(unmeasured):
            if budget <= 0:
                break
            budget -= len(child.text)
            swaps.append((child, self._part(child.text, child.follows)))
        if not swaps:
            await self._drop_templates()
            return settled
        await swap_widgets(self, swaps)
        await self._drop_templates()
        return False

    def _mounting(self, mounted: Awaitable[None]) -> None:
        self._mounts.append(mounted)

    def _feed_tail(self, text: str) -> None:
        tail = self._tail
        if tail is None:
            tail = self._tail = self._part(text, bool(self._frozen))
            self._mounting(self.mount(tail))
            if isinstance(tail, MarkdownPart):
                tail.open_stream()  # a new tail renders its first text on mount, then streams
            self._tail_text = text
        elif isinstance(tail, LinePart):
            self._tail_text += text
            try:
                tail.set_text(self._tail_text, growing=True)
            except Unsupported:
                tail = self._tail = self._tail_as_widgets(
                    tail, self._tail_text, follows=tail.follows
                )
        else:
            assert tail.stream is not None
            tail.stream.feed(text)
            self._tail_text += text
        tail.text = self._tail_text

    def _close(self, stream: TailStream) -> None:
        stream.close()
        self._ending_streams = [s for s in self._ending_streams if s.running]
        self._ending_streams.append(stream)

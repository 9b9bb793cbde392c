"""Find safe places to cut streamed Markdown into independent parts.

A cut is safe at the start of a line that follows a blank line, lies outside a
fenced code block, does not start with whitespace (an indented line after a
blank one may continue a list item or be indented code) and does not start a
list item (the item may belong to the list above). Every part cut at such a
place renders, on its own, the same blocks it renders inside the whole document.

The scanner only looks at complete lines it has not seen before, so feeding a long
answer costs time in proportion to the new text, never to the whole message.
"""

from __future__ import annotations

import re

#: A part is frozen at the first safe boundary past this many characters (here, not in
#: streaming_markdown.py, so that the transcript knows it without importing the Markdown
#: machinery before the first answer).
DEFAULT_PART_CHARS = 800

_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"([-+*]|\d{1,9}[.)])(\s|$)")


class BlockSplitter:
    """Accumulates streamed Markdown and hands out finished leading parts.

    ``feed`` adds text; ``cut(min_chars)`` returns the shortest prefix of at least
    ``min_chars`` characters that ends at a safe boundary, and drops it from the
    buffer. ``text`` is what has not been cut yet.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._scan = 0  # start of the first line not scanned yet
        self._fence: str | None = None  # the opening fence while inside one
        self._after_blank = False  # the last scanned line was blank (outside a fence)
        self._boundaries: list[int] = []  # safe boundaries found, ascending

    @property
    def text(self) -> str:
        """The text fed but not cut yet."""
        return self._buffer

    @property
    def pending_boundary(self) -> int | None:
        """Where a boundary may be confirmed once the current line is complete.

        Set when the last complete line is blank (outside a fence): the text from
        here on could start a new part, or continue the block above.
        """
        if self._after_blank and self._fence is None and self._scan < len(self._buffer):
            return self._scan
        return None

    @property
    def in_fence(self) -> bool:
        """True while the scanned text ends inside a fenced code block."""
        return self._fence is not None

    def feed(self, text: str) -> None:
        """Append streamed text and scan any lines it completes."""
        if not text:
            return
        self._buffer += text
        self._scan_lines()

    def cut(self, min_chars: int = 1) -> str | None:
        """Remove and return the text up to the first safe boundary at ``min_chars`` or later."""
        boundaries = self._boundaries
        index = next((i for i, b in enumerate(boundaries) if b >= min_chars), None)
        if index is None:
            return None
        boundary = boundaries[index]
        head = self._buffer[:boundary]
        self._buffer = self._buffer[boundary:]
        self._scan -= boundary
        self._boundaries = [b - boundary for b in boundaries[index + 1 :]]
        return head

    def _scan_lines(self) -> None:
        buffer = self._buffer
        start = self._scan
        while True:
            end = buffer.find("\n", start)
            if end < 0:
                break
            self._scan_line(buffer, start, end)
            start = end + 1
        self._scan = start

    def _scan_line(self, buffer: str, start: int, end: int) -> None:
        line = buffer[start:end]
        if self._fence is not None:
            if self._closes_fence(line):
                self._fence = None
            self._after_blank = False
            return
        blank = not line.strip()
        if (
            self._after_blank
            and not blank
            and not line[0].isspace()
            and _LIST_ITEM.match(line) is None
        ):
            self._boundaries.append(start)
        match = _FENCE.match(line)
        # A backtick fence's info string never holds a backtick (else it is inline code).
        if match is not None and not (match.group(1)[0] == "`" and "`" in line[match.end() :]):
            self._fence = match.group(1)
        self._after_blank = blank

    def _closes_fence(self, line: str) -> bool:
        fence = self._fence
        assert fence is not None
        stripped = line.strip()
        return (
            len(stripped) >= len(fence)
            and stripped[0] == fence[0]
            and stripped == fence[0] * len(stripped)
        )


def boundaries(markdown: str) -> list[int]:
    """The safe boundaries in ``markdown``, ascending."""
    splitter = BlockSplitter()
    splitter.feed(markdown)
    return splitter._boundaries


def split_parts(markdown: str, min_chars: int) -> list[str]:
    """Split a whole document into parts of at least ``min_chars`` at safe boundaries."""
    parts: list[str] = []
    splitter = BlockSplitter()
    for line in markdown.splitlines(keepends=True):
        splitter.feed(line)
        while (head := splitter.cut(min_chars)) is not None:
            parts.append(head)
    if splitter.text:
        parts.append(splitter.text)
    return parts

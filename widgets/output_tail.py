"""The bounded tail of a running tool's output: its last lines, each cut to its end.

A tool may print megabytes, or one line of megabytes, while the screen shows a few lines of
it. :class:`OutputTail` keeps only those lines, and :func:`tail_text` shrinks a piece of
output to the part that can still show, so output merged while it waits for the screen stays
small as well. A carriage return starts its line over (progress bars); a line longer than
the limit keeps its end behind :data:`CUT_MARK`.

This module imports nothing from Textual: the event bridge uses it at startup.
"""

from __future__ import annotations

from collections import deque

#: Starts a line whose beginning was dropped.
CUT_MARK = "…"
#: Characters kept of one line: more than a pane is wide.
LINE_CHARS = 1024
#: The most lines of live output a view may show; merged output keeps no more than these.
KEEP_LINES = 32

# How far back a trailing run of carriage returns is looked at in one go.
_SCAN = 4096


def _rstrip_cr(text: str, start: int, end: int) -> int:
    """Where the run of carriage returns that ends ``text[start:end]`` begins."""
    while end > start:
        chunk = text[max(start, end - _SCAN) : end]
        kept = len(chunk.rstrip("\r"))
        end -= len(chunk) - kept
        if kept:
            break
    return end


def _line_tail(
    text: str, start: int, end: int, line_chars: int, *, restart: bool, pending: bool
) -> str:
    """Line ``text[start:end]`` reduced to what shows: after its last carriage return, cut
    to its last ``line_chars`` characters.

    ``restart`` keeps a carriage return in front when one was dropped (the line joins an
    earlier unfinished one, which it then replaces); ``pending`` keeps one carriage return
    at the end when the line ended with some (more text would start it over).
    """
    stop = _rstrip_cr(text, start, end)
    cr = text.rfind("\r", start, stop)
    body_start = cr + 1 if cr >= 0 else start
    if stop - body_start > line_chars:
        body = CUT_MARK + text[stop - line_chars + 1 : stop]
    else:
        body = text[body_start:stop]
    lead = "\r" if restart and cr >= 0 else ""
    trail = "\r" if pending and stop < end else ""
    return lead + body + trail


def tail_text(text: str, lines: int = KEEP_LINES, line_chars: int = LINE_CHARS) -> str:
    """``text`` without what cannot show once it is added to an output tail.

    Adding the result to an :class:`OutputTail` of at most ``lines`` lines of
    ``line_chars`` characters gives the same lines as adding ``text``, and so does adding
    it to a previous result: the result of merged pieces can be cut again. Short text
    comes back as it is.
    """
    lines = max(lines, 1)
    line_chars = max(line_chars, 2)
    if len(text) <= (lines + 1) * (line_chars + 3):
        return text
    kept: list[str] = []
    end = len(text)
    # The unfinished line, then the finished ones before it, newest first.
    for _ in range(lines + 1):
        newline = text.rfind("\n", 0, end)
        first = newline < 0
        kept.append(
            _line_tail(text, newline + 1, end, line_chars, restart=first, pending=not kept or first)
        )
        if first:
            break
        end = newline
    else:
        # Older lines scroll out; one newline still ends the line they would have joined.
        kept.append("")
    return "\n".join(reversed(kept))


class OutputTail:
    """The last ``lines`` lines of an output (the unfinished one included), each at most
    ``line_chars`` characters; memory stays bounded whatever the output is."""

    def __init__(self, lines: int, line_chars: int = LINE_CHARS) -> None:
        """Keep ``lines`` lines (at least one) of ``line_chars`` characters."""
        self.size = max(lines, 1)
        self.line_chars = max(line_chars, 2)
        self.finished: deque[str] = deque(maxlen=self.size)
        self.partial = ""
        """The unfinished line (a carriage return at its end says it will start over)."""

    def add(self, text: str) -> None:
        """Append a piece of output."""
        text = tail_text(text, self.size, self.line_chars)
        pieces = (self.partial + text).split("\n")
        last = pieces.pop()
        for line in pieces:
            self.finished.append(
                _line_tail(line, 0, len(line), self.line_chars, restart=False, pending=False)
            )
        self.partial = _line_tail(last, 0, len(last), self.line_chars, restart=False, pending=True)

    def lines(self) -> list[str]:
        """The lines to show, oldest first; the unfinished line last when it has text."""
        out = list(self.finished)
        partial = self.partial.rstrip("\r")
        if partial:
            out.append(partial)
        return out[-self.size :]

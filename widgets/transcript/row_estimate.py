"""A guess at how many rows a piece of Markdown takes, before it is ever laid out.

A stored answer is opened with only its last parts built (see
:class:`~smith_tui.widgets.transcript.streaming_markdown.StreamingMarkdown`'s
``built_rows``); the parts above stand behind placeholders of this height until the
reader scrolls near them, when they are built and the view is kept on what it showed
(as after a resize). A close guess only keeps the scroll bar steady.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Columns a long source line is assumed to wrap at (the transcript's usual width).
WRAP_COLUMNS = 100


def estimated_rows(markdown: str) -> int:
    """Rows ``markdown`` takes on screen, about: one per source line (fences, blank lines
    and table rules stand for padding, margins and rules), long lines wrapped."""
    rows = 1  # the bottom margin of the last block
    for line in markdown.splitlines():
        rows += max(1, -(-len(line) // WRAP_COLUMNS))
    return rows


def entry_rows(entry: object) -> int:
    """Rows a stored entry takes, about: an answer's or prompt's text and a header line;
    a collapsed tool call, a card or a notice a few rows."""
    text = getattr(entry, "text", None)
    if isinstance(text, str) and hasattr(entry, "role"):  # an answer
        return estimated_rows(text) + estimated_rows(getattr(entry, "reasoning", "") or "") + 1
    if isinstance(text, str):  # a prompt, a notice
        return estimated_rows(text) + 1
    return 3


def newest_filling(entries: Sequence[object], rows: int) -> int:
    """How many of the newest ``entries`` fill about ``rows`` rows (at least one)."""
    filled = 0
    for count, entry in enumerate(reversed(entries), start=1):
        filled += entry_rows(entry)
        if filled >= rows:
            return count
    return len(entries)

"""A guess at how many rows a piece of Markdown takes, before it is ever laid out.

A stored answer is opened with only its last parts built (see
:class:`~smith_tui.widgets.transcript.streaming_markdown.StreamingMarkdown`'s
``built_rows``); the parts above stand behind placeholders of this height until the
reader scrolls near them, when they are built and the view is kept on what it showed
(as after a resize). A close guess only keeps the scroll bar steady.
"""

from __future__ import annotations

#: Columns a long source line is assumed to wrap at (the transcript's usual width).
WRAP_COLUMNS = 100


def estimated_rows(markdown: str) -> int:
    """Rows ``markdown`` takes on screen, about: one per source line (fences, blank lines
    and table rules stand for padding, margins and rules), long lines wrapped."""
    rows = 1  # the bottom margin of the last block
    for line in markdown.splitlines():
        rows += max(1, -(-len(line) // WRAP_COLUMNS))
    return rows

"""Build the widget that shows an entry."""

from __future__ import annotations

from textual.widget import Widget

from smith_tui.widgets.transcript.block_split import DEFAULT_PART_CHARS
from smith_tui.widgets.transcript.dispatch_card import DispatchCard
from smith_tui.widgets.transcript.entries import (
    AssistantEntry,
    ChangesEntry,
    DispatchEntry,
    Entry,
    NoticeEntry,
    ToolEntry,
    UserEntry,
)
from smith_tui.widgets.transcript.notice import Notice
from smith_tui.widgets.transcript.tool_call import ToolCallEntry
from smith_tui.widgets.transcript.turn_changes import TurnChanges
from smith_tui.widgets.transcript.user_message import UserMessage


def build_widget(
    entry: Entry, *, part_chars: int = DEFAULT_PART_CHARS, built_rows: int | None = None
) -> Widget:
    """A new widget showing ``entry`` (finished content; nothing streams into it).

    ``built_rows``: a long answer builds only its last parts that fill about that many
    rows; those above start parked (for entries read from the bottom up).
    """
    if isinstance(entry, UserEntry):
        return UserMessage(entry)
    if isinstance(entry, AssistantEntry):
        # Here: its module brings the Markdown machinery (markdown-it, pygments, Textual's
        # Markdown widget), which waits for the first answer (see transcript.py).
        from smith_tui.widgets.transcript.assistant_message import AssistantMessage

        return AssistantMessage(entry, part_chars=part_chars, built_rows=built_rows)
    if isinstance(entry, ToolEntry):
        return ToolCallEntry(entry)
    if isinstance(entry, DispatchEntry):
        return DispatchCard(entry)
    if isinstance(entry, NoticeEntry):
        return Notice(entry)
    if isinstance(entry, ChangesEntry):
        return TurnChanges(entry)
    raise TypeError(f"not a transcript entry: {entry!r}")

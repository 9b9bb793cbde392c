"""A message the user sent."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from smith_tui.terminal_text import visible
from smith_tui.widgets.transcript.entries import UserEntry


class UserMessage(Static):
    """The user's text, shown verbatim (no markup, no Markdown)."""

    DEFAULT_CSS = """
    UserMessage {
        height: auto;
    }
    """

    def __init__(self, entry: UserEntry) -> None:
        super().__init__(Text(visible(entry.text)), markup=False)
        self.entry = entry

    @property
    def source(self) -> str:
        """The text as the user typed it."""
        return self.entry.text

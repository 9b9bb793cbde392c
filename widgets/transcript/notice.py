"""A line from the app itself: command output, a retry, an error."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from smith_tui.terminal_text import visible
from smith_tui.widgets.transcript.entries import NoticeEntry

#: Styles a notice may have (unknown ones fall back to ``info``).
NOTICE_STYLES = ("info", "warning", "error", "success")


class Notice(Static):
    """Plain text styled by kind (``-info``, ``-warning``, ``-error``, ``-success``)."""

    DEFAULT_CSS = """
    Notice {
        height: auto;
    }
    """

    def __init__(self, entry: NoticeEntry) -> None:
        style = entry.style if entry.style in NOTICE_STYLES else "info"
        super().__init__(Text(visible(entry.text)), markup=False, classes=f"-{style}")
        self.entry = entry

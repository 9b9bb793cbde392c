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

    def on_mount(self) -> None:
        """Draw the prompt's images as thumbnails where the terminal can (thumbnails.py)."""
        if not self.entry.images:
            return
        from smith_tui.widgets.textual_compat import terminal_driver
        from smith_tui.widgets.transcript import thumbnails

        if not thumbnails.thumbnails_on(self.app):
            return
        driver = terminal_driver(self.app)
        shown = Text(visible(self.entry.text))
        for attachment in self.entry.images:
            png = thumbnails.thumbnail_png(attachment)
            if png is None or driver is None:
                continue
            columns, rows = thumbnails.cells(
                int(attachment.get("width") or 1), int(attachment.get("height") or 1)
            )
            driver.write(thumbnails.transmit(png, columns, rows))
            shown.append("\n")
            shown.append_text(thumbnails.placeholder_rows(png, columns, rows))
        self.update(shown)

    @property
    def source(self) -> str:
        """The text as the user typed it."""
        return self.entry.text

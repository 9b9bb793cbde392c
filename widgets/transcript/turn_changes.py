"""The mark of a turn that changed files: how many, which, and a key for the turn's diff."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static

from smith_tui.terminal_text import visible
from smith_tui.widgets.transcript.entries import ChangesEntry

#: Files named on the mark; the rest are counted.
FILES_SHOWN = 6

#: The mark's hint: the keys that open the turn's combined diff, and how to undo the turn.
DIFF_HINT = "enter / d: the turn's diff · /undo restores"

_STATUS_STYLES = {"A": "green", "M": "yellow", "D": "red"}


def changes_entry(data: dict[str, Any], position: int | None = None) -> ChangesEntry | None:
    """The entry of a checkpoint mark (``TurnCheckpoint.mark``, or its notice's data);
    ``None`` when ``data`` is not one."""
    checkpoint, files = data.get("checkpoint"), data.get("files")
    if not isinstance(checkpoint, str) or not checkpoint or not isinstance(files, list):
        return None
    pairs = [
        (str(item[0]), str(item[1]))
        for item in files
        if isinstance(item, list | tuple) and len(item) == 2
    ]
    if not pairs:
        return None
    return ChangesEntry(
        checkpoint=checkpoint,
        turn_id=str(data.get("turn_id") or ""),
        files=pairs,
        position=position,
    )


def changes_text(entry: ChangesEntry) -> Text:
    """``● 2 files changed   enter / d: the turn's diff …`` then one ``M path`` line a file."""
    count = len(entry.files)
    text = Text()
    text.append("● ", style="bold cyan")
    text.append(f"{count} file{'s' if count != 1 else ''} changed", style="bold")
    text.append(f"   {DIFF_HINT}", style="dim")
    for status, path in entry.files[:FILES_SHOWN]:
        text.append("\n  ")
        text.append(status, style=_STATUS_STYLES.get(status, "bold"))
        text.append(visible(f" {path}"))
    if count > FILES_SHOWN:
        text.append(f"\n  … and {count - FILES_SHOWN} more", style="dim")
    return text


class TurnChanges(Static, can_focus=True):
    """A focusable mark under a turn that changed files; enter or ``d`` asks for its diff."""

    DEFAULT_CSS = """
    TurnChanges {
        height: auto;
        border-left: outer $secondary;
        padding: 0 1;
    }
    TurnChanges:focus {
        background: $boost;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,d", "show_diff", "Turn's diff", show=False)
    ]

    class ShowDiff(Message):
        """The user asked for the combined diff of the turn of ``entry``."""

        def __init__(self, entry: ChangesEntry) -> None:
            self.entry = entry
            super().__init__()

    def __init__(self, entry: ChangesEntry) -> None:
        super().__init__(changes_text(entry), markup=False)
        self.entry = entry

    def action_show_diff(self) -> None:
        """Ask the app for the turn's combined diff."""
        self.post_message(self.ShowDiff(self.entry))

    def on_click(self, event: events.Click) -> None:
        """A click asks for the diff too."""
        event.stop()
        self.action_show_diff()

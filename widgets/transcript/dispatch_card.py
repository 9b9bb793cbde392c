"""The result of a dispatched sub-agent as a card."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from smith_tui.engine.presentation import role_label
from smith_tui.engine.roles import role_display
from smith_tui.terminal_text import visible
from smith_tui.widgets.transcript.entries import DispatchEntry

STATUS_STYLES = {"ok": "green", "partial": "yellow", "blocked": "red", "cancelled": "dim"}
#: The lists of a report, in the order the card shows them.
SECTIONS = (
    ("changes", "Changes"),
    ("verification", "Verification"),
    ("findings", "Findings"),
    ("evidence", "Evidence"),
    ("limitations", "Limitations"),
)


def card_text(result: dict[str, Any]) -> Text:
    """Summary, then each non-empty list of the report as bullet lines."""
    text = Text()
    text.append(visible(str(result.get("summary") or "(no summary)")))
    for key, title in SECTIONS:
        items = result.get(key)
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, list) or not items:
            continue
        text.append(f"\n{title}", style="bold")
        for item in items:
            text.append(visible(f"\n  • {item}"))
    error = result.get("error")
    if error:
        text.append(visible(f"\n{error}"), style="red")
    return text


class DispatchCard(Static):
    """A bordered card: role alias (tinted) and status in the title, report below."""

    DEFAULT_CSS = """
    DispatchCard {
        height: auto;
        border: round $secondary;
        padding: 0 1;
    }
    """

    def __init__(self, entry: DispatchEntry) -> None:
        super().__init__(card_text(entry.result), markup=False)
        self.entry = entry
        result = entry.result
        role = str(result.get("role") or "worker")
        # Read as the dispatch tree reads it: a cancelled job says so in both places.
        status = "cancelled" if result.get("cancelled") else str(result.get("status") or "unknown")
        self.status = status
        tint = role_display(role)[1]
        title = Text()
        title.append(*role_label(role))
        title.append(" · ")
        title.append(status, style=STATUS_STYLES.get(status, "bold"))
        self.border_title = title
        self._tint = tint
        self.add_class(f"-{status}")

    def on_mount(self) -> None:
        """Tint the border with the role's colour."""
        if self._tint:
            self.styles.border = ("round", self._tint)

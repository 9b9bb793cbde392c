"""A modal list to choose one thing from: enter chooses, escape cancels.

The screens built on it (the ``/models`` picker, the ``/search`` hits) give it rows of
``(key, label)``; it dismisses with the chosen row's key, or ``None`` when cancelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from smith_tui.app.screens.modal import SmithModal


class PickerScreen(SmithModal):
    """Choose one row of a list; dismisses with its key (``None``: cancelled)."""

    AUTO_FOCUS = "#picker-list"
    DEFAULT_CSS = """
    #picker-note { height: auto; color: $text-muted; margin-bottom: 1; }
    #picker-list { height: auto; max-height: 30; border: none; padding: 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Cancel"),
        Binding("enter", "choose", "Choose", show=True, priority=True),
    ]

    def __init__(
        self,
        title: str,
        rows: Sequence[tuple[str, Content | str]],
        *,
        note: str = "",
        highlighted: int | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.rows = list(rows)
        self.note = note
        self.start = highlighted

    def compose(self) -> ComposeResult:
        """The note above the list, the list, the keys."""
        with Vertical(id="picker-dialog") as dialog:
            dialog.border_title = self.title_text
            # As tall as the list (the modal stylesheet makes dialogs 92% tall).
            dialog.styles.height = "auto"
            dialog.styles.max_height = "92%"
            if self.note:
                yield Static(self.note, id="picker-note", markup=False)
            yield OptionList(
                *(Option(label, id=str(index)) for index, (_, label) in enumerate(self.rows)),
                id="picker-list",
            )
        yield Footer()

    def on_mount(self) -> None:
        """Highlight the row asked for (else the first)."""
        options = self.query_one("#picker-list", OptionList)
        if self.rows:
            options.highlighted = self.start if self.start is not None else 0

    @property
    def highlighted_key(self) -> str | None:
        """The key of the highlighted row (``None`` when the list is empty)."""
        index = self.query_one("#picker-list", OptionList).highlighted
        return self.rows[index][0] if index is not None and index < len(self.rows) else None

    def action_choose(self) -> None:
        """Enter: choose the highlighted row."""
        key = self.highlighted_key
        if key is not None:
            self.dismiss(key)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """A click (or enter) on a row chooses it."""
        event.stop()
        self.dismiss(self.rows[event.option_index][0])

"""A yes/no question over the current screen (used before anything is deleted)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from smith_tui.app.screens.modal import SmithModal


class ConfirmScreen(SmithModal):
    """Ask ``question``; dismisses with ``True`` (confirmed) or ``False``.

    Cancel has the focus, so an accidental enter deletes nothing.
    """

    AUTO_FOCUS = "#confirm-no"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "answer(False)", "Cancel"),
        Binding("y", "answer(True)", "Yes"),
    ]

    def __init__(
        self, question: str, *, confirm_label: str = "Delete", title: str = "Please confirm"
    ) -> None:
        super().__init__()
        self.question = question
        self.confirm_label = confirm_label
        self.title_text = title

    def compose(self) -> ComposeResult:
        """The question and two buttons."""
        with Vertical(id="confirm-dialog") as dialog:
            dialog.border_title = self.title_text
            yield Static(self.question, id="confirm-question", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button(self.confirm_label, variant="error", id="confirm-yes")
                yield Button("Cancel", id="confirm-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer with the pressed button."""
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, confirmed: bool) -> None:
        """Answer from the keyboard."""
        self.dismiss(confirmed)

    def action_close(self) -> None:
        """Escape means no."""
        self.dismiss(False)

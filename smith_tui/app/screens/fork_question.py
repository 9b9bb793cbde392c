"""The question before inspect's ``f`` forks: fork only, fork and put the files back, or not.

It is the confirm dialog (same look) with a third answer; it dismisses with ``"files"``
(fork and restore the project's files to that turn), ``"fork"`` (fork, files left alone)
or ``None`` (cancelled). Cancel has the focus, so an accidental enter changes nothing.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from smith_tui.app.screens.confirm import ConfirmScreen

ANSWERS = {"confirm-files": "files", "confirm-fork": "fork"}
"""Button id → answer (any other button cancels)."""


class ForkQuestion(ConfirmScreen):
    """Ask whether to fork, and whether the files go back too."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "close", "Cancel"),
        Binding("r", "pick('files')", "Fork + files"),
        Binding("f", "pick('fork')", "Fork only"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__(question, title="Fork")

    def compose(self) -> ComposeResult:
        """The question and three buttons."""
        with Vertical(id="confirm-dialog") as dialog:
            dialog.border_title = self.title_text
            yield Static(self.question, id="confirm-question", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button("Fork + restore files", variant="warning", id="confirm-files")
                yield Button("Fork only", variant="primary", id="confirm-fork")
                yield Button("Cancel", id="confirm-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer with the pressed button."""
        event.stop()
        self.dismiss(ANSWERS.get(event.button.id or ""))

    def action_pick(self, answer: str) -> None:
        """Answer from the keyboard."""
        self.dismiss(answer)

    def action_close(self) -> None:
        """Escape: no fork."""
        self.dismiss(None)

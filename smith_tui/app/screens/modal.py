"""The base of Smith's modal screens: shared stylesheet and an escape-to-close binding."""

from __future__ import annotations

from importlib.resources import files
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.screen import ModalScreen

SCREENS_CSS = str(files("smith_tui.styles") / "screens.tcss")
"""The stylesheet of every modal screen (selectors are scoped by screen type)."""


class SmithModal(ModalScreen[Any]):
    """A modal screen that loads ``screens.tcss`` and closes with escape."""

    CSS_PATH = SCREENS_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def action_close(self) -> None:
        """Close the screen without a result."""
        self.dismiss(None)

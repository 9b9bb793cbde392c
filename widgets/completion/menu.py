"""The completion dropdown shown over the prompt."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from smith_tui.widgets.completion.candidates import Candidate, Completion


class CompletionMenu(OptionList):
    """A dropdown of candidates. It never takes focus: the prompt drives it with keys."""

    DEFAULT_CSS = """
    CompletionMenu {
        display: none;
        height: auto;
        max-height: 8;
        border: none;
        padding: 0 1;
    }
    CompletionMenu.-open {
        display: block;
    }
    """

    can_focus = False

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.completion: Completion | None = None

    @property
    def is_open(self) -> bool:
        """Whether the menu is showing candidates."""
        return self.completion is not None

    def show(self, completion: Completion | None) -> None:
        """Show ``completion``'s candidates (or close the menu when it is ``None``)."""
        if completion is None or not completion.candidates:
            self.close()
            return
        self.completion = completion
        self.set_options(self._option(c) for c in completion.candidates)
        self.highlighted = 0
        self.add_class("-open")

    def close(self) -> None:
        """Hide the menu and forget its candidates."""
        self.completion = None
        self.clear_options()
        self.remove_class("-open")

    def move(self, delta: int) -> None:
        """Move the highlight by ``delta`` rows, wrapping around."""
        if not self.option_count:
            return
        current = self.highlighted or 0
        self.highlighted = (current + delta) % self.option_count

    @property
    def selected(self) -> Candidate | None:
        """The highlighted candidate."""
        if self.completion is None or self.highlighted is None:
            return None
        return self.completion.candidates[self.highlighted]

    @staticmethod
    def _option(candidate: Candidate) -> Option:
        label = Text(candidate.value, no_wrap=True, overflow="ellipsis")
        label.append(f"  {candidate.about or candidate.kind}", style="dim")
        return Option(label)

"""The main screen's footer: the keys that matter most come first, so a narrow terminal
cuts the least needed ones."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: Actions in the order their keys are shown; keys of other actions follow, as bound.
KEY_ORDER = (
    "cancel_or_copy",
    "quit",
    "open_help",
    "toggle_side",
    "command_palette",
    "open_history",
    "open_config",
    "open_pager",
    "open_inspect",
)


def _rank(widget: object) -> int:
    action = widget.action if isinstance(widget, FooterKey) else ""
    return KEY_ORDER.index(action) if action in KEY_ORDER else len(KEY_ORDER)


class SmithFooter(Footer):
    """A footer that shows Cancel, Quit, Help, Panes and Commands before the rest."""

    def compose(self) -> ComposeResult:
        """Textual's footer keys, the most important first (the sort is stable)."""
        yield from sorted(super().compose(), key=_rank)

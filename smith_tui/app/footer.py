"""The main screen's footer: the keys that matter most come first, so a narrow terminal
cuts the least needed ones."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer

from smith_tui.widgets.textual_compat import footer_key_action

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
    action = footer_key_action(widget) or ""
    return KEY_ORDER.index(action) if action in KEY_ORDER else len(KEY_ORDER)


class SmithFooter(Footer):
    """A footer that shows Cancel, Quit, Help, Panes and Commands before the rest.

    Its keys are in the first frame: Textual's footer composes empty and fills itself one
    refresh later, which on start-up is where the session's opening (in a thread) competes
    with it for the interpreter.
    """

    def __init__(self, *, show_command_palette: bool = True) -> None:
        super().__init__(show_command_palette=show_command_palette)
        self._keys_from_start = False

    def compose(self) -> ComposeResult:
        """Textual's footer keys, the most important first (the sort is stable)."""
        if not self._keys_from_start and self.is_attached:
            self._keys_from_start = True
            # Marks the bindings as known (the app and screen keys are, before any focus);
            # the recompose it schedules adds what the focused widget binds.
            self.bindings_changed(self.screen)
        yield from sorted(super().compose(), key=_rank)

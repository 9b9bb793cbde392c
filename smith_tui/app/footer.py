"""The main screen's footer: the keys that matter most come first, so a narrow terminal
cuts the least needed ones."""

from __future__ import annotations

from typing import Any

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
        self._shown: tuple[Any, ...] | None = None
        """What the keys shown were composed from (see :meth:`_keys_signature`)."""

    def compose(self) -> ComposeResult:
        """Textual's footer keys, the most important first (the sort is stable)."""
        if not self._keys_from_start and self.is_attached:
            self._keys_from_start = True
            # Marks the bindings as known (the app and screen keys are, before any focus);
            # the recompose it schedules adds what the focused widget binds.
            self.bindings_changed(self.screen)
        self._shown = self._keys_signature()
        yield from sorted(super().compose(), key=_rank)

    async def recompose(self) -> None:
        """Compose the keys again, unless they would be the same as those shown.

        Textual recomposes the footer whenever the screen's bindings may have changed (each
        focus change, a keymap set): a few times on start-up, each one ~20 FooterKeys built,
        styled and laid out again, mostly to show the same keys.
        """
        if self._shown is not None and self._keys_signature() == self._shown:
            return
        await super().recompose()

    def _keys_signature(self) -> tuple[Any, ...] | None:
        """What :meth:`compose` builds the keys from: the shown bindings (key, how it is
        displayed, description, action, group, enabled, tooltip) and the footer's options;
        ``None`` before the bindings are known (or off a screen)."""
        if not self._bindings_ready or not self.is_attached:
            return None
        app = self.app
        shown = tuple(
            (
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                binding.group,
                binding.show,
                binding.tooltip,
                enabled,
                tooltip,
            )
            for _, binding, enabled, tooltip in self.screen.active_bindings.values()
            if binding.show or binding.key == app.COMMAND_PALETTE_BINDING
        )
        return shown, self.compact, self.show_command_palette, app.ENABLE_COMMAND_PALETTE

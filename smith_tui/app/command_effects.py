"""What the app does for a slash command's output besides showing it: copy text to the
clipboard, open a file in the user's editor, open a picker or a screen, quit.

A command asks by its output's ``action`` (``copy``, ``edit``, a picker in :data:`PICKERS`,
a screen in ``app.SCREENS``, ``quit``); the engine knows nothing of screens.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from smith_tui.app.bindings import key_for

if TYPE_CHECKING:
    from textual.app import App

    from smith_tui.engine import events as ev
    from smith_tui.engine.runtime import Runtime

#: Pickers built from a command's output: action → (module, function of runtime and data).
PICKERS: dict[str, tuple[str, str]] = {
    "models": ("smith_tui.app.screens.models_picker", "models_picker"),
    "search": ("smith_tui.app.screens.search_hits", "search_picker"),
}


def copy_text(app: App[Any], keymap: dict[str, str], text: str, what: str) -> None:
    """Put ``text`` on the clipboard through the terminal (OSC 52) and say so, with the way
    out for terminals that do not pass it on (the pager's key from ``keymap``)."""
    app.copy_to_clipboard(text)
    pager = key_for(keymap, "pager")
    app.notify(
        f"Copied {what} to the clipboard. Nothing arrived? Your terminal does not pass "
        f"OSC 52 copies on: open the transcript ({pager}) and select the text there.",
        timeout=6,
    )


def edit_file(app: App[Any], path: str) -> None:
    """Open ``path`` in the user's editor (``$VISUAL``, ``$EDITOR``, else ``vi``), the screen
    suspended until it exits (``/memory open``); a failure is a notice."""
    from smith_tui.app.external_editor import open_in_editor

    async def edit() -> None:
        failed = await open_in_editor(app, path, fallback="vi")
        if failed is not None:
            app.notify(f"{failed}.", title=f"Could not edit {path}", severity="error")

    app.run_worker(edit(), group="editor", exclusive=True, exit_on_error=False)


def open_picker(
    app: App[Any],
    runtime: Runtime,
    action: str,
    output: ev.CommandOutput,
    pin_model: Callable[[str], None],
) -> None:
    """Show the picker of a command's output: a chosen model is given to ``pin_model``
    (``/model ID``), a chosen ``/search`` hit opens the pager at its message."""
    module_name, function = PICKERS[action]
    picker = getattr(importlib.import_module(module_name), function)(runtime, output.data)

    def chosen(key: str | None) -> None:
        if key is None:
            return
        if action == "models":
            pin_model(key)
        else:
            from smith_tui.app.screens.search_hits import hit_pager

            hit = output.data["hits"][int(key)]
            app.push_screen(hit_pager(runtime, hit, str(output.data.get("query") or "")))

    app.push_screen(picker, chosen)

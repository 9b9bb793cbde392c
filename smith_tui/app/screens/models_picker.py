"""The ``/models`` picker: the server's models, the one in use marked; enter switches to one.

Choosing a model runs ``/model ID`` (pins it to the conversation), so the picker and the
typed command are one code path with one message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from textual.content import Content

from smith_tui.app.screens.picker_screen import PickerScreen
from smith_tui.terminal_text import visible

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

IN_USE = "in use"
"""The words after the model the next request uses."""


def model_in_use(runtime: Runtime) -> str:
    """The model the next request uses (the flag, the pin, the last request), else the
    configured ``default_model``; ``""`` when nothing says."""
    known = runtime.model
    if known:
        return known
    configured = runtime.config.effective.get("default_model")
    return configured if isinstance(configured, str) else ""


def models_picker(runtime: Runtime, data: Mapping[str, Any]) -> PickerScreen:
    """The picker of ``/models``'s output ``data`` (``models`` ids, ``rows`` their lines)."""
    ids = [str(model) for model in data.get("models") or []]
    lines = [str(line) for line in data.get("rows") or ids]
    current = model_in_use(runtime)
    rows: list[tuple[str, Content | str]] = []
    for model, line in zip(ids, lines, strict=False):
        if model == current:
            label = Content.assemble(
                ("● ", "bold $success"), (visible(line), "bold"), (f"  ({IN_USE})", "$success")
            )
            rows.append((model, label))
        else:
            rows.append((model, Content("  " + visible(line))))
    note = f"In use: {current}." if current else "No request has chosen a model yet."
    note += " Enter pins the highlighted model to this conversation (as /model ID does)."
    start = ids.index(current) if current in ids else None
    return PickerScreen("Models", rows, note=note, highlighted=start)

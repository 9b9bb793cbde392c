"""The app's key bindings and the keymap built from ``services.ui.keys``.

Every configurable binding has a stable id (``smith.<name>``); the configured keys are
applied as a Textual keymap, so the footer and the help screen show the keys in effect.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding

MODIFIERS = ("ctrl", "alt", "shift", "super", "meta", "hyper")

#: Binding id of each ``services.ui.keys`` field.
CONFIGURABLE = {
    "cancel": "smith.cancel",
    "pager": "smith.pager",
    "inspect": "smith.inspect",
    "palette": "smith.palette",
    "permission_mode": "smith.mode",
    "tool_results": "smith.tool_results",
    "dispatch_tree": "smith.dispatch_tree",
    "pause": "smith.pause",
    "step": "smith.step",
    "quit": "smith.quit",
    "external_editor": "smith.editor",
    "paste_image": "smith.paste_image",  # the prompt's binding (widgets/prompt_input.py)
}

APP_BINDINGS: list[Binding] = [
    Binding("ctrl+c", "cancel_or_copy", "Cancel", id="smith.cancel", priority=True),
    Binding("alt+h", "open_pager", "Transcript", id="smith.pager", priority=True),
    Binding("alt+i", "open_inspect", "Inspect", id="smith.inspect", priority=True),
    Binding("ctrl+r", "open_history", "History", id="smith.history", priority=True),
    Binding("f2", "open_config", "Config", id="smith.config", priority=True),
    Binding("f1", "open_help", "Help", id="smith.help", priority=True),
    Binding("f3", "toggle_side", "Panes", id="smith.side", priority=True),
    Binding(
        "f4", "cycle_mode", "Permission mode (cycle)", id="smith.mode", priority=True, show=False
    ),
    Binding(
        "alt+e",
        "toggle_tool_results",
        "Tool results (all)",
        id="smith.tool_results",
        priority=True,
        show=False,
    ),
    Binding(
        "alt+d",
        "focus_dispatch",
        "Dispatch tree",
        id="smith.dispatch_tree",
        priority=True,
        show=False,
    ),
    Binding(
        "alt+p",
        "pause_turn",
        "Pause / resume the turn",
        id="smith.pause",
        priority=True,
        show=False,
    ),
    Binding(
        "alt+s", "step_turn", "Step the paused turn", id="smith.step", priority=True, show=False
    ),
    Binding(
        "ctrl+g",
        "external_editor",
        "Edit in $EDITOR",
        id="smith.editor",
        priority=True,
        show=False,
    ),
    Binding("ctrl+p", "command_palette", "Commands", id="smith.palette", priority=True),
    Binding("ctrl+q", "quit", "Quit", id="smith.quit", priority=True),
]
"""The app-level bindings (defaults; the keymap replaces the configurable keys).

All are priority bindings: the prompt (a TextArea) binds many keys of its own (f6, f7,
ctrl+c…), and a key the user configured must reach the app wherever the focus is.
"""


def normalize_key(spec: str) -> str:
    """A configured key in Textual's spelling: ``ALT+h`` → ``alt+h``, ``ctrl-c`` → ``ctrl+c``.

    Commas separate alternative keys. A one-letter key keeps its case (``H`` means shift+h);
    named keys are lower-cased (``F6`` → ``f6``).
    """
    keys = []
    for one in spec.split(","):
        one = one.strip()
        if not one:
            continue
        parts = one.replace("-", "+").split("+") if _uses_dashes(one) else one.split("+")
        *mods, key = parts
        key = key.strip()
        keys.append(
            "+".join([m.strip().lower() for m in mods] + [key if len(key) == 1 else key.lower()])
        )
    return ",".join(keys)


def _uses_dashes(spec: str) -> bool:
    head = spec.split("-", 1)[0].lower()
    return "-" in spec and "+" not in spec and head in MODIFIERS


def keymap_for(keys: Any) -> dict[str, str]:
    """The keymap (binding id → keys) for a ``services.ui.keys`` section (or a dict of it)."""
    values = (
        keys
        if isinstance(keys, dict)
        else {name: getattr(keys, name, None) for name in CONFIGURABLE}
    )
    keymap = {}
    for name, binding_id in CONFIGURABLE.items():
        value = values.get(name)
        if isinstance(value, str) and value.strip():
            keymap[binding_id] = normalize_key(value)
    return keymap


def key_for(keymap: dict[str, str], name: str) -> str:
    """The first key bound to configurable binding ``name`` (its default when not configured)."""
    binding_id = CONFIGURABLE[name]
    if binding_id in keymap:
        return keymap[binding_id].split(",")[0]
    for binding in APP_BINDINGS:
        if binding.id == binding_id:
            return binding.key.split(",")[0]
    raise KeyError(name)

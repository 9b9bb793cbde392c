"""The built-in tools every runtime registers (docs/DESIGN.md §3.2).

``dispatch`` and ``report`` belong to the engine layer and are registered by
the runtime, not here.
"""

from __future__ import annotations

import importlib
from typing import Any

from smith_tui.tools.spec import ToolSpec

_MODULES = (
    "smith_tui.tools.builtin.bash",
    "smith_tui.tools.builtin.read",
    "smith_tui.tools.builtin.edit",
    "smith_tui.tools.builtin.write",
    "smith_tui.tools.builtin.web_search",
    "smith_tui.tools.builtin.web_fetch",
    "smith_tui.tools.builtin.git",
    "smith_tui.tools.builtin.code",
    "smith_tui.tools.builtin.memory",
    "smith_tui.tools.builtin.note",
    "smith_tui.tools.builtin.todo",
    "smith_tui.tools.builtin.history_search",
)


def builtin_tools() -> list[ToolSpec[Any]]:
    """Return the specs of every built-in tool module (``TOOL`` or ``TOOLS``)."""
    specs: list[ToolSpec[Any]] = []
    for name in _MODULES:
        module = importlib.import_module(name)
        if hasattr(module, "TOOLS"):
            specs.extend(module.TOOLS)
        elif hasattr(module, "TOOL"):
            specs.append(module.TOOL)
    return specs

"""The permission modes and the sandbox modes: plain names, no pydantic.

The command line's ``--permission-mode`` choices and the status line's first frame read
these before the schema is imported (importing pydantic costs about 0.1 s of every start);
the schema's fields are typed with the same ``Literal`` types.
"""

from __future__ import annotations

from typing import Literal, get_args

PermissionMode = Literal["read-only", "ask", "auto-edit", "yolo", "plan"]
PERMISSION_MODES: tuple[str, ...] = get_args(PermissionMode)
"""The modes in the order ``/mode`` and the app's key cycle through them: the one list
every front end (the CLI's choices, ``/mode``, ACP's session modes) reads."""
MODE_TEXT: dict[str, tuple[str, str]] = {
    "read-only": ("Read only", "No edits or writes; bash only sandboxed read-only; no workers."),
    "ask": ("Ask", "bash, edit, write, web_fetch, dispatch and MCP tools ask first."),
    "auto-edit": ("Auto edit", "Edits inside the project go through; the rest asks."),
    "yolo": ("Yolo", "Nothing asks."),
    "plan": (
        "Plan",
        "Only reading tools and explorers run; the turn ends with a plan to approve.",
    ),
}
"""Each mode's short name and one-line description (ACP's session modes, the help)."""
MODES_USAGE = "|".join(PERMISSION_MODES)
"""``read-only|ask|…``: the modes as a usage string says them."""

SandboxMode = Literal["off", "auto", "on"]
SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)
"""``sandbox.mode``'s values."""

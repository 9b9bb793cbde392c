"""How a finished tool call turned out, as every view shows it.

A command that ran to its end but exited non-zero is reported to the model as a result
(``exit code: 1`` and its output), so the engine's ``ok`` stays true; a person reading the
screen still needs to see that it failed. :func:`failed_exit` finds that case in the
result's metadata, :func:`call_state` folds it into the one state the views draw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

CallState = Literal["running", "ok", "error", "cancelled"]


def failed_exit(metadata: Mapping[str, Any] | None) -> int | None:
    """The non-zero exit code a tool result's metadata records, else ``None``."""
    code = (metadata or {}).get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return code
    return None


def call_state(
    *, finished: bool, ok: bool, cancelled: bool, metadata: Mapping[str, Any] | None
) -> CallState:
    """``running`` until finished; then ``cancelled``, ``error`` (the tool failed or the
    command exited non-zero) or ``ok``."""
    if not finished:
        return "running"
    if cancelled:
        return "cancelled"
    if not ok or failed_exit(metadata) is not None:
        return "error"
    return "ok"


def exit_label(metadata: Mapping[str, Any] | None) -> str:
    """``exit 1`` for a command that exited non-zero, else ``""``."""
    code = failed_exit(metadata)
    return f"exit {code}" if code is not None else ""

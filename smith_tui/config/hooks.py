"""The ``hooks`` table: programs the user runs at points of a session (README, Hooks).

The event names and the shape follow Claude Code's hooks, so scripts written for it run
unchanged: per event a list of entries, each a ``command`` run through the shell, an
optional ``matcher`` on the tool name and a ``timeout_s``. The same shape is read from a
repository's ``.smith/settings.json`` once the user trusts it (``engine/hooks/trust.py``).
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import Field, field_validator

from smith_tui.config.fields import NonEmptyStr, PositiveNumber
from smith_tui.config.section import Section

HookEvent = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
]
HOOK_EVENTS: tuple[str, ...] = get_args(HookEvent)
"""Every hook event, in the order a session meets them (the ``HookEvent`` names)."""

DEFAULT_HOOK_TIMEOUT_S = 60.0
"""Seconds a hook may run before its process group is killed."""


class HookEntry(Section):
    """One hook: a shell command run when its event comes (and its matcher fits)."""

    command: NonEmptyStr = Field(
        description="Shell command (run by /bin/sh -c, as you, outside the sandbox)."
    )
    matcher: str = Field(
        "",
        description=(
            "Tool names it is for (PreToolUse, PermissionRequest, PostToolUse): an exact "
            "name or a regular expression matched against the whole name, case-insensitive "
            "(Bash, edit|write, mcp__.*); empty or * means every tool."
        ),
    )
    timeout_s: PositiveNumber = Field(
        DEFAULT_HOOK_TIMEOUT_S, description="Seconds before the hook is stopped (its whole group)."
    )

    @field_validator("matcher")
    @classmethod
    def _valid_pattern(cls, value: str) -> str:
        if value.strip() in ("", "*"):
            return value
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(
                f"matcher {value!r} is not a tool name or a regular expression ({exc})"
            ) from None
        return value


HooksTable = dict[HookEvent, list[HookEntry]]
"""The ``hooks`` table: entries by event name."""


def claude_entries(value: Any) -> Any:
    """Accept Claude Code's nested form too: ``{"matcher", "hooks": [{"type": "command",
    "command", "timeout"}]}`` becomes one flat entry per command (anything else is
    returned as it is, for validation to judge)."""
    if not isinstance(value, dict):
        return value
    flat: dict[Any, Any] = {}
    for event, entries in value.items():
        if not isinstance(entries, list):
            flat[event] = entries
            continue
        out: list[Any] = []
        for entry in entries:
            inner = entry.get("hooks") if isinstance(entry, dict) else None
            if not isinstance(inner, list):
                out.append(entry)
                continue
            extra = set(entry) - {"matcher", "hooks"}
            for hook in inner:
                if not isinstance(hook, dict) or extra:
                    out.append(entry)  # validation says what is wrong
                    break
                item: dict[str, Any] = {
                    key: val for key, val in hook.items() if key not in ("type", "timeout")
                }
                if hook.get("type", "command") != "command":
                    item["type"] = hook.get("type")  # refused: only command hooks exist here
                if "timeout" in hook:
                    item["timeout_s"] = hook["timeout"]
                if "matcher" in entry:
                    item["matcher"] = entry["matcher"]
                out.append(item)
        flat[event] = out
    return flat

"""Smith's tools under the names and argument keys Claude Code's hooks use.

A hook script written for Claude Code reads ``tool_name`` (``Bash``, ``Edit``, ``Write``…)
and ``tool_input.file_path``. The payload therefore names a tool Claude Code also has by
Claude Code's name (Smith's own is ``smith_tool_name``) and adds Claude Code's key for a
path beside Smith's ``path``; Smith's keys are never replaced. Tools without a counterpart
keep their Smith name. Matchers accept either name (``Bash`` and ``bash`` both match).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

CLAUDE_NAMES: Mapping[str, str] = {
    "bash": "Bash",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "dispatch": "Task",
    "code_grep": "Grep",
    "todo": "TodoWrite",
}
"""Smith tool → the Claude Code tool that does the same job."""

_PATH_TOOLS = frozenset({"read", "write", "edit"})


def claude_name(name: str) -> str:
    """The name a Claude Code hook knows the tool by (``name`` itself when there is none)."""
    return CLAUDE_NAMES.get(name, name)


def claude_input(name: str, tool_input: Any, cwd: str) -> Any:
    """``tool_input`` with Claude Code's keys added: ``file_path`` (absolute) for a path
    tool, ``prompt``/``subagent_type`` for a dispatch, ``timeout`` (ms) for bash."""
    if not isinstance(tool_input, Mapping):
        return tool_input
    extra: dict[str, Any] = {}
    path = tool_input.get("path")
    if name in _PATH_TOOLS and isinstance(path, str) and path:
        extra["file_path"] = path if os.path.isabs(path) else os.path.join(cwd, path)
    if name == "dispatch":
        extra["prompt"] = tool_input.get("task")
        extra["subagent_type"] = tool_input.get("target_role")
    timeout = tool_input.get("timeout_s")
    if name == "bash" and isinstance(timeout, int | float) and not isinstance(timeout, bool):
        extra["timeout"] = int(timeout * 1000)
    return {**extra, **tool_input}

"""How every front end words numbers and tool calls: token counts, durations, key arguments.

Pure functions without Textual, shared by the widgets, the headless printer and ``smith acp``
so the panes, the transcript, ``smith -p`` and an editor say the same thing the same way.
(It sits in the engine, below the widgets and the app, so that neither imports the other.)
"""

from __future__ import annotations

import json
from typing import Any

from smith_tui.engine.roles import role_display
from smith_tui.engine.usage_ledger import format_tokens as format_tokens  # also the engine's /usage
from smith_tui.terminal_text import visible


def format_duration(seconds: float | None) -> str:
    """A short duration: ``0.4s``, ``12s``, ``2m05s``, ``1h02m`` ("" when unknown).

    Whole units are cut, never rounded up, so a running clock never shows a second early.
    """
    if seconds is None:
        return ""
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{int(seconds)}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def role_label(role: str) -> tuple[str, str]:
    """The alias of ``role`` and its header style: bold, in the role's tint when it has one."""
    alias, tint = role_display(role)
    return alias, f"bold {tint}" if tint else "bold"


#: The argument that identifies what a call does, per tool.
KEY_ARGUMENTS: dict[str, str] = {
    "bash": "command",
    "read": "path",
    "edit": "path",
    "write": "path",
    "code_grep": "pattern",
    "code_files": "query",
    "code_outline": "path",
    "web_fetch": "url",
    "web_search": "query",
    "dispatch": "task",
    "report": "status",
    "note": "key",
    "record": "key",
    "recall": "key",
    "history_search": "query",
}

#: Tried in order for tools not listed above.
_FALLBACK_KEYS = ("command", "pattern", "query", "url", "path", "name", "key", "task", "action")


def _as_object(arguments: str | dict[str, Any] | None) -> dict[str, Any] | None:
    """The arguments as a dict, or None when they are not a JSON object."""
    if isinstance(arguments, dict):
        return arguments
    # Imported here: the llm package's import (httpx, ...) stays out of the first frame.
    from smith_tui.llm.nesting import load_json

    try:
        value = load_json(arguments) if arguments else None
    except (TypeError, ValueError):  # not JSON, or nested too deeply to decode safely
        return None
    return value if isinstance(value, dict) else None


def parse_arguments(arguments: str | dict[str, Any] | None) -> dict[str, Any]:
    """Return the call's arguments as a dict ({} when they are not a JSON object)."""
    return _as_object(arguments) or {}


def _one_line(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    # The model chose the arguments: their control characters are shown, never obeyed.
    return " ".join(visible(text).split())


def _given(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def key_argument(name: str, arguments: str | dict[str, Any] | None) -> str:
    """The argument that says what a call does, on one line ("" when there is none).

    The command, path, pattern or query as the tool names it; ``role: task`` for a dispatch,
    ``N items`` for a todo list, the subcommand and its arguments for git. Arguments that
    are not a JSON object show as their text.
    """
    args = _as_object(arguments)
    if args is None:
        return _one_line(arguments) if isinstance(arguments, str) else ""
    if name == "dispatch":
        parts = (args.get("target_role"), args.get("task"))
        return ": ".join(_one_line(p) for p in parts if _given(p))
    if name == "todo" and isinstance(args.get("items"), list):
        return f"{len(args['items'])} items"
    if name == "git":
        extra = args.get("args")
        tail = " ".join(map(str, extra)) if isinstance(extra, list) else str(extra or "")
        return _one_line(f"{args.get('command') or ''} {tail}")
    key = KEY_ARGUMENTS.get(name)
    value = args.get(key) if key is not None else None
    if not _given(value):
        value = next((args[k] for k in _FALLBACK_KEYS if _given(args.get(k))), None)
    if value is None:
        value = next((v for v in args.values() if isinstance(v, str) and v.strip()), None)
    return "" if value is None else _one_line(value)

"""Pick the one argument of a tool call worth showing on its compact line."""

from __future__ import annotations

import json
from typing import Any

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
    "note": "key",
    "record": "key",
    "recall": "key",
}

#: Tried in order for tools not listed above.
_FALLBACK_KEYS = ("command", "path", "pattern", "query", "url", "key", "task", "name")


def parse_arguments(arguments: str | dict[str, Any] | None) -> dict[str, Any]:
    """Return the call's arguments as a dict ({} when they are not a JSON object)."""
    if isinstance(arguments, dict):
        return arguments
    if not arguments:
        return {}
    try:
        value = json.loads(arguments)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def key_argument(name: str, arguments: str | dict[str, Any] | None) -> str:
    """The argument shown next to the tool name, on one line ("" when there is none)."""
    args = parse_arguments(arguments)
    if not args:
        return arguments.strip() if isinstance(arguments, str) else ""
    value: Any = None
    key = KEY_ARGUMENTS.get(name)
    if key is not None:
        value = args.get(key)
    if value is None:
        value = next((args[k] for k in _FALLBACK_KEYS if args.get(k) is not None), None)
    if value is None:
        value = next((v for v in args.values() if isinstance(v, str)), None)
    if value is None:
        return ""
    if name == "dispatch" and isinstance(args.get("target_role"), str):
        value = f"{args['target_role']}: {value}"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return " ".join(text.split())

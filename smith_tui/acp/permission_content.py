"""What a permission question shows in the editor, by tool.

Clients render a question's text content as Markdown: a unified diff sent as text loses
its line breaks and a dict shows as a Python ``repr``. So ``edit``/``write`` send a
``diff`` (the whole old and new text; Toad then opens its side-by-side approval),
``bash`` a fenced block with the command, ``dispatch`` who is asked to do what, and
other tools their arguments one per line (JSON for structured values).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from acp import tool_diff_content

from smith_tui.acp import updates
from smith_tui.engine.permission_gate import PermissionRequest, edited_text


def fenced(text: str, language: str = "") -> str:
    """``text`` in a Markdown code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)


def arguments_text(arguments: Mapping[str, Any]) -> str:
    """``key: value`` per argument; a structured value as indented JSON in a fence."""
    lines: list[str] = []
    for key, value in arguments.items():
        if value is None:
            continue
        shown = _value(value)
        if isinstance(value, str) and "\n" not in shown:
            lines.append(f"{key}: {shown}")
        else:
            lines.append(f"{key}:\n{fenced(shown, '' if isinstance(value, str) else 'json')}")
    return "\n".join(lines)


def dispatch_text(arguments: Mapping[str, Any]) -> str:
    """``explorer`` is asked to: the task, then the context it gets."""
    role = str(arguments.get("target_role") or "a sub-agent")
    lines = [f"Dispatch **{role}** to: {arguments.get('task') or '(no task)'}"]
    context = arguments.get("context")
    if isinstance(context, Mapping) and context:
        lines += ["", arguments_text(context)]
    elif context:
        lines += ["", _value(context)]
    rest = {k: v for k, v in arguments.items() if k not in ("target_role", "task", "context")}
    if rest:
        lines += ["", arguments_text(rest)]
    return "\n".join(lines)


def new_text(tool: str, arguments: Mapping[str, Any], old: str | None) -> str | None:
    """The file text ``write``/``edit`` would leave (``None``: cannot tell)."""
    if tool == "write":
        content = arguments.get("content")
        return content if isinstance(content, str) else None
    if tool == "edit" and old is not None:
        fields = {"operation": None, "start_line": None, "end_line": None, "text": None}
        try:
            return edited_text(old, SimpleNamespace(**{**fields, **arguments}))
        except (TypeError, ValueError):
            return None
    return None


def content(request: PermissionRequest, cwd: Path, old: str | None) -> list[Any]:
    """The question's tool call content; ``old`` is the file's text now (``None``: the
    file does not exist or cannot be shown)."""
    arguments = dict(request.arguments)
    reason = f"({request.reason})"
    if request.tool in ("edit", "write"):
        path = updates.file_path(request.tool, arguments, cwd)
        # old is None for a new file, and for one too big or not text: no diff for that one
        if path is not None and (old is not None or not path.exists()):
            after = new_text(request.tool, arguments, old or "")
            if after is not None:
                diff = tool_diff_content(str(path), after, old)
                return [diff, *updates.text_content(reason)]
    if request.tool == "bash":
        command = str(arguments.get("command") or request.preview)
        return updates.text_content(f"{fenced(command, 'sh')}\n\n{reason}")
    if request.tool == "dispatch":
        return updates.text_content(f"{dispatch_text(arguments)}\n\n{reason}")
    if request.tool in ("edit", "write"):  # no diff could be made: the engine's preview
        return updates.text_content(f"{fenced(request.preview, 'diff')}\n\n{reason}")
    return updates.text_content(f"{arguments_text(arguments)}\n\n{reason}")

"""Plain-text renderings of stored messages: the whole transcript and one-line previews.

:func:`transcript_text` is the one renderer of a conversation as text: the pager shows its
plain form, ``/pager`` answers and ``/export`` writes its Markdown form. Neither form makes
the text safe for a terminal (the pager's widget and ``/export`` do that with ``visible``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from smith_tui.terminal_text import visible

PREVIEW_WIDTH = 60
HEADING_PREFIX = "── "
"""How each message's header line starts in the transcript text."""


def tool_call_parts(call: Mapping[str, Any]) -> tuple[str, str, str]:
    """``(id, name, arguments)`` of one wire-format tool call."""
    function = call.get("function") or {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return str(call.get("id") or ""), str(function.get("name") or "?"), arguments


def message_label(message: Mapping[str, Any]) -> str:
    """``user``, ``assistant``, ``tool bash``... for headers and lists."""
    role = str(message.get("role") or "?")
    if role == "tool" and message.get("name"):
        return f"tool {message['name']}"
    return role


def message_preview(message: Mapping[str, Any], width: int = PREVIEW_WIDTH) -> str:
    """One line: the first non-empty line of the content, else the tool calls."""
    content = visible(str(message.get("content") or ""))
    line = next((part.strip() for part in content.splitlines() if part.strip()), "")
    if not line and message.get("tool_calls"):
        names = [tool_call_parts(call)[1] for call in message["tool_calls"]]
        line = "→ " + ", ".join(names)
    if not line:
        line = "(empty)"
    if len(line) > width:
        line = line[: width - 1] + "…"
    return line


def message_text(message: Mapping[str, Any]) -> str:
    """The full text of one message: header, reasoning, content and tool calls, nothing elided."""
    position = message.get("position")
    number = f"#{position} " if position is not None else ""
    header = f"{HEADING_PREFIX}{number}{message_label(message)}"
    if message.get("tool_call_id"):
        header += f" [{message['tool_call_id']}]"
    parts = [header + " " + "─" * max(3, 40 - len(header))]
    if message.get("reasoning"):
        parts.append("(reasoning)")
        parts.extend("  " + line for line in str(message["reasoning"]).splitlines())
    if message.get("content"):
        parts.append(str(message["content"]).rstrip("\n"))
    for call in message.get("tool_calls") or []:
        call_id, name, arguments = tool_call_parts(call)
        parts.append(f"→ {name} {arguments}" + (f"  [{call_id}]" if call_id else ""))
    return "\n".join(parts)


def message_markdown(message: Mapping[str, Any]) -> str:
    """One message as Markdown: a bold header, the content, a tool's output fenced."""
    role = message.get("role")
    if role == "tool":
        return f"**tool {message.get('name') or ''}**\n\n```\n{message.get('content') or ''}\n```"
    if role == "assistant" and message.get("tool_calls"):
        parts = [tool_call_parts(call) for call in message["tool_calls"]]
        calls = ", ".join(f"{name}({arguments})" for _id, name, arguments in parts)
        text = message.get("content") or ""
        return f"**assistant**\n\n{text}\n\n→ {calls}".strip()
    return f"**{role}**\n\n{message.get('content') or ''}"


def transcript_text(messages: Sequence[Mapping[str, Any]], *, markdown: bool = False) -> str:
    """The whole conversation as one text: what the pager shows (every message with its
    number, reasoning and call ids, nothing elided), or with ``markdown`` the Markdown of
    ``/pager`` and ``/export`` (messages between rules, tool output in code fences)."""
    if markdown:
        return "\n\n---\n\n".join(message_markdown(message) for message in messages)
    if not messages:
        return "(this conversation has no messages yet)"
    return "\n\n".join(message_text(message) for message in messages) + "\n"

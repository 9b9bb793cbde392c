"""Engine facts as ACP session updates: tool calls, plans, and a stored conversation replayed.

Pure functions over the engine's events and stored messages; :mod:`smith_tui.acp.session`
decides when to send them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import PlanEntryStatus, ToolCallLocation, ToolKind

from smith_tui.engine.presentation import key_argument
from smith_tui.llm.nesting import load_json

KINDS: dict[str, ToolKind] = {
    "read": "read",
    "edit": "edit",
    "write": "edit",
    "bash": "execute",
    "git": "execute",
    "web_fetch": "fetch",
    "web_search": "fetch",
    "todo": "think",
    "note": "think",
    "memory": "think",
    "report": "think",
}
"""The ACP kind of each built-in tool (others, ``dispatch`` and MCP tools: ``other``)."""

FILE_TOOLS = ("read", "edit", "write")
OUTPUT_CHARS = 8000
"""Most characters of a tool's output or result shown in the editor."""

PLAN_STATUS: dict[str, PlanEntryStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "done": "completed",
}


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of tool ``name``."""
    if name.startswith("code_"):
        return "search"
    return KINDS.get(name, "other")


def parse_arguments(arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """A call's arguments as an object (``{}`` when they are not a JSON object)."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        value = load_json(arguments or "{}")
    except ValueError:  # not JSON, or nested too deeply to decode safely
        return {}
    return value if isinstance(value, dict) else {}


def tool_title(name: str, arguments: str | Mapping[str, Any] | None, who: str = "") -> str:
    """``read src/a.py``; ``explorer: read src/a.py`` for a sub-agent's call."""
    key = key_argument(name, dict(arguments) if isinstance(arguments, Mapping) else arguments)
    key = " ".join(key.split())
    if len(key) > 120:
        key = key[:119] + "…"
    title = f"{name} {key}".strip()
    return f"{who}: {title}" if who else title


def file_path(name: str, args: Mapping[str, Any], cwd: Path) -> Path | None:
    """The absolute file a ``read``/``edit``/``write`` call touches."""
    raw = args.get("path")
    if name not in FILE_TOOLS or not isinstance(raw, str) or not raw.strip():
        return None
    path = Path(raw).expanduser()
    return path if path.is_absolute() else cwd / path


def locations(name: str, args: Mapping[str, Any], cwd: Path) -> list[ToolCallLocation] | None:
    """Where a file tool call looks or writes (the line when it names one)."""
    path = file_path(name, args, cwd)
    if path is None:
        return None
    line = args.get("offset") if name == "read" else args.get("start_line")
    return [ToolCallLocation(path=str(path), line=line if isinstance(line, int) else None)]


def clip(text: str, limit: int = OUTPUT_CHARS) -> str:
    """The last ``limit`` characters of ``text`` (a note says what was cut)."""
    if len(text) <= limit:
        return text
    return f"[… {len(text) - limit:,} characters cut]\n" + text[-limit:]


def text_content(text: str) -> list[Any]:
    """Tool call content holding ``text`` (nothing for empty text)."""
    return [tool_content(text_block(clip(text)))] if text else []


def plan(items: Sequence[Mapping[str, Any]]) -> Any:
    """The todo list as an ACP plan."""
    return update_plan(
        plan_entry(
            str(item.get("content", "")),
            status=PLAN_STATUS.get(str(item.get("status")), "pending"),
        )
        for item in items
    )


def replay(messages: list[Mapping[str, Any]], cwd: Path) -> Iterator[Any]:
    """The updates that show a stored conversation as it went: the user's prompts, the
    answers, reasoning, and each tool call with its result."""
    names: dict[str, str] = {}
    for message in messages:
        role = message.get("role")
        content = message.get("content") or ""
        if role == "user" and content:
            yield update_user_message_text(str(content))
        elif role == "assistant":
            if message.get("reasoning"):
                yield update_agent_thought_text(str(message["reasoning"]))
            if content:
                yield update_agent_message_text(str(content))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                name = str(function.get("name") or "tool")
                args = parse_arguments(function.get("arguments"))
                call_id = str(call.get("id"))
                names[call_id] = name
                yield start_tool_call(
                    call_id,
                    tool_title(name, args),
                    kind=tool_kind(name),
                    status="in_progress",
                    locations=locations(name, args, cwd),
                    raw_input=args,
                )
        elif role == "tool":
            call_id = str(message.get("tool_call_id"))
            metadata = message.get("metadata") or {}
            ok = metadata.get("ok", True) and not metadata.get("cancelled")
            yield update_tool_call(
                call_id,
                status="completed" if ok else "failed",
                content=text_content(str(content)),
            )

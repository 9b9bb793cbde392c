"""The ``todo`` tool: the plan of the current turn as a whole-list snapshot.

Every call sends the complete new list; it replaces the previous one (last write wins), so
there are no partial-update states. The list is kept as the conversation note ``todo``
(JSON) and returned in the call's metadata as ``{"todo": items}`` for the engine's
``TodoUpdated`` event. The engine calls :func:`clear_todo` when a new user turn starts.
"""

from __future__ import annotations

import json
from typing import Any

from smith_tui.store import Store
from smith_tui.tools.memory import require_conversation, require_store, store_errors
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput, ToolSpec

TODO_NOTE_ID = "todo"
STATUSES = ("pending", "in_progress", "done")
MAX_ITEMS = 100
MAX_CONTENT_CHARS = 1000

_MARKS = {"done": "[x]", "in_progress": "[~]", "pending": "[ ]"}
_STATUS_HINTS = {
    "completed": "done",
    "complete": "done",
    "finished": "done",
    "in-progress": "in_progress",
    "inprogress": "in_progress",
    "in progress": "in_progress",
    "active": "in_progress",
    "doing": "in_progress",
    "todo": "pending",
    "open": "pending",
    "not_started": "pending",
}


def _bad(message: str) -> ToolError:
    return ToolError(message, code="bad_arguments")


def _check_item(index: int, item: Any) -> dict[str, str]:
    where = f"items[{index}]"
    if not isinstance(item, dict):
        raise _bad(
            f"{where} must be an object with `content` and `status`, "
            f"got {type(item).__name__} {item!r:.80}."
        )
    content = item.get("content")
    if content is None:
        raise _bad(f"{where} is missing `content`, the text of the task.")
    if not isinstance(content, str):
        raise _bad(f"{where}.content must be a string, got {type(content).__name__}.")
    content = content.strip()
    if not content:
        raise _bad(f"{where}.content must not be empty.")
    if len(content) > MAX_CONTENT_CHARS:
        raise _bad(
            f"{where}.content is {len(content)} characters; the limit is {MAX_CONTENT_CHARS}."
        )
    status = item.get("status")
    if status is None:
        raise _bad(f"{where} is missing `status` (one of {', '.join(STATUSES)}).")
    if status not in STATUSES:
        hint = _STATUS_HINTS.get(status.strip().lower()) if isinstance(status, str) else None
        raise _bad(
            f"{where}.status {status!r:.40} is not one of {', '.join(STATUSES)}"
            + (f"; use {hint!r}." if hint else ".")
        )
    return {"content": content, "status": status}


def validate_items(value: Any) -> list[dict[str, str]]:
    """Check a proposed todo list and return it as clean ``{content, status}`` dicts.

    Raises :class:`ToolError` naming the first bad item and what to fix.
    """
    if value is None:
        raise _bad(
            "missing required argument `items`, the complete todo list (send [] to clear it)."
        )
    if isinstance(value, str):
        # Some models send the array JSON-encoded as a string.
        try:
            value = json.loads(value)
        except ValueError:
            raise _bad(
                "`items` must be an array of {content, status} objects, got a string "
                "that is not JSON."
            ) from None
    if not isinstance(value, list):
        raise _bad(f"`items` must be an array, got {type(value).__name__}.")
    if len(value) > MAX_ITEMS:
        raise _bad(
            f"`items` has {len(value)} entries; the limit is {MAX_ITEMS}. "
            "Merge small steps into larger ones."
        )
    return [_check_item(index, item) for index, item in enumerate(value)]


def render_todo(items: list[dict[str, str]]) -> str:
    """The list as text: ``[x]`` done, ``[~]`` in progress, ``[ ]`` pending, one item a line."""
    lines = []
    for item in items:
        mark = _MARKS.get(item["status"], "[?]")
        first, *rest = item["content"].splitlines() or [""]
        lines.append(f"{mark} {first}")
        lines += [f"    {line}" for line in rest]
    return "\n".join(lines)


def _summary(items: list[dict[str, str]]) -> str:
    counts = {status: sum(1 for i in items if i["status"] == status) for status in STATUSES}
    return (
        f"{len(items)} item{'s' if len(items) != 1 else ''}: {counts['done']} done, "
        f"{counts['in_progress']} in progress, {counts['pending']} pending"
    )


def load_todo(store: Store, conversation_id: str) -> list[dict[str, str]]:
    """The conversation's current todo list (``[]`` when there is none or it is unreadable)."""
    note = store.notes.get(conversation_id, TODO_NOTE_ID)
    if note is None:
        return []
    try:
        return validate_items(json.loads(note.content))
    except (ValueError, ToolError):
        return []


def save_todo(store: Store, conversation_id: str, items: list[dict[str, str]]) -> None:
    """Replace the conversation's todo list with ``items`` (already validated)."""
    text = json.dumps(items, ensure_ascii=False, sort_keys=True)
    store.notes.put(conversation_id, TODO_NOTE_ID, text)


def clear_todo(store: Store, conversation_id: str) -> bool:
    """Drop the conversation's todo list (a new user turn starts); return whether there was one."""
    return store.notes.delete(conversation_id, TODO_NOTE_ID)


async def handler(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Replace the todo list with ``items`` and return it rendered."""
    items = validate_items(args.get("items"))
    store = require_store(ctx, "todo")
    conversation_id = require_conversation(ctx, "todo")
    with store_errors("save the todo list"):
        save_todo(store, conversation_id, items)
    if items:
        text = f"Todo list updated ({_summary(items)}):\n{render_todo(items)}"
    else:
        text = "Todo list cleared (0 items)."
    return ToolOutput(
        content=text, metadata={"todo": [dict(i) for i in items]}, mutation_state="attempted"
    )


TOOL = ToolSpec(
    name="todo",
    description=(
        "Keep a visible plan for the current task. Send the COMPLETE list every time: it "
        "replaces the previous list (send [] to clear it). Each item has `content` and "
        "`status` (pending, in_progress or done). Mark an item in_progress when you start it "
        "and done as soon as it is finished. The list is cleared when the user sends a new "
        "message."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "maxItems": MAX_ITEMS,
                "description": "The whole new todo list, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "What to do."},
                        "status": {"type": "string", "enum": list(STATUSES)},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["items"],
        "additionalProperties": False,
    },
    handler=handler,
    mutating=True,
)

"""The ``todo`` tool: the plan of the current turn as a whole-list snapshot.

Every call sends the complete new list; it replaces the previous one (last write wins), so
there are no partial-update states. The list is kept as the conversation note ``todo``
(JSON) and returned in the call's metadata as ``{"todo": items}`` for the engine's
``TodoUpdated`` event. The engine calls :func:`clear_todo` when a new user turn starts.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from smith_tui.llm.nesting import NestingTooDeep, load_json
from smith_tui.store import Store
from smith_tui.tools.builtin.memory import require_conversation, require_store, store_errors
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

TODO_NOTE_ID = "todo"
TodoStatus = Literal["pending", "in_progress", "done"]
STATUSES: tuple[str, ...] = get_args(TodoStatus)
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


def _content(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("must not be empty")
    if len(value) > MAX_CONTENT_CHARS:
        raise ValueError(f"is {len(value)} characters; the limit is {MAX_CONTENT_CHARS}")
    return value


def _status(value: Any) -> Any:
    if value not in STATUSES:
        hint = _STATUS_HINTS.get(value.strip().lower()) if isinstance(value, str) else None
        raise ValueError(
            f"must be one of {', '.join(STATUSES)}, got {value!r:.40}"
            + (f"; use {hint!r}" if hint else "")
        )
    return value


class Item(BaseModel):
    """One step of the plan."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    content: Annotated[str, AfterValidator(_content)] = Field(description="What to do.")
    status: Annotated[TodoStatus, BeforeValidator(_status)]


def _items(value: Any) -> Any:
    if isinstance(value, str):
        # Some models send the array JSON-encoded as a string.
        try:
            return load_json(value)
        except NestingTooDeep as exc:
            raise ValueError(
                f"must be an array of {{content, status}} objects, got a string of JSON {exc}"
            ) from None
        except ValueError:
            raise ValueError(
                "must be an array of {content, status} objects, got a string that is not JSON"
            ) from None
    return value


class Args(ToolArgs):
    """Arguments of ``todo``."""

    items: Annotated[list[Item], BeforeValidator(_items)] = Field(
        max_length=MAX_ITEMS, description="The whole new todo list, in order."
    )


def validate_items(value: Any) -> list[dict[str, str]]:
    """Check a todo list (as stored) and return it as clean ``{content, status}`` dicts.

    Raises :class:`ToolError` (the same message the tool gives) for a bad list.
    """
    args = TOOL.parse_arguments({"items": value})
    return [item.model_dump() for item in args.items]


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


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Replace the todo list with ``items`` and return it rendered."""
    items = [item.model_dump() for item in args.items]
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
    args=Args,
    handler=handler,
    mutating=True,
)

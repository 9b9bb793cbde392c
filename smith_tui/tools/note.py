"""The ``note`` tool: project memory shared by every conversation of the same project.

Actions: ``list`` (ids with their first lines), ``get``, ``upsert`` (create or replace),
``delete`` and ``search`` (full text, best match first). Notes live in
``store.project_memory`` under ``ctx.project_id``; the store keeps the search index in step.
"""

from __future__ import annotations

from typing import Any

from smith_tui.store import Store
from smith_tui.store.search import to_match_expression
from smith_tui.tools.args import max_output_chars, optional_int
from smith_tui.tools.budget import budget_text
from smith_tui.tools.memory import (
    check_key,
    describe_size,
    preview,
    require_project,
    require_store,
    store_errors,
    suggest,
)
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput, ToolSpec

ACTIONS = ("list", "get", "upsert", "delete", "search")
MAX_NOTE_CHARS = 100_000
DEFAULT_SEARCH_LIMIT = 10
MAX_SEARCH_LIMIT = 50

_ACTION_HINTS = {
    "create": "upsert",
    "add": "upsert",
    "update": "upsert",
    "put": "upsert",
    "set": "upsert",
    "write": "upsert",
    "save": "upsert",
    "read": "get",
    "show": "get",
    "remove": "delete",
    "rm": "delete",
    "find": "search",
    "query": "search",
    "ls": "list",
}


def _action(args: dict[str, Any]) -> str:
    value = args.get("action")
    choices = ", ".join(ACTIONS)
    if value is None:
        raise ToolError(
            f"missing required argument `action` (one of {choices}).", code="bad_arguments"
        )
    if not isinstance(value, str) or value.strip().lower() not in ACTIONS:
        text = value.strip().lower() if isinstance(value, str) else ""
        hint = f" (to {text} a note use {_ACTION_HINTS[text]!r})" if text in _ACTION_HINTS else ""
        raise ToolError(
            f"unknown action {value!r:.80}; use one of {choices}{hint}.", code="bad_arguments"
        )
    return value.strip().lower()


def _note_id(args: dict[str, Any], action: str) -> str:
    if args.get("id") is None:
        raise ToolError(
            f"action {action!r} needs `id`, the note's name; "
            'list the existing ids with note(action="list").',
            code="bad_arguments",
        )
    return check_key(args["id"], "id")


def _content(args: dict[str, Any]) -> str:
    value = args.get("content")
    if value is None:
        raise ToolError(
            "action 'upsert' needs `content`, the full new text of the note.",
            code="bad_arguments",
        )
    if not isinstance(value, str):
        raise ToolError(
            f"`content` must be a string, got {type(value).__name__} {value!r:.80}.",
            code="bad_arguments",
        )
    if not value.strip():
        raise ToolError(
            '`content` must not be empty; to remove a note use action "delete".',
            code="bad_arguments",
        )
    if len(value) > MAX_NOTE_CHARS:
        raise ToolError(
            f"`content` is {len(value):,} characters; the limit is {MAX_NOTE_CHARS:,}. "
            "Keep project notes short, or split them over several ids.",
            code="bad_arguments",
        )
    return value


def _not_found(store: Store, project_id: str, note_id: str) -> ToolError:
    known = [n.note_id for n in store.project_memory.list(project_id)]
    hint = suggest(note_id, known, "note id") or " Project memory is empty."
    return ToolError(f"no project note with id {note_id!r}.{hint}", code="not_found")


def _list(store: Store, project_id: str, prefix: str, budget: int) -> ToolOutput:
    notes = store.project_memory.list(project_id, prefix=prefix or None)
    if not notes:
        if prefix:
            text = f"No project notes with ids starting with {prefix!r}."
        else:
            text = (
                "Project memory is empty; add a note with "
                'note(action="upsert", id="...", content="...").'
            )
        return ToolOutput(content=text, metadata={"ids": []})
    where = f" with ids starting with {prefix!r}" if prefix else " in project memory"
    lines = [f"{len(notes)} note{'s' if len(notes) != 1 else ''}{where}:"]
    lines += [f"- {n.note_id} ({describe_size(n.content)}): {preview(n.content)}" for n in notes]
    return ToolOutput(
        content=budget_text("\n".join(lines), budget), metadata={"ids": [n.note_id for n in notes]}
    )


def _search(store: Store, project_id: str, args: dict[str, Any], budget: int) -> ToolOutput:
    query = args.get("query")
    if query is None:
        raise ToolError(
            "action 'search' needs `query`, the words to look for.", code="bad_arguments"
        )
    if not isinstance(query, str) or to_match_expression(query) is None:
        raise ToolError(
            f"`query` must contain at least one word to search for, got {query!r:.80}.",
            code="bad_arguments",
        )
    limit = optional_int(args, "limit", minimum=1) or DEFAULT_SEARCH_LIMIT
    limit = min(limit, MAX_SEARCH_LIMIT)
    hits = store.search_project_memory(query, project_id, limit=limit)
    if not hits:
        return ToolOutput(
            content=f"No project notes match {query!r}.", metadata={"query": query, "ids": []}
        )
    lines = [f"{len(hits)} project note{'s' if len(hits) != 1 else ''} match {query!r}:"]
    lines += [f"- {hit.note_id}: {' '.join(hit.snippet.split())}" for hit in hits]
    lines.append('Read one with note(action="get", id="<id>").')
    return ToolOutput(
        content=budget_text("\n".join(lines), budget),
        metadata={"query": query, "ids": [hit.note_id for hit in hits]},
    )


async def handler(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Run one ``note`` action against the project's memory."""
    action = _action(args)
    note_id = _note_id(args, action) if action in ("get", "upsert", "delete") else ""
    content = _content(args) if action == "upsert" else ""
    prefix = ""
    if action == "list" and args.get("prefix") is not None:
        prefix = check_key(args["prefix"], "prefix", allow_empty=True)
    store = require_store(ctx, "note")
    project_id = require_project(ctx, "note")
    budget = max_output_chars(ctx, "note")
    with store_errors(f"{action} project memory"):
        if action == "list":
            return _list(store, project_id, prefix, budget)
        if action == "search":
            return _search(store, project_id, args, budget)
        if action == "get":
            note = store.project_memory.get(project_id, note_id)
            if note is None:
                raise _not_found(store, project_id, note_id)
            return ToolOutput(
                content=budget_text(note.content, budget),
                metadata={"id": note_id, "chars": len(note.content)},
            )
        if action == "delete":
            if not store.project_memory.delete(project_id, note_id):
                raise _not_found(store, project_id, note_id)
            return ToolOutput(
                content=f"Deleted project note {note_id!r}.",
                metadata={"id": note_id, "deleted": True},
                mutation_state="attempted",
            )
        with store.atomic():
            previous = store.project_memory.get(project_id, note_id)
            store.project_memory.put(project_id, note_id, content)
    verb = "Updated" if previous is not None else "Created"
    return ToolOutput(
        content=f"{verb} project note {note_id!r} ({describe_size(content)}).",
        metadata={"id": note_id, "chars": len(content), "created": previous is None},
        mutation_state="attempted",
    )


TOOL = ToolSpec(
    name="note",
    description=(
        "Project memory: durable notes shared by every conversation in this project "
        "(conventions, decisions, where things are). Actions: list (ids with first lines, "
        "optional `prefix`), get (needs `id`), upsert (needs `id` and the full `content`; "
        "creates or replaces), delete (needs `id`), search (needs `query`; full-text, "
        'words, "phrases", prefix*, OR).'
    ),
    input_schema={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "id": {
                "type": "string",
                "description": "Note id for get/upsert/delete: 1-200 characters, no surrounding spaces.",
            },
            "content": {"type": "string", "description": "Full note text for upsert."},
            "query": {"type": "string", "description": "Words to search for (action search)."},
            "prefix": {
                "type": "string",
                "description": "Only list ids starting with this (action list).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SEARCH_LIMIT,
                "description": f"Most search results to return (default {DEFAULT_SEARCH_LIMIT}).",
            },
        },
        "required": ["action"],
        "additionalProperties": False,
    },
    handler=handler,
    mutating=True,
)

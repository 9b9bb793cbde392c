"""The ``note`` tool: project memory shared by every conversation of the same project.

Actions: ``list`` (ids with their first lines), ``get``, ``upsert`` (create or replace),
``delete`` and ``search`` (full text, best match first). Notes live in
``store.project_memory`` under ``ctx.project_id``; the store keeps the search index in step.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from smith_tui.store import Store
from smith_tui.store.search import to_match_expression
from smith_tui.tools.args import NotBool, max_output_chars
from smith_tui.tools.builtin.memory import (
    Key,
    KeyPrefix,
    describe_size,
    preview,
    require_project,
    require_store,
    store_errors,
    suggest,
)
from smith_tui.tools.output_budget import budget_text
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

NoteAction = Literal["list", "get", "upsert", "delete", "search"]
ACTIONS: tuple[str, ...] = get_args(NoteAction)
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


def _action(value: Any) -> Any:
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in ACTIONS:
        hint = f" (to {text} a note use {_ACTION_HINTS[text]!r})" if text in _ACTION_HINTS else ""
        raise ValueError(f"must be one of {', '.join(ACTIONS)}, got {value!r:.80}{hint}")
    return text


def _content(value: str) -> str:
    if not value.strip():
        raise ValueError('must not be empty; to remove a note use action "delete"')
    if len(value) > MAX_NOTE_CHARS:
        raise ValueError(
            f"is {len(value):,} characters; the limit is {MAX_NOTE_CHARS:,}. "
            "Keep project notes short, or split them over several ids"
        )
    return value


def _query(value: str) -> str:
    if to_match_expression(value) is None:
        raise ValueError(f"must contain at least one word to search for, got {value!r:.80}")
    return value


class Args(ToolArgs):
    """Arguments of ``note``; which of the others are needed depends on ``action``."""

    action: Annotated[
        NoteAction,
        BeforeValidator(_action),
    ] = Field(description="list, get, upsert, delete or search.")
    id: Key | None = Field(
        None,
        description="Note id for get/upsert/delete: 1-200 characters, no surrounding spaces.",
    )
    content: Annotated[str, AfterValidator(_content)] | None = Field(
        None, description="Full note text for upsert."
    )
    query: Annotated[str, AfterValidator(_query)] | None = Field(
        None, description="Words to search for (action search)."
    )
    prefix: KeyPrefix = Field("", description="Only list ids starting with this (action list).")
    # More than the maximum is clamped to it, not refused.
    limit: Annotated[int, Field(ge=1), NotBool] = Field(
        DEFAULT_SEARCH_LIMIT,
        json_schema_extra={"maximum": MAX_SEARCH_LIMIT},
        description=f"Most search results to return (default {DEFAULT_SEARCH_LIMIT}).",
    )

    @model_validator(mode="after")
    def _needs(self) -> Args:
        if self.action in ("get", "upsert", "delete") and self.id is None:
            raise ValueError(
                f"action {self.action!r} needs `id`, the note's name; "
                'list the existing ids with note(action="list")'
            )
        if self.action == "upsert" and self.content is None:
            raise ValueError("action 'upsert' needs `content`, the full new text of the note")
        if self.action == "search" and self.query is None:
            raise ValueError("action 'search' needs `query`, the words to look for")
        return self


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


def _search(store: Store, project_id: str, query: str, limit: int, budget: int) -> ToolOutput:
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


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Run one ``note`` action against the project's memory."""
    action, note_id, content = args.action, args.id or "", args.content or ""
    store = require_store(ctx, "note")
    project_id = require_project(ctx, "note")
    budget = max_output_chars(ctx, "note")
    with store_errors(f"{action} project memory"):
        if action == "list":
            return _list(store, project_id, args.prefix, budget)
        if action == "search":
            return _search(store, project_id, args.query or "", args.limit, budget)
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
    args=Args,
    handler=handler,
    mutating=True,
)

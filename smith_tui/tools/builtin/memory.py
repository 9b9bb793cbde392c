"""The scratchpad tools ``record`` and ``recall``, and the store access the memory tools share.

The scratchpad is conversation-scoped: ``record(key, value)`` writes the conversation note
``scratchpad:<key>``; ``recall`` reads one key back or lists every key under a prefix.
Dispatch results land under ``dispatch/<job_id>`` (docs/DESIGN.md §5.7), so
``recall(key="dispatch/", prefix=true)`` enumerates them.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import peewee
from pydantic import AfterValidator, ConfigDict, Field, WithJsonSchema, model_validator

from smith_tui.store import Store, StoreError
from smith_tui.store.notes import SCRATCHPAD_PREFIX, scratchpad_note_id
from smith_tui.tools.args import Flag, max_output_chars
from smith_tui.tools.output_budget import budget_text
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 1_000_000
PREVIEW_CHARS = 100
SUGGESTION_LIMIT = 10

# ---------------------------------------------------------------------------
# store access shared by record, recall, note and todo


def require_store(ctx: ToolContext, tool: str) -> Store:
    """The :class:`Store` in ``ctx.services.store``, or a :class:`ToolError` saying it is missing."""
    store = ctx.services.store
    if store is None:
        raise ToolError(
            f"{tool} needs the conversation store, but none is attached to this session "
            "(services.store is unset); memory tools are unavailable here.",
            code="no_store",
        )
    if not isinstance(store, Store):  # typed, but a caller outside the engine may pass anything
        raise ToolError(
            f"{tool} needs a smith_tui.store.Store in services.store, got {type(store).__name__}.",
            code="no_store",
        )
    return store


def require_conversation(ctx: ToolContext, tool: str) -> str:
    """The id of the conversation the call belongs to, or a :class:`ToolError`."""
    if not ctx.conversation_id:
        raise ToolError(
            f"{tool} works on the current conversation, but this call has no conversation id; "
            "it can only run inside a saved conversation.",
            code="no_conversation",
        )
    return ctx.conversation_id


def require_project(ctx: ToolContext, tool: str) -> str:
    """The id of the project the call belongs to, or a :class:`ToolError`."""
    if not ctx.project_id:
        raise ToolError(
            f"{tool} works on project memory, but this call has no project id; "
            "it can only run inside a project.",
            code="no_project",
        )
    return ctx.project_id


@contextmanager
def store_errors(what: str) -> Iterator[None]:
    """Turn store and database failures inside the block into a :class:`ToolError`."""
    try:
        yield
    except StoreError as exc:
        raise ToolError(f"could not {what}: {exc}", code="store_error") from None
    except peewee.PeeweeException as exc:
        raise ToolError(
            f"could not {what}: database error ({exc}); try again.", code="store_error"
        ) from None


def key_problem(value: str, *, allow_empty: bool = False) -> str | None:
    """What is wrong with a scratchpad key or note id (``None`` when it is fine).

    A key is trimmed text of at most 200 characters on one line.
    """
    if not value:
        return None if allow_empty else "must not be empty"
    if value != value.strip():
        return (
            f"must not start or end with whitespace, got {value!r:.80}; use {value.strip()!r:.80}"
        )
    if len(value) > MAX_KEY_CHARS:
        return f"is {len(value)} characters long; the limit is {MAX_KEY_CHARS}"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return f"must be a single line without control characters, got {value!r:.80}"
    return None


def check_key(value: str, name: str) -> str:
    """Validate a key the engine (not the model) passes in; raise :class:`ToolError` if bad."""
    problem = key_problem(value)
    if problem:
        raise ToolError(f"`{name}` {problem}.", code="invalid_arguments")
    return value


def _key(value: str) -> str:
    problem = key_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _key_or_prefix(value: str) -> str:
    problem = key_problem(value, allow_empty=True)
    if problem:
        raise ValueError(problem)
    return value


Key = Annotated[str, AfterValidator(_key)]
"""A scratchpad key or note id argument (see :func:`key_problem`)."""

KeyPrefix = Annotated[str, AfterValidator(_key_or_prefix)]
"""Like :data:`Key`, but empty is allowed (a prefix that matches everything)."""


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first non-blank line of ``text``, shortened to ``limit`` characters."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return "(blank)"


def describe_size(text: str) -> str:
    """``"N chars"`` plus the line count when there is more than one line."""
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return f"{len(text):,} chars" + (f", {lines} lines" if lines > 1 else "")


def suggest(wanted: str, known: list[str], noun: str) -> str:
    """A did-you-mean sentence plus a short listing of ``known`` names."""
    if not known:
        return ""
    close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.5)
    close += [k for k in known if wanted and k.startswith(wanted) and k not in close][:3]
    parts = []
    if close:
        parts.append("Did you mean " + ", ".join(repr(k) for k in close) + "?")
    shown = ", ".join(repr(k) for k in known[:SUGGESTION_LIMIT])
    more = len(known) - SUGGESTION_LIMIT
    parts.append(
        f"Existing {noun}s ({len(known)}): {shown}" + (f" and {more} more." if more > 0 else ".")
    )
    return " " + " ".join(parts)


# ---------------------------------------------------------------------------
# scratchpad


def save_scratchpad(store: Store, conversation_id: str, key: str, value: str) -> None:
    """Write ``value`` under scratchpad ``key`` of a conversation (for the dispatch service).

    Raises :class:`ToolError` for a bad key and :class:`StoreError` when the write fails.
    """
    check_key(key, "key")
    store.notes.put(conversation_id, scratchpad_note_id(key), value)


def _scratchpad_keys(store: Store, conversation_id: str, prefix: str = "") -> list[tuple[str, str]]:
    notes = store.notes.list(conversation_id, prefix=scratchpad_note_id(prefix))
    return [(n.note_id[len(SCRATCHPAD_PREFIX) :], n.content) for n in notes]


def _value_text(value: Any) -> str:
    """The value to store: text as given, any other JSON data encoded as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        raise ValueError(f"must be text (or JSON data), got {type(value).__name__}") from None


def _value(value: Any) -> Any:
    text = _value_text(value)
    if not text.strip():
        raise ValueError("must not be empty; record something worth recalling later")
    if len(text) > MAX_VALUE_CHARS:
        raise ValueError(
            f"is {len(text):,} characters; the limit is {MAX_VALUE_CHARS:,}. "
            "Split it over several keys (e.g. 'name/1', 'name/2')"
        )
    return value


class RecordArgs(ToolArgs):
    """Arguments of ``record``."""

    key: Key = Field(description="Name of the entry: 1-200 characters, no surrounding spaces.")
    # Text as given; other JSON data is accepted too and stored as JSON.
    value: Annotated[Any, AfterValidator(_value), WithJsonSchema({"type": "string"})] = Field(
        description="The text to save."
    )


class RecallArgs(ToolArgs):
    """Arguments of ``recall``."""

    # The schema asks for `key`, but with prefix=true a missing key lists everything.
    model_config = ConfigDict(json_schema_extra={"required": ["key"]})

    key: KeyPrefix = Field(
        "", description="The exact key to read, or the prefix to list when prefix=true."
    )
    prefix: Flag = Field(
        False, description="List the keys starting with `key` instead of reading one value."
    )

    @model_validator(mode="after")
    def _key_unless_listing(self) -> RecallArgs:
        if not self.prefix and not self.key:
            raise ValueError(
                '`key` must not be empty (to list every key pass key="" and prefix=true)'
                if "key" in self.model_fields_set
                else "missing required argument `key` (a string)"
            )
        return self


async def record_handler(args: RecordArgs, ctx: ToolContext) -> ToolOutput:
    """Write one scratchpad entry of the current conversation."""
    key = args.key
    value, encoded = _value_text(args.value), not isinstance(args.value, str)
    store = require_store(ctx, "record")
    conversation_id = require_conversation(ctx, "record")
    note_id = scratchpad_note_id(key)
    with store_errors(f"record scratchpad key {key!r}"), store.atomic():
        previous = store.notes.get(conversation_id, note_id)
        store.notes.put(conversation_id, note_id, value)
    verb = "Replaced" if previous is not None else "Recorded"
    text = f"{verb} scratchpad key {key!r} ({describe_size(value)}"
    text += ", stored as JSON)." if encoded else ")."
    if previous is not None:
        text += f" The previous value had {describe_size(previous.content)}."
    text += f' Read it back with recall(key="{key}").'
    return ToolOutput(
        content=text,
        metadata={
            "key": key,
            "note_id": note_id,
            "chars": len(value),
            "replaced": previous is not None,
        },
        mutation_state="attempted",
    )


def _dispatch_summary(text: str) -> str | None:
    """A one-line ``status: summary`` for a stored dispatch result, else ``None``."""
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("summary"), str):
        return None
    status = data.get("status")
    return preview(f"{status}: {data['summary']}" if isinstance(status, str) else data["summary"])


def _recall_prefix(store: Store, conversation_id: str, prefix: str, budget: int) -> ToolOutput:
    entries = _scratchpad_keys(store, conversation_id, prefix)
    where = f"under {prefix!r}" if prefix else "in this conversation's scratchpad"
    if not entries:
        text = f"No scratchpad keys {where}."
        if prefix:
            others = [k for k, _ in _scratchpad_keys(store, conversation_id)]
            text += suggest(prefix, others, "key") or " The scratchpad is empty."
        return ToolOutput(content=text, metadata={"prefix": prefix, "keys": []})
    lines = [f"{len(entries)} scratchpad key{'s' if len(entries) != 1 else ''} {where}:"]
    for key, content in entries:
        first = _dispatch_summary(content) or preview(content)
        lines.append(f"- {key} ({describe_size(content)}): {first}")
    lines.append('Read one with recall(key="<key>").')
    return ToolOutput(
        content=budget_text("\n".join(lines), budget),
        metadata={"prefix": prefix, "keys": [k for k, _ in entries]},
    )


async def recall_handler(args: RecallArgs, ctx: ToolContext) -> ToolOutput:
    """Read one scratchpad entry, or list the keys under a prefix."""
    prefix, key = args.prefix, args.key
    store = require_store(ctx, "recall")
    conversation_id = require_conversation(ctx, "recall")
    budget = max_output_chars(ctx, "recall")
    with store_errors(f"read scratchpad key {key!r}"):
        if prefix:
            return _recall_prefix(store, conversation_id, key, budget)
        note = store.notes.get(conversation_id, scratchpad_note_id(key))
        if note is None:
            known = [k for k, _ in _scratchpad_keys(store, conversation_id)]
            hint = suggest(key, known, "key") or " The scratchpad of this conversation is empty."
            raise ToolError(f"no scratchpad entry under key {key!r}.{hint}", code="not_found")
    return ToolOutput(
        content=budget_text(note.content, budget),
        metadata={"key": key, "chars": len(note.content), "updated_at": note.updated_at},
    )


RECORD_TOOL = ToolSpec(
    name="record",
    description=(
        "Save a value in this conversation's scratchpad under a key, replacing any previous "
        "value. Use it for findings, plans or intermediate results you want to recall later "
        "in this conversation. Keys may use '/' for namespaces (e.g. 'plan/step-2'); "
        "dispatch results are saved automatically under 'dispatch/<job_id>'."
    ),
    args=RecordArgs,
    handler=record_handler,
    mutating=True,
)

RECALL_TOOL = ToolSpec(
    name="recall",
    description=(
        "Read a value saved in this conversation's scratchpad by record (or an automatically "
        "saved dispatch result). With prefix=true, list every key starting with `key` with "
        'its size and first line instead: recall(key="dispatch/", prefix=true) lists the '
        'dispatch results, recall(key="", prefix=true) lists everything.'
    ),
    args=RecallArgs,
    handler=recall_handler,
)

TOOLS: list[ToolSpec[Any]] = [RECORD_TOOL, RECALL_TOOL]

__all__ = [
    "MAX_KEY_CHARS",
    "MAX_VALUE_CHARS",
    "RECALL_TOOL",
    "RECORD_TOOL",
    "TOOLS",
    "Key",
    "KeyPrefix",
    "check_key",
    "describe_size",
    "key_problem",
    "preview",
    "recall_handler",
    "record_handler",
    "require_conversation",
    "require_project",
    "require_store",
    "save_scratchpad",
    "store_errors",
    "suggest",
]

"""Plain record types handed across the repository boundary (never peewee models).

Timestamps are Unix seconds as floats. JSON-valued fields hold decoded Python values.
"""

from dataclasses import dataclass, field
from typing import Any

MESSAGE_ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class Conversation:
    """One conversation; `parent_id` is set for dispatch children."""

    id: str
    project_id: str
    title: str | None
    created_at: float
    updated_at: float
    parent_id: str | None = None
    pinned_model: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Message:
    """One transcript message; `position` orders it within its conversation (from 0, gaps after deletes)."""

    id: int
    conversation_id: str
    position: int
    role: str
    content: str | None
    created_at: float
    reasoning: str | None = None
    tool_calls: list[Any] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    turn_id: str | None = None
    round: int | None = None
    recall_key: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """One turn of one role in a conversation; `status` is `running` until finished."""

    id: str
    conversation_id: str
    role: str
    status: str
    started_at: float
    stop_reason: str | None = None
    error: str | None = None
    finished_at: float | None = None


@dataclass(frozen=True)
class Note:
    """A conversation-scoped note (`scratchpad:<key>`, `turn_record-<turn_id>`, ...)."""

    conversation_id: str
    note_id: str
    content: str
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class UsageRecord:
    """Token usage of one model call (or one dispatch child) in a turn."""

    id: int
    conversation_id: str
    turn_id: str
    role: str
    model: str
    input_tokens: int
    output_tokens: int
    total_tokens: int
    created_at: float
    job_id: str | None = None
    cost: float | None = None


@dataclass(frozen=True)
class UsageTotals:
    """Summed usage over several records; `cost` is `None` when no record had a cost."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None
    calls: int = 0


@dataclass(frozen=True)
class MemoryNote:
    """A project-memory note, shared by every conversation of the same project."""

    project_id: str
    note_id: str
    content: str
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class RequestSnapshot:
    """Write-once debug row for one outgoing LLM request."""

    id: int
    conversation_id: str
    turn_id: str | None
    created_at: float
    model: str
    system_prompt: str
    tool_schemas: list[Any]


@dataclass(frozen=True)
class MessageHit:
    """One full-text match in the transcript; lower `rank` is better (bm25)."""

    conversation_id: str
    message_id: int
    position: int
    role: str
    snippet: str
    rank: float


@dataclass(frozen=True)
class MemoryHit:
    """One full-text match in project memory; lower `rank` is better (bm25)."""

    project_id: str
    note_id: str
    snippet: str
    rank: float

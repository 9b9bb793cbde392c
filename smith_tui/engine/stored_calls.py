"""The tool calls of a stored conversation and of the sub-agents it dispatched.

What the tools pane lists after a restart, ``--continue`` or an edit in inspect: the calls
as they ran live, oldest first, each with the role that made it (Tank, Niobe…), its job
(for a sub-agent's call) and its outcome (its result's ``ok``, ``cancelled``, exit code
and duration).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from smith_tui.store import Message, Store

#: Messages of the conversation read from its end (calls older than these are not listed).
RECENT_MESSAGES = 400


@dataclass(frozen=True)
class StoredCall:
    """One stored tool call and, when its result is stored, how it ended."""

    turn_id: str
    call_id: str
    name: str
    arguments: str
    role: str
    job_id: str | None
    finished: bool
    ok: bool = True
    cancelled: bool = False
    duration_s: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0


def stored_calls(
    store: Store, conversation_id: str | None, limit: int = RECENT_MESSAGES
) -> list[StoredCall]:
    """The calls of ``conversation_id``'s newest ``limit`` messages and of the sub-agents
    their turns dispatched, in the order they were made."""
    if not conversation_id:
        return []
    messages = store.conversations.tail_messages(conversation_id, limit)
    roles = {t.id: t.role for t in store.turns.list_for_conversation(conversation_id)}
    turns = {m.turn_id for m in messages if m.turn_id}
    calls = _calls(messages, roles, "direct", None)
    for child in store.conversations.children(conversation_id):
        meta = child.metadata or {}
        if meta.get("parent_turn_id") not in turns:
            continue
        role = str(meta.get("role") or "worker")
        job_id = meta.get("job_id")
        child_messages = store.conversations.list_messages(child.id)
        calls += _calls(child_messages, {}, role, str(job_id) if job_id else None)
    calls.sort(key=lambda call: call.created_at)  # stable: a reply's calls keep their order
    return calls


def _calls(
    messages: list[Message], roles: Mapping[str, str], default_role: str, job_id: str | None
) -> list[StoredCall]:
    """The calls of ``messages`` with their results; each turn's role from ``roles``."""
    results = {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}
    out: list[StoredCall] = []
    for message in messages:
        if message.role != "assistant" or not message.tool_calls:
            continue
        for call in message.tool_calls:
            if not isinstance(call, dict):
                continue
            nested = call.get("function")
            function: dict[str, Any] = nested if isinstance(nested, dict) else call
            call_id = str(call.get("id") or "")
            result = results.get(call_id)
            meta = dict(result.metadata or {}) if result is not None else {}
            duration = meta.get("duration_s")
            out.append(
                StoredCall(
                    turn_id=message.turn_id or "",
                    call_id=call_id,
                    name=str(function.get("name") or "tool"),
                    arguments=str(function.get("arguments") or ""),
                    role=roles.get(message.turn_id or "", default_role),
                    job_id=job_id,
                    finished=result is not None,
                    ok=bool(meta.get("ok", True)),
                    cancelled=bool(meta.get("cancelled", False)),
                    duration_s=float(duration) if isinstance(duration, int | float) else None,
                    metadata=meta,
                    created_at=message.created_at,
                )
            )
    return out

"""The persistence service: turns, rounds, usage and debug snapshots in the store.

A round is written as soon as each part is known (docs/DESIGN.md §5.8): the
assistant message before any of its tools starts, the tool results when they are
in, each part in one transaction. A crash loses at most the reply in flight; a
call whose tool was running stays on record for orphan repair to answer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, cast

from smith_tui.engine.events import StopReason
from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.turn.frame import Turn
from smith_tui.llm.types import Role
from smith_tui.store import Message, Store


class Persistence:
    """Writes what a turn does to the store; also the turn recorder of the loop."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- TurnRecorder -------------------------------------------------------------------
    def user_message(self, turn: Turn, message: TranscriptMessage) -> None:
        """Persist the message that opened the turn (its stored ``position`` is set on it)."""
        positions = self.store.conversations.append_messages(
            turn.conversation_id, [message], turn_id=turn.turn_id, round=0
        )
        _set_positions([message], positions)

    def round(
        self,
        turn: Turn,
        round_no: int,
        messages: list[TranscriptMessage],
        usage: Mapping[str, float] | None,
    ) -> None:
        """Persist one part of a round (messages, and usage when given) in one transaction.

        ``usage`` holds the token counts and, when known, the call's ``cost`` in dollars.

        Each message dict gets its stored ``position``, as loaded messages have it.
        """
        with self.store.atomic():
            positions = self.store.conversations.append_messages(
                turn.conversation_id, messages, turn_id=turn.turn_id, round=round_no
            )
            _set_positions(messages, positions)
            if usage and (usage.get("input_tokens") or usage.get("output_tokens")):
                # A child's usage belongs to the parent turn that dispatched it (keyed by job).
                conversation_id, turn_id = turn.usage_scope or (
                    turn.conversation_id,
                    turn.turn_id,
                )
                self.store.usage.record(
                    conversation_id,
                    turn_id,
                    turn.role_name,
                    turn.model,
                    int(usage.get("input_tokens", 0)),
                    int(usage.get("output_tokens", 0)),
                    total_tokens=int(usage.get("total_tokens", 0)) or None,
                    cost=usage.get("cost"),
                    job_id=turn.job_id,
                )

    def request_snapshot(
        self, turn: Turn, model: str, system_prompt: str, tools: list[dict[str, Any]]
    ) -> None:
        """Keep the debug snapshot of one outgoing request."""
        self.store.snapshots.record(
            turn.conversation_id, model, system_prompt, list(tools), turn_id=turn.turn_id
        )

    def take_review_note(self, conversation_id: str) -> str | None:
        """What a per-hunk review reverted, for the next prompt to tell (once)."""
        from smith_tui.engine.review import take_note

        return take_note(self.store, conversation_id)

    # -- turns and conversations ---------------------------------------------------------
    def start_turn(self, conversation_id: str, role: str, turn_id: str) -> None:
        """Record that a turn started."""
        self.store.turns.start(conversation_id, role, turn_id=turn_id)

    def finish_turn(
        self,
        conversation_id: str,
        turn_id: str,
        stop_reason: StopReason,
        error: dict[str, Any] | None,
        record: dict[str, Any],
    ) -> None:
        """Close the turn and write its ``turn_record-<turn_id>`` note, in one transaction."""
        status = {"completed": "completed", "cancelled": "cancelled"}.get(stop_reason, "failed")
        with self.store.atomic():
            self.store.turns.finish(
                turn_id,
                status,
                stop_reason=stop_reason,
                error=(error or {}).get("message") if error else None,
            )
            self.store.notes.put_turn_record(
                conversation_id, turn_id, {**record, "finished_at": time.time()}
            )

    def repair_orphans(self, conversation_id: str) -> None:
        """Answer the tool calls of ``conversation_id`` left without a result."""
        self.store.conversations.repair_orphan_tool_calls(conversation_id)

    def set_active_conversation(self, conversation_id: str, project_id: str) -> None:
        """Remember the conversation a restart in project ``project_id`` should resume."""
        self.store.meta.set_active_conversation_id(conversation_id, project_id)

    def active_conversation(self, project_id: str) -> str | None:
        """The conversation a restart in ``project_id`` should resume, if any.

        Falls back to the one key older versions kept for all projects; the caller
        checks that the conversation belongs to ``project_id``.
        """
        meta = self.store.meta
        return meta.active_conversation_id(project_id) or meta.active_conversation_id()

    def save_scratchpad(self, conversation_id: str, key: str, content: str) -> None:
        """Write a scratchpad note ``scratchpad:<key>`` (used for dispatch results)."""
        from smith_tui.store.notes import scratchpad_note_id

        self.store.notes.put(conversation_id, scratchpad_note_id(key), content)

    def prune_snapshots(self, retention_days: float) -> int:
        """Delete request snapshots older than the retention period."""
        return self.store.prune_request_snapshots(retention_days)


def _set_positions(messages: list[TranscriptMessage], positions: list[int]) -> None:
    """Give the loop's message dicts the positions the store gave them (compaction anchors)."""
    for message, position in zip(messages, positions, strict=True):
        message["position"] = position


def message_dict(message: Message) -> TranscriptMessage:
    """Turn a stored :class:`smith_tui.store.Message` into the dict the engine works with."""
    # The store keeps the role as text; it only ever writes the engine's roles.
    data: TranscriptMessage = {"role": cast(Role, message.role), "content": message.content}
    if message.tool_calls:
        data["tool_calls"] = message.tool_calls
    if message.tool_call_id is not None:
        data["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        data["name"] = message.name
    if message.reasoning:
        data["reasoning"] = message.reasoning
    if message.recall_key:
        data["recall_key"] = message.recall_key
    data["metadata"] = dict(message.metadata or {})
    data["id"] = message.id
    data["position"] = message.position
    data["turn_id"] = message.turn_id
    return data

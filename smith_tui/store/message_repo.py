"""Message operations of the conversation repository (kept apart to keep files small).

Messages are ordered per conversation by an integer `position`. New positions are allocated
inside the write transaction (which starts with `BEGIN IMMEDIATE`), so two processes
appending to the same conversation never collide. Positions only grow; deleting a message
leaves a gap rather than renumbering.
"""

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

from smith_tui.store import codec
from smith_tui.store.base import Repository, changed_rows
from smith_tui.store.errors import StoreError
from smith_tui.store.models import MessageRow
from smith_tui.store.records import MESSAGE_ROLES, Message

# Keys a message dict may carry: the Chat-Completions wire fields plus Smith's extras.
MESSAGE_KEYS = frozenset(
    {
        "role",
        "content",
        "reasoning",
        "tool_calls",
        "tool_call_id",
        "name",
        "recall_key",
        "metadata",
        "turn_id",
        "round",
    }
)
UPDATABLE_FIELDS = frozenset(MESSAGE_KEYS - {"role"})

_COLUMNS = (
    "conversation_id",
    "position",
    "role",
    "content",
    "reasoning",
    "tool_calls",
    "tool_call_id",
    "name",
    "turn_id",
    "round",
    "recall_key",
    "metadata",
    "created_at",
)
# Appending is the hot path (every round of every turn); a prepared INSERT run with
# executemany costs a fraction of building the statement through peewee for each row.
_INSERT_SQL = (
    f"INSERT INTO messages ({', '.join(_COLUMNS)}, project_id)"
    f" VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})"
)


def message_from_row(row: MessageRow) -> Message:
    """Decode a message row into a `Message` record."""
    return Message(
        id=row.id,
        conversation_id=row.conversation_id,
        position=row.position,
        role=row.role,
        content=row.content,
        created_at=row.created_at,
        reasoning=row.reasoning,
        tool_calls=codec.loads(row.tool_calls),
        tool_call_id=row.tool_call_id,
        name=row.name,
        turn_id=row.turn_id,
        round=row.round,
        recall_key=row.recall_key,
        metadata=codec.loads(row.metadata),
    )


_SELECT_SQL = (
    "SELECT id, conversation_id, position, role, content, created_at, reasoning, tool_calls,"
    " tool_call_id, name, turn_id, round, recall_key, metadata FROM messages"
)


def _message_from_tuple(row: tuple[Any, ...]) -> Message:
    """Decode a row of ``_SELECT_SQL`` (its columns in `Message` field order)."""
    values = list(row)
    values[7], values[13] = codec.loads(values[7]), codec.loads(values[13])
    return Message(*values)


def _check_tool_calls(tool_calls: list[Any] | None, where: str) -> None:
    for call in tool_calls or ():
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
            raise StoreError(f"{where}: every tool call must be an object with a string 'id'")


def _row_values(message: Message) -> dict[str, Any]:
    codec.validate_record(message)
    if message.role not in MESSAGE_ROLES:
        raise StoreError(
            f"message role must be one of {', '.join(MESSAGE_ROLES)}, got {message.role!r}"
        )
    _check_tool_calls(message.tool_calls, f"message at position {message.position}")
    if message.turn_id is not None:
        codec.check_structural_id(message.turn_id, "turn_id")
    return {
        "conversation_id": message.conversation_id,
        "position": message.position,
        "role": message.role,
        "content": message.content,
        "reasoning": message.reasoning,
        "tool_calls": codec.dumps_optional(message.tool_calls, what="tool_calls"),
        "tool_call_id": message.tool_call_id,
        "name": message.name,
        "turn_id": message.turn_id,
        "round": message.round,
        "recall_key": message.recall_key,
        "metadata": codec.dumps(message.metadata, what="message metadata"),
        "created_at": message.created_at,
    }


def build_message(
    conversation_id: str,
    position: int,
    data: object,
    *,
    turn_id: str | None,
    round: int | None,
    created_at: float,
) -> Message:
    """Turn a wire-shaped message dict into a validated `Message` (id 0: not yet stored)."""
    if not isinstance(data, dict):
        raise StoreError(f"each message must be a dict, got {type(data).__name__}")
    unknown = sorted(set(data) - MESSAGE_KEYS)
    if unknown:
        raise StoreError(
            f"message has unknown field(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(sorted(MESSAGE_KEYS))} (put anything else under 'metadata')"
        )
    if "role" not in data:
        raise StoreError("message has no 'role'")
    metadata = data.get("metadata")
    return Message(
        id=0,
        conversation_id=conversation_id,
        position=position,
        role=data["role"],
        content=data.get("content"),
        created_at=created_at,
        reasoning=data.get("reasoning"),
        tool_calls=data.get("tool_calls"),
        tool_call_id=data.get("tool_call_id"),
        name=data.get("name"),
        turn_id=data.get("turn_id", turn_id),
        round=data.get("round", round),
        recall_key=data.get("recall_key"),
        metadata={} if metadata is None else metadata,
    )


class MessageOperations(Repository):
    """Reading and writing the messages of conversations."""

    def _require_conversation(self, conversation_id: str) -> None:
        conv = self._m.conversation
        if not conv.select().where(conv.id == conversation_id).exists():
            raise StoreError(f"no conversation with id {conversation_id!r}")

    def _insert(self, message: Message, project_id: str) -> int:
        values = _row_values(message)
        params = [*(values[c] for c in _COLUMNS), project_id]
        row_id: int = self._db.execute_sql(_INSERT_SQL, params).lastrowid
        return row_id

    def _touch(self, conversation_id: str, when: float) -> str:
        """Bump `updated_at` and return the project id; raise when there is no such conversation."""
        found = self._db.execute_sql(
            "UPDATE conversations SET updated_at = ? WHERE id = ? RETURNING project_id",
            (when, conversation_id),
        ).fetchall()
        if not found:
            raise StoreError(f"no conversation with id {conversation_id!r}")
        project_id: str = found[0][0]
        return project_id

    def append_messages(
        self,
        conversation_id: str,
        messages: Sequence[Mapping[str, Any]],
        turn_id: str | None = None,
        round: int | None = None,
    ) -> list[int]:
        """Append messages in one transaction and return their positions, in order.

        Each message is a Chat-Completions dict (`role`, `content`, `tool_calls`,
        `tool_call_id`, `name`) optionally with `reasoning`, `recall_key`, `metadata`, and
        per-message `turn_id` / `round` overriding the arguments. Nothing is written when any
        message is invalid.
        """
        now = time.time()
        # Validate and encode before taking the write lock; positions are filled in after.
        encoded = [
            _row_values(
                build_message(
                    conversation_id, i, data, turn_id=turn_id, round=round, created_at=now
                )
            )
            for i, data in enumerate(messages)
        ]
        rows = [[*(values[column] for column in _COLUMNS), ""] for values in encoded]
        position_index = _COLUMNS.index("position")
        with self._db.atomic():
            project_id = self._touch(conversation_id, now)
            top = self._db.execute_sql(
                "SELECT MAX(position) FROM messages WHERE conversation_id = ?", (conversation_id,)
            ).fetchone()[0]
            start = 0 if top is None else top + 1
            for row in rows:
                row[position_index] += start
                row[-1] = project_id
            self._db.cursor().executemany(_INSERT_SQL, rows)
        return [row[position_index] for row in rows]

    def insert_messages_at(
        self, conversation_id: str, position: int, messages: list[Message]
    ) -> list[int]:
        """Insert built messages starting at `position`, shifting later ones; return new ids.

        The `position` and `conversation_id` of the given records are replaced.
        """
        row = self._m.message
        count = len(messages)
        if not count:
            return []
        with self._db.atomic():
            project_id = self._touch(conversation_id, time.time())
            # Two steps through negative numbers keep (conversation_id, position) unique at
            # every row update.
            row.update(position=row.position * -1 - (1 + count)).where(
                (row.conversation_id == conversation_id) & (row.position >= position)
            ).execute()
            row.update(position=row.position * -1 - 1).where(
                (row.conversation_id == conversation_id) & (row.position < 0)
            ).execute()
            return [
                self._insert(
                    dataclasses.replace(
                        message, conversation_id=conversation_id, position=position + i
                    ),
                    project_id,
                )
                for i, message in enumerate(messages)
            ]

    def list_messages(
        self,
        conversation_id: str,
        *,
        offset: int = 0,
        limit: int | None = None,
        before_position: int | None = None,
        after_position: int | None = None,
    ) -> list[Message]:
        """Return messages in position order.

        Without `before_position`: skip `offset` messages from the start, then up to `limit`.
        With `before_position`: the `limit` messages (all when `None`) immediately before that
        position, skipping `offset` more recent ones first; still returned oldest first. This
        is how a view loads older history on demand.
        With `after_position` (not with `before_position`): the same as without, counted from
        the first message after that position: how a view opened at the start of a
        conversation loads newer history.
        """
        if before_position is not None and after_position is not None:
            raise StoreError("list_messages takes before_position or after_position, not both")
        # Plain SQL and tuples: a resumed conversation is read whole, and building a peewee
        # model per row cost about twice the query and the decoding together.
        params: list[Any] = [conversation_id]
        if after_position is not None:
            sql = f"{_SELECT_SQL} WHERE conversation_id = ? AND position > ? ORDER BY position"
            params.append(after_position)
        elif before_position is None:
            sql = f"{_SELECT_SQL} WHERE conversation_id = ? ORDER BY position"
        else:
            sql = f"{_SELECT_SQL} WHERE conversation_id = ? AND position < ? ORDER BY position DESC"
            params.append(before_position)
        sql += " LIMIT ? OFFSET ?"
        params += [-1 if limit is None else limit, offset]
        rows = self._db.execute_sql(sql, params).fetchall()
        if before_position is not None:
            rows.reverse()
        return [_message_from_tuple(row) for row in rows]

    def message_keys(self, conversation_id: str) -> list[tuple[int, int]]:
        """The ``(id, position)`` of every message, in position order (nothing decoded): how
        a reader holding the conversation sees whether rows it holds moved or went away."""
        sql = "SELECT id, position FROM messages WHERE conversation_id = ? ORDER BY position"
        return [(row[0], row[1]) for row in self._db.execute_sql(sql, [conversation_id])]

    def user_prompts(self, conversation_id: str, limit: int) -> list[str]:
        """The text of the newest `limit` user messages that have some, oldest first.

        Walks back from the end only as far as it needs (the prompt's history on open).
        """
        rows = self._db.execute_sql(
            "SELECT content FROM messages WHERE conversation_id = ? AND role = 'user'"
            " AND content IS NOT NULL AND content != '' ORDER BY position DESC LIMIT ?",
            (conversation_id, limit),
        ).fetchall()
        return [row[0] for row in reversed(rows)]

    def tail_messages(self, conversation_id: str, limit: int) -> list[Message]:
        """Return the last `limit` messages of a conversation, oldest first."""
        return self.list_messages(conversation_id, limit=limit, before_position=2**62)

    def count_messages(self, conversation_id: str) -> int:
        """Return how many messages a conversation has."""
        row = self._m.message
        return row.select().where(row.conversation_id == conversation_id).count()

    def get_message(self, message_id: int) -> Message | None:
        """Return the message with this id, or `None`."""
        found = self._m.message.get_or_none(self._m.message.id == message_id)
        return None if found is None else message_from_row(found)

    def update_message(self, message_id: int, **fields: Any) -> Message:
        """Change some fields of a stored message and return the updated record.

        Allowed fields: content, reasoning, tool_calls, tool_call_id, name, recall_key,
        metadata, turn_id, round. The search index follows content changes.
        """
        unknown = sorted(set(fields) - UPDATABLE_FIELDS)
        if unknown:
            raise StoreError(
                f"cannot update message field(s) {', '.join(map(repr, unknown))}; "
                f"updatable: {', '.join(sorted(UPDATABLE_FIELDS))}"
            )
        with self._db.atomic():
            current = self.get_message(message_id)
            if current is None:
                raise StoreError(f"no message with id {message_id!r}")
            if "metadata" in fields and fields["metadata"] is None:
                fields["metadata"] = {}
            updated = dataclasses.replace(current, **fields)
            values = _row_values(updated)
            changed = {key: values[key] for key in fields}
            self._m.message.update(**changed).where(self._m.message.id == message_id).execute()
            self._touch(current.conversation_id, time.time())
        return updated

    def delete_message(self, message_id: int) -> bool:
        """Delete one message; return whether it existed. Later positions keep their numbers."""
        row = self._m.message
        return changed_rows(row.delete().where(row.id == message_id)) > 0

"""The conversation repository: conversations, their messages, and orphan repair."""

import time
from typing import Any

import peewee

from smith_tui.store import codec
from smith_tui.store.base import changed_rows
from smith_tui.store.errors import StoreError
from smith_tui.store.message_repo import MessageOperations
from smith_tui.store.models import ConversationRow
from smith_tui.store.records import Conversation
from smith_tui.store.repair import plan_orphan_repair


def _from_row(row: ConversationRow) -> Conversation:
    return Conversation(
        id=row.id,
        project_id=row.project_id,
        title=row.title,
        created_at=row.created_at,
        updated_at=row.updated_at,
        parent_id=row.parent_id,
        pinned_model=row.pinned_model,
        metadata=codec.loads(row.metadata),
    )


_GET_COLUMNS = (
    "id",
    "project_id",
    "title",
    "created_at",
    "updated_at",
    "parent_id",
    "pinned_model",
    "metadata",
)
_GET_SQL = f"SELECT {', '.join(_GET_COLUMNS)} FROM conversations WHERE id = ?"

# Tool call ids of the conversation's assistant messages that no tool message answers.
_ORPHAN_IDS_SQL = """
SELECT json_extract(call.value, '$.id') AS call_id
FROM messages AS m, json_each(m.tool_calls) AS call
WHERE m.conversation_id = ? AND m.role = 'assistant' AND m.tool_calls IS NOT NULL
  AND call.type = 'object'
EXCEPT
SELECT tool_call_id FROM messages
WHERE conversation_id = ? AND role = 'tool' AND tool_call_id IS NOT NULL
LIMIT 1
"""


class ConversationRepository(MessageOperations):
    """Conversations (top-level and dispatch children) and the messages in them."""

    def create(
        self,
        project_id: str,
        title: str | None = None,
        parent_id: str | None = None,
        *,
        pinned_model: str | None = None,
        metadata: dict[str, Any] | None = None,
        conversation_id: str | None = None,
    ) -> str:
        """Create a conversation and return its id (a fresh random one unless given)."""
        now = time.time()
        record = Conversation(
            id=codec.new_id() if conversation_id is None else conversation_id,
            project_id=project_id,
            title=title,
            created_at=now,
            updated_at=now,
            parent_id=parent_id,
            pinned_model=pinned_model,
            metadata={} if metadata is None else metadata,
        )
        codec.validate_record(record)
        codec.check_structural_id(record.id, "conversation id")
        codec.check_structural_id(record.project_id, "project_id")
        with self._db.atomic():
            if parent_id is not None:
                self._require_conversation(parent_id)
            if self.get(record.id) is not None:
                raise StoreError(f"a conversation with id {record.id!r} already exists")
            self._m.conversation.insert(
                id=record.id,
                project_id=record.project_id,
                title=record.title,
                created_at=record.created_at,
                updated_at=record.updated_at,
                parent_id=record.parent_id,
                pinned_model=record.pinned_model,
                metadata=codec.dumps(record.metadata, what="conversation metadata"),
            ).execute()
        return record.id

    def get(self, conversation_id: str) -> Conversation | None:
        """Return the conversation, or `None` when there is none with that id."""
        # A plain statement: the permission check of every tool call reads its grants here,
        # and peewee's query building cost more than the read.
        row = self._db.execute_sql(_GET_SQL, (conversation_id,)).fetchone()
        if row is None:
            return None
        values = dict(zip(_GET_COLUMNS, row, strict=True))
        values["metadata"] = codec.loads(values["metadata"])
        return Conversation(**values)

    def _listed(
        self, where: peewee.Expression | None, include_children: bool, limit: int | None
    ) -> list[Conversation]:
        conv = self._m.conversation
        query = conv.select()
        conditions = [] if where is None else [where]
        if not include_children:
            conditions.append(conv.parent_id.is_null())
        if conditions:
            query = query.where(*conditions)
        query = query.order_by(conv.updated_at.desc(), conv.created_at.desc())
        if limit is not None:
            query = query.limit(limit)
        return [_from_row(row) for row in query]

    def list_for_project(
        self, project_id: str, *, include_children: bool = False, limit: int | None = None
    ) -> list[Conversation]:
        """Conversations of a project, most recently updated first (children left out)."""
        return self._listed(self._m.conversation.project_id == project_id, include_children, limit)

    def list_all(
        self, *, include_children: bool = False, limit: int | None = None
    ) -> list[Conversation]:
        """Conversations of every project, most recently updated first (children left out)."""
        return self._listed(None, include_children, limit)

    def most_recent(self, project_id: str) -> Conversation | None:
        """The most recently updated top-level conversation of a project (for --continue)."""
        found = self.list_for_project(project_id, limit=1)
        return found[0] if found else None

    def children(self, conversation_id: str) -> list[Conversation]:
        """Dispatch child conversations of a conversation, oldest first."""
        conv = self._m.conversation
        query = (
            conv.select()
            .where(conv.parent_id == conversation_id)
            .order_by(conv.created_at, conv.id)
        )
        return [_from_row(row) for row in query]

    def _change(self, conversation_id: str, **values: Any) -> Conversation:
        conv = self._m.conversation
        with self._db.atomic():
            updated = conv.update(updated_at=time.time(), **values).where(
                conv.id == conversation_id
            )
            if updated.execute() == 0:
                raise StoreError(f"no conversation with id {conversation_id!r}")
            result = self.get(conversation_id)
        assert result is not None
        return result

    def rename(self, conversation_id: str, title: str | None) -> Conversation:
        """Set (or clear, with `None`) the title."""
        if title is not None and not isinstance(title, str):
            raise StoreError(f"a conversation title must be text, got {type(title).__name__}")
        return self._change(conversation_id, title=title)

    def set_pinned_model(self, conversation_id: str, model: str | None) -> Conversation:
        """Pin a model id to the conversation (or unpin with `None`)."""
        if model is not None and (not isinstance(model, str) or not model):
            raise StoreError(f"a pinned model must be a non-empty model id, got {model!r}")
        return self._change(conversation_id, pinned_model=model)

    def set_metadata(self, conversation_id: str, metadata: dict[str, Any]) -> Conversation:
        """Replace the conversation's metadata object."""
        if not isinstance(metadata, dict):
            raise StoreError(f"conversation metadata must be a dict, got {type(metadata).__name__}")
        return self._change(
            conversation_id, metadata=codec.dumps(metadata, what="conversation metadata")
        )

    def delete(self, conversation_id: str) -> bool:
        """Delete a conversation with everything in it, children included; return if it existed."""
        conv = self._m.conversation
        return changed_rows(conv.delete().where(conv.id == conversation_id)) > 0

    def _may_have_orphans(self, conversation_id: str) -> bool:
        """Whether some tool call id has no tool message carrying it (checked in SQLite).

        Resuming runs the repair on every open; reading and decoding a long conversation
        costs far more than this one query over its ids. It may answer ``True`` where the
        plan finds nothing (ids that are empty or not strings, tool calls SQLite cannot
        parse), never ``False`` where it would find something.
        """
        try:
            cursor = self._db.execute_sql(_ORPHAN_IDS_SQL, (conversation_id, conversation_id))
        except peewee.DatabaseError:
            return True
        return cursor.fetchone() is not None

    def repair_orphan_tool_calls(self, conversation_id: str) -> list[int]:
        """Give every tool call without a stored result a synthetic `TOOL_OUTCOME_UNKNOWN` result.

        Each synthetic tool message goes right after its assistant message's round (after the
        results that do exist) and carries metadata `{"synthetic": true}`. Running it again
        finds nothing to do. Returns the ids of the inserted messages.
        """
        inserted: list[int] = []
        if not self._may_have_orphans(conversation_id):
            return inserted
        with self._db.atomic():
            messages = self.list_messages(conversation_id)
            # Insert from the end backwards so earlier insertion points stay valid.
            for position, synthetic in reversed(plan_orphan_repair(messages, time.time())):
                inserted[:0] = self.insert_messages_at(conversation_id, position, synthetic)
        return inserted

"""The request-snapshot repository: one write-once debug row per outgoing LLM request."""

import time
from typing import Any

from smith_tui.store import codec
from smith_tui.store.base import Repository
from smith_tui.store.errors import StoreError
from smith_tui.store.models import SnapshotRow
from smith_tui.store.records import RequestSnapshot

_DAY = 86400.0


def _from_row(row: SnapshotRow) -> RequestSnapshot:
    return RequestSnapshot(
        id=row.id,
        conversation_id=row.conversation_id,
        turn_id=row.turn_id,
        created_at=row.created_at,
        model=row.model,
        system_prompt=row.system_prompt,
        tool_schemas=codec.loads(row.tool_schemas),
    )


class SnapshotRepository(Repository):
    """Record, read and prune request snapshots (there is no update: rows are write-once)."""

    def record(
        self,
        conversation_id: str,
        model: str,
        system_prompt: str,
        tool_schemas: list[Any],
        *,
        turn_id: str | None = None,
    ) -> int:
        """Store the model id, full system prompt and offered tool schemas; return the row id."""
        snapshot = RequestSnapshot(
            id=0,
            conversation_id=conversation_id,
            turn_id=turn_id,
            created_at=time.time(),
            model=model,
            system_prompt=system_prompt,
            tool_schemas=tool_schemas,
        )
        codec.validate_record(snapshot)
        conv = self._m.conversation
        with self._db.atomic():
            if not conv.select().where(conv.id == conversation_id).exists():
                raise StoreError(f"no conversation with id {conversation_id!r}")
            return self._m.snapshot.insert(
                conversation_id=conversation_id,
                turn_id=turn_id,
                created_at=snapshot.created_at,
                model=model,
                system_prompt=system_prompt,
                tool_schemas=codec.dumps(tool_schemas, what="tool_schemas"),
            ).execute()

    def get(self, snapshot_id: int) -> RequestSnapshot | None:
        """Return the snapshot, or `None`."""
        row = self._m.snapshot.get_or_none(self._m.snapshot.id == snapshot_id)
        return None if row is None else _from_row(row)

    def list_for_conversation(self, conversation_id: str) -> list[RequestSnapshot]:
        """Snapshots of a conversation, oldest first."""
        row = self._m.snapshot
        query = row.select().where(row.conversation_id == conversation_id).order_by(row.id)
        return [_from_row(r) for r in query]

    def prune(self, retention_days: float, *, now: float | None = None) -> int:
        """Delete snapshots older than `retention_days`; return how many were deleted."""
        if (
            isinstance(retention_days, bool)
            or not isinstance(retention_days, int | float)
            or retention_days < 0
        ):
            raise StoreError(
                f"retention_days must be a number of days >= 0, got {retention_days!r}"
            )
        cutoff = (time.time() if now is None else now) - retention_days * _DAY
        row = self._m.snapshot
        return row.delete().where(row.created_at < cutoff).execute()

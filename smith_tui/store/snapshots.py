"""The request-snapshot repository: one write-once debug row per outgoing LLM request.

A row holds the request's model and ids; its system prompt and tool schemas live in
`request_payloads`, each distinct pair once (a session repeats the same pair on every request).
"""

import time
from typing import Any

from smith_tui.store import codec
from smith_tui.store.base import Repository, changed_rows
from smith_tui.store.errors import StoreError
from smith_tui.store.models import PayloadRow, SnapshotRow
from smith_tui.store.records import RequestSnapshot
from smith_tui.store.sql_layout import payload_digest

_DAY = 86400.0

_CONVERSATION_SQL = "SELECT 1 FROM conversations WHERE id = ?"
_PAYLOAD_SQL = "SELECT id FROM request_payloads WHERE digest = ?"
_INSERT_PAYLOAD_SQL = (
    "INSERT INTO request_payloads (digest, system_prompt, tool_schemas) VALUES (?, ?, ?)"
)
_INSERT_SNAPSHOT_SQL = (
    "INSERT INTO request_snapshots (conversation_id, turn_id, created_at, model, payload_id) "
    "VALUES (?, ?, ?, ?, ?)"
)


def _from_row(row: SnapshotRow, payload: PayloadRow) -> RequestSnapshot:
    return RequestSnapshot(
        id=row.id,
        conversation_id=row.conversation_id,
        turn_id=row.turn_id,
        created_at=row.created_at,
        model=row.model,
        system_prompt=payload.system_prompt,
        tool_schemas=codec.loads(payload.tool_schemas),
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
        schemas_json = codec.dumps(tool_schemas, what="tool_schemas")
        digest = payload_digest(system_prompt, schemas_json)
        db = self._db
        # Plain statements: this runs before every model request, and peewee's query
        # building was most of its cost. Inside the write transaction (``BEGIN IMMEDIATE``)
        # nobody can add or drop the payload between the look-up and the insert.
        with db.atomic():
            if db.execute_sql(_CONVERSATION_SQL, (conversation_id,)).fetchone() is None:
                raise StoreError(f"no conversation with id {conversation_id!r}")
            found = db.execute_sql(_PAYLOAD_SQL, (digest,)).fetchone()
            if found is not None:
                payload_id = found[0]
            else:  # a session repeats its pair: only its first request stores it
                payload_id = db.execute_sql(
                    _INSERT_PAYLOAD_SQL, (digest, system_prompt, schemas_json)
                ).lastrowid
            snapshot_id: int = db.execute_sql(
                _INSERT_SNAPSHOT_SQL,
                (conversation_id, turn_id, snapshot.created_at, model, payload_id),
            ).lastrowid
            return snapshot_id

    def _with_payloads(self, rows: list[SnapshotRow]) -> list[RequestSnapshot]:
        payload = self._m.payload
        wanted = {row.payload_id for row in rows}
        found = {p.id: p for p in payload.select().where(payload.id.in_(wanted))} if wanted else {}
        return [_from_row(row, found[row.payload_id]) for row in rows]

    def get(self, snapshot_id: int) -> RequestSnapshot | None:
        """Return the snapshot, or `None`."""
        row = self._m.snapshot.get_or_none(self._m.snapshot.id == snapshot_id)
        return None if row is None else self._with_payloads([row])[0]

    def list_for_conversation(self, conversation_id: str) -> list[RequestSnapshot]:
        """Snapshots of a conversation, oldest first."""
        row = self._m.snapshot
        query = row.select().where(row.conversation_id == conversation_id).order_by(row.id)
        return self._with_payloads(list(query))

    def payload_count(self) -> int:
        """How many distinct (system prompt, tool schemas) pairs are stored."""
        return self._m.payload.select().count()

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
        return changed_rows(row.delete().where(row.created_at < cutoff))

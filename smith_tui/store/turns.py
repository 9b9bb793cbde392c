"""The turn repository: one row per turn, started `running` and finished with a status."""

import time

from smith_tui.store import codec
from smith_tui.store.base import Repository
from smith_tui.store.errors import StoreError
from smith_tui.store.models import TurnRow
from smith_tui.store.records import Turn

RUNNING = "running"


def _from_row(row: TurnRow) -> Turn:
    return Turn(
        id=row.id,
        conversation_id=row.conversation_id,
        role=row.role,
        status=row.status,
        started_at=row.started_at,
        stop_reason=row.stop_reason,
        error=row.error,
        finished_at=row.finished_at,
    )


class TurnRepository(Repository):
    """Start, finish and read turns."""

    def start(self, conversation_id: str, role: str, *, turn_id: str | None = None) -> str:
        """Record a running turn of `role` and return its id (fresh unless given)."""
        record = Turn(
            id=codec.new_id() if turn_id is None else turn_id,
            conversation_id=conversation_id,
            role=role,
            status=RUNNING,
            started_at=time.time(),
        )
        codec.validate_record(record)
        codec.check_structural_id(record.id, "turn id")
        if not role:
            raise StoreError("a turn needs a role name")
        conv = self._m.conversation
        with self._db.atomic():
            if not conv.select().where(conv.id == conversation_id).exists():
                raise StoreError(f"no conversation with id {conversation_id!r}")
            if self.get(record.id) is not None:
                raise StoreError(f"a turn with id {record.id!r} already exists")
            self._m.turn.insert(
                id=record.id,
                conversation_id=record.conversation_id,
                role=record.role,
                status=record.status,
                started_at=record.started_at,
            ).execute()
        return record.id

    def finish(
        self,
        turn_id: str,
        status: str,
        *,
        stop_reason: str | None = None,
        error: str | None = None,
    ) -> Turn:
        """Mark a turn finished with `status` (e.g. completed, cancelled, failed)."""
        if not isinstance(status, str) or not status or status == RUNNING:
            raise StoreError(
                f"a finished turn needs a final status other than 'running', got {status!r}"
            )
        for label, value in (("stop_reason", stop_reason), ("error", error)):
            if value is not None and not isinstance(value, str):
                raise StoreError(f"turn {label} must be text, got {type(value).__name__}")
        turn = self._m.turn
        with self._db.atomic():
            changed = (
                turn.update(
                    status=status, stop_reason=stop_reason, error=error, finished_at=time.time()
                )
                .where(turn.id == turn_id)
                .execute()
            )
            if not changed:
                raise StoreError(f"no turn with id {turn_id!r}")
            result = self.get(turn_id)
        assert result is not None
        return result

    def get(self, turn_id: str) -> Turn | None:
        """Return the turn, or `None`."""
        row = self._m.turn.get_or_none(self._m.turn.id == turn_id)
        return None if row is None else _from_row(row)

    def list_for_conversation(self, conversation_id: str) -> list[Turn]:
        """Turns of a conversation in the order they started."""
        turn = self._m.turn
        query = turn.select().where(turn.conversation_id == conversation_id)
        return [_from_row(row) for row in query.order_by(turn.started_at, turn.id)]

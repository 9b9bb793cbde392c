"""The usage repository: token usage per model call, summed by role for a conversation or turn."""

import time
from collections.abc import Iterable
from typing import cast

import peewee

from smith_tui.store import codec
from smith_tui.store.base import Repository
from smith_tui.store.errors import StoreError
from smith_tui.store.models import UsageRow
from smith_tui.store.records import UsageRecord, UsageTotals


def _from_row(row: UsageRow) -> UsageRecord:
    return UsageRecord(
        id=row.id,
        conversation_id=row.conversation_id,
        turn_id=row.turn_id,
        role=row.role,
        model=row.model,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        total_tokens=row.total_tokens,
        created_at=row.created_at,
        job_id=row.job_id,
        cost=row.cost,
    )


class UsageRepository(Repository):
    """Record usage and add it up."""

    def record(
        self,
        conversation_id: str,
        turn_id: str,
        role: str,
        model: str,
        input_tokens: int,
        output_tokens: int,
        *,
        total_tokens: int | None = None,
        cost: float | None = None,
        job_id: str | None = None,
    ) -> int:
        """Store one usage record and return its id.

        `total_tokens` defaults to input + output. `job_id` is the dispatch job id for usage
        of a child role.
        """
        if (
            total_tokens is None
            and isinstance(input_tokens, int)
            and isinstance(output_tokens, int)
        ):
            total_tokens = input_tokens + output_tokens
        record = UsageRecord(
            id=0,
            conversation_id=conversation_id,
            turn_id=turn_id,
            role=role,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=total_tokens,  # checked by validate_record
            created_at=time.time(),
            job_id=job_id,
            cost=cost,
        )
        codec.validate_record(record)
        codec.check_structural_id(turn_id, "turn_id")
        if job_id is not None:
            codec.check_structural_id(job_id, "job_id")
        for label in ("input_tokens", "output_tokens", "total_tokens"):
            if getattr(record, label) < 0:
                raise StoreError(
                    f"usage {label} must not be negative, got {getattr(record, label)}"
                )
        # One usage row per round: written with a plain INSERT (no peewee statement building)
        # and only when the foreign key fails do we look at why.
        try:
            cursor = self._db.execute_sql(
                "INSERT INTO usage (conversation_id, turn_id, role, job_id, model, input_tokens,"
                " output_tokens, total_tokens, cost, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    conversation_id,
                    turn_id,
                    role,
                    job_id,
                    model,
                    record.input_tokens,
                    record.output_tokens,
                    record.total_tokens,
                    cost,
                    record.created_at,
                ),
            )
        except peewee.IntegrityError:
            raise StoreError(f"no conversation with id {conversation_id!r}") from None
        row_id: int = cursor.lastrowid
        return row_id

    def list_for_conversation(self, conversation_id: str) -> list[UsageRecord]:
        """Usage records of a conversation, oldest first."""
        row = self._m.usage
        query = row.select().where(row.conversation_id == conversation_id).order_by(row.id)
        return [_from_row(r) for r in query]

    def list_for_turn(self, turn_id: str) -> list[UsageRecord]:
        """Usage records of a turn, oldest first."""
        row = self._m.usage
        return [_from_row(r) for r in row.select().where(row.turn_id == turn_id).order_by(row.id)]

    def _totals(self, where: peewee.Expression) -> dict[str, UsageTotals]:
        row = self._m.usage
        query = (
            row.select(
                row.role,
                peewee.fn.SUM(row.input_tokens),
                peewee.fn.SUM(row.output_tokens),
                peewee.fn.SUM(row.total_tokens),
                peewee.fn.SUM(row.cost),
                peewee.fn.COUNT(row.id),
            )
            .where(where)
            .group_by(row.role)
            .order_by(row.role)
            .tuples()
        )
        # .tuples() yields plain rows; the peewee stubs type the query's items as models.
        rows = cast("Iterable[tuple[str, int, int, int, float | None, int]]", query)
        return {
            role: UsageTotals(int(i), int(o), int(t), None if cost is None else float(cost), int(n))
            for role, i, o, t, cost, n in rows
        }

    def totals_by_role(self, conversation_id: str) -> dict[str, UsageTotals]:
        """Usage of a conversation summed per role (children's roles under their own names)."""
        return self._totals(self._m.usage.conversation_id == conversation_id)

    def totals_for_turn(self, turn_id: str) -> dict[str, UsageTotals]:
        """Usage of one turn summed per role."""
        return self._totals(self._m.usage.turn_id == turn_id)

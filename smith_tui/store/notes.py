"""The conversation-note repository: opaque note ids scoped to one conversation.

Conventions: scratchpad entries live under `scratchpad:<key>` (dispatch results under
`scratchpad:dispatch/<job_id>`), and each finished turn's record under `turn_record-<turn_id>`.
"""

import logging
import time
from collections.abc import Iterable
from typing import Any, cast

import peewee

from smith_tui.store import codec
from smith_tui.store.base import Repository, changed_rows
from smith_tui.store.errors import StoreError
from smith_tui.store.models import NoteRow
from smith_tui.store.records import Note

SCRATCHPAD_PREFIX = "scratchpad:"
TURN_RECORD_PREFIX = "turn_record-"
#: Note ids per query of ``get_turn_records`` (well under SQLite's bound on parameters).
RECORDS_PER_QUERY = 500

log = logging.getLogger(__name__)


def scratchpad_note_id(key: str) -> str:
    """Note id of a scratchpad key."""
    return SCRATCHPAD_PREFIX + key


def turn_record_note_id(turn_id: str) -> str:
    """Note id of a turn's record."""
    return TURN_RECORD_PREFIX + codec.check_structural_id(turn_id, "turn_id")


def _check_note_id(note_id: object) -> str:
    if not isinstance(note_id, str) or not note_id:
        raise StoreError(f"a note id must be a non-empty string, got {note_id!r}")
    return note_id


def _from_row(row: NoteRow) -> Note:
    return Note(
        conversation_id=row.conversation_id,
        note_id=row.note_id,
        content=row.content,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def prefix_condition(column: peewee.Field, prefix: str) -> peewee.Expression:
    """SQL condition `column starts with prefix`, exact (no LIKE/GLOB wildcards)."""
    return peewee.fn.substr(column, 1, len(prefix)) == prefix


class NoteRepository(Repository):
    """Put, get, delete and list the notes of a conversation."""

    def put(self, conversation_id: str, note_id: str, content: str) -> Note:
        """Create or replace a note; `created_at` survives replacement."""
        _check_note_id(note_id)
        if not isinstance(content, str):
            raise StoreError(f"note content must be text, got {type(content).__name__}")
        now = time.time()
        note = self._m.note
        conv = self._m.conversation
        with self._db.atomic():
            if not conv.select().where(conv.id == conversation_id).exists():
                raise StoreError(f"no conversation with id {conversation_id!r}")
            note.insert(
                conversation_id=conversation_id,
                note_id=note_id,
                content=content,
                created_at=now,
                updated_at=now,
            ).on_conflict(
                conflict_target=[note.conversation_id, note.note_id],
                update={note.content: content, note.updated_at: now},
            ).execute()
            result = self.get(conversation_id, note_id)
        assert result is not None
        return result

    def get(self, conversation_id: str, note_id: str) -> Note | None:
        """Return the note, or `None`."""
        note = self._m.note
        row = note.get_or_none(
            (note.conversation_id == conversation_id) & (note.note_id == note_id)
        )
        return None if row is None else _from_row(row)

    def delete(self, conversation_id: str, note_id: str) -> bool:
        """Delete the note; return whether it existed."""
        note = self._m.note
        query = note.delete().where(
            (note.conversation_id == conversation_id) & (note.note_id == note_id)
        )
        return changed_rows(query) > 0

    def list(self, conversation_id: str, prefix: str | None = None) -> list[Note]:
        """Notes of a conversation ordered by note id, only those starting with `prefix` if given."""
        note = self._m.note
        query = note.select().where(note.conversation_id == conversation_id)
        if prefix:
            query = query.where(prefix_condition(note.note_id, prefix))
        return [_from_row(row) for row in query.order_by(note.note_id)]

    def put_turn_record(self, conversation_id: str, turn_id: str, record: dict[str, Any]) -> Note:
        """Store a turn record (any JSON object) under `turn_record-<turn_id>`."""
        if not isinstance(record, dict):
            raise StoreError(f"a turn record must be a dict, got {type(record).__name__}")
        text = codec.dumps(record, what="turn record")
        return self.put(conversation_id, turn_record_note_id(turn_id), text)

    def get_turn_record(self, conversation_id: str, turn_id: str) -> dict[str, Any] | None:
        """Return the decoded turn record, or `None`."""
        note = self.get(conversation_id, turn_record_note_id(turn_id))
        return None if note is None else codec.loads(note.content)

    def get_turn_records(
        self, conversation_id: str, turn_ids: Iterable[str]
    ) -> dict[str, dict[str, Any]]:
        """The decoded records of turns ``turn_ids`` that have one, by turn id, read in one
        query per ``RECORDS_PER_QUERY`` turns (a reopen asks for every turn it loads).

        A turn id that is not a structural id, and a record that is not a JSON object, are
        left out with a warning: one damaged record must not hide the others."""
        wanted: dict[str, str] = {}
        for turn_id in dict.fromkeys(turn_ids):
            try:
                wanted[turn_record_note_id(turn_id)] = turn_id
            except StoreError as exc:
                log.warning("skipped the record of turn %r: %s", turn_id, exc.message)
        note = self._m.note
        ids = list(wanted)
        records: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), RECORDS_PER_QUERY):
            chunk = ids[start : start + RECORDS_PER_QUERY]
            query = (
                note.select(note.note_id, note.content)
                .where((note.conversation_id == conversation_id) & note.note_id.in_(chunk))
                .tuples()
            )
            # .tuples() yields plain rows; the peewee stubs type the query's items as models.
            for note_id, content in cast("Iterable[tuple[str, str]]", query):
                turn_id = wanted[note_id]
                try:
                    record = codec.loads(content)
                except ValueError:
                    log.warning("the record of turn %s is not JSON", turn_id)
                    continue
                if isinstance(record, dict):
                    records[turn_id] = record
                else:
                    log.warning("the record of turn %s is not a JSON object", turn_id)
        return records

"""The project-memory repository: notes keyed by project id, shared across conversations."""

import time

from smith_tui.store import codec
from smith_tui.store.base import Repository, changed_rows
from smith_tui.store.errors import StoreError
from smith_tui.store.models import MemoryRow
from smith_tui.store.notes import prefix_condition
from smith_tui.store.records import MemoryNote


def _from_row(row: MemoryRow) -> MemoryNote:
    return MemoryNote(
        project_id=row.project_id,
        note_id=row.note_id,
        content=row.content,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class ProjectMemoryRepository(Repository):
    """Put, get, delete and list project-memory notes (searchable; see `Store.search_project_memory`)."""

    def put(self, project_id: str, note_id: str, content: str) -> MemoryNote:
        """Create or replace a note of the project; `created_at` survives replacement."""
        codec.check_structural_id(project_id, "project_id")
        if not isinstance(note_id, str) or not note_id:
            raise StoreError(f"a note id must be a non-empty string, got {note_id!r}")
        if not isinstance(content, str):
            raise StoreError(f"memory content must be text, got {type(content).__name__}")
        now = time.time()
        row = self._m.memory
        with self._db.atomic():
            row.insert(
                project_id=project_id,
                note_id=note_id,
                content=content,
                created_at=now,
                updated_at=now,
            ).on_conflict(
                conflict_target=[row.project_id, row.note_id],
                update={row.content: content, row.updated_at: now},
            ).execute()
            result = self.get(project_id, note_id)
        assert result is not None
        return result

    def get(self, project_id: str, note_id: str) -> MemoryNote | None:
        """Return the note, or `None`."""
        row = self._m.memory
        found = row.get_or_none((row.project_id == project_id) & (row.note_id == note_id))
        return None if found is None else _from_row(found)

    def delete(self, project_id: str, note_id: str) -> bool:
        """Delete the note; return whether it existed."""
        row = self._m.memory
        query = row.delete().where((row.project_id == project_id) & (row.note_id == note_id))
        return changed_rows(query) > 0

    def list(self, project_id: str, prefix: str | None = None) -> list[MemoryNote]:
        """Notes of a project ordered by note id, only those starting with `prefix` if given."""
        row = self._m.memory
        query = row.select().where(row.project_id == project_id)
        if prefix:
            query = query.where(prefix_condition(row.note_id, prefix))
        return [_from_row(r) for r in query.order_by(row.note_id)]

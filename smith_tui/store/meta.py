"""The meta repository: database facts (`schema_version`) and session state to resume."""

from typing import Any

from smith_tui.store import codec
from smith_tui.store.base import Repository, changed_rows
from smith_tui.store.errors import StoreError

SCHEMA_VERSION = "schema_version"
ACTIVE_CONVERSATION_ID = "active_conversation_id"


class MetaRepository(Repository):
    """Small keyed facts about the database and the last session."""

    def get(self, key: str, default: Any = None) -> Any:
        """Return the decoded value under `key`, or `default`."""
        row = self._m.meta.get_or_none(self._m.meta.key == key)
        return default if row is None else codec.loads(row.value)

    def set(self, key: str, value: Any) -> None:
        """Store a JSON value under `key` (`schema_version` is managed by migrations only)."""
        if not isinstance(key, str) or not key:
            raise StoreError(f"a meta key must be a non-empty string, got {key!r}")
        if key == SCHEMA_VERSION:
            raise StoreError("schema_version is written by migrations only")
        text = codec.dumps(value, what=f"meta value {key!r}")
        row = self._m.meta
        row.insert(key=key, value=text).on_conflict(
            conflict_target=[row.key], update={row.value: text}
        ).execute()

    def delete(self, key: str) -> bool:
        """Remove `key`; return whether it existed."""
        if key == SCHEMA_VERSION:
            raise StoreError("schema_version is written by migrations only")
        return changed_rows(self._m.meta.delete().where(self._m.meta.key == key)) > 0

    def schema_version(self) -> int:
        """The schema version of the open database."""
        return int(self.get(SCHEMA_VERSION))

    def active_conversation_id(self, project_id: str | None = None) -> str | None:
        """The conversation the last session of `project_id` was in (for auto-resume).

        Each project has its own key, `active_conversation_id:<project_id>`, so starting in
        one project never resumes another's conversation. Without `project_id` this reads
        the single key older versions wrote for every project.
        """
        value = self.get(_active_key(project_id))
        return value if isinstance(value, str) and value else None

    def set_active_conversation_id(
        self, conversation_id: str | None, project_id: str | None = None
    ) -> None:
        """Record the active conversation of `project_id`; `None` clears it."""
        key = _active_key(project_id)
        if conversation_id is None:
            self._m.meta.delete().where(self._m.meta.key == key).execute()
            return
        self.set(key, codec.check_structural_id(conversation_id, "conversation id"))


def _active_key(project_id: str | None) -> str:
    if project_id is None:
        return ACTIVE_CONVERSATION_ID
    return f"{ACTIVE_CONVERSATION_ID}:{codec.check_structural_id(project_id, 'project id')}"

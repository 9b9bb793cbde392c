"""The config repository: JSON values by key (e.g. `runtime_overrides`, the persisted patch)."""

import time
from typing import Any

from smith_tui.store import codec
from smith_tui.store.base import Repository, changed_rows
from smith_tui.store.errors import StoreError

RUNTIME_OVERRIDES = "runtime_overrides"


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise StoreError(f"a config key must be a non-empty string, got {key!r}")
    return key


class ConfigRepository(Repository):
    """Get, set, delete and list JSON config values."""

    def get(self, key: str, default: Any = None) -> Any:
        """Return the decoded value stored under `key`, or `default`."""
        row = self._m.config.get_or_none(self._m.config.key == key)
        return default if row is None else codec.loads(row.value)

    def set(self, key: str, value: Any) -> None:
        """Store `value` (anything JSON can hold) under `key`, replacing what was there."""
        text = codec.dumps(value, what=f"config value {key!r}")
        row = self._m.config
        now = time.time()
        row.insert(key=_check_key(key), value=text, updated_at=now).on_conflict(
            conflict_target=[row.key], update={row.value: text, row.updated_at: now}
        ).execute()

    def delete(self, key: str) -> bool:
        """Remove `key`; return whether it existed."""
        return changed_rows(self._m.config.delete().where(self._m.config.key == key)) > 0

    def all(self) -> dict[str, Any]:
        """Every stored key with its decoded value."""
        row = self._m.config
        return {r.key: codec.loads(r.value) for r in row.select().order_by(row.key)}

"""The layered configuration of a runtime and the ``/config set`` patch kept in the store."""

from __future__ import annotations

from typing import Any, Protocol

from smith_tui.config import (
    ConfigError,
    EffectiveConfig,
    LoadOptions,
    get_value,
    load_effective_config,
    set_override,
    unset_override,
)
from smith_tui.engine.errors import UserRequestError

OVERRIDES_KEY = "runtime_overrides"
"""The store's config entry holding the ``/config set`` patch."""


class ConfigEntries(Protocol):
    """The store's key/value config entries."""

    def get(self, key: str) -> Any:
        """The value of ``key``, or ``None``."""

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``."""


class ConfigOverrides:
    """Loads the effective config (defaults, file, saved patch, in-memory overrides) and
    changes the saved patch, validating the result before anything is stored."""

    def __init__(
        self,
        entries: ConfigEntries,
        *,
        config_path: str | None = None,
        ephemeral: dict[str, Any] | None = None,
    ) -> None:
        self.entries = entries
        self.config_path = config_path
        self.ephemeral = dict(ephemeral or {})
        self.config: EffectiveConfig = self._load(self._patch())

    def _patch(self) -> dict[str, Any]:
        return self.entries.get(OVERRIDES_KEY) or {}

    def _load(self, patch: dict[str, Any]) -> EffectiveConfig:
        return load_effective_config(
            LoadOptions(config_path=self.config_path, persisted=patch, ephemeral=self.ephemeral)
        )

    def reload(self) -> EffectiveConfig:
        """Load the config again (after an edit of the file or the saved patch)."""
        self.config = self._load(self._patch())
        return self.config

    def set(self, path: str, raw_value: str) -> Any:
        """Validate then save one override; returns the value now in effect."""
        new_patch = set_override(self._patch(), path, raw_value)
        try:
            self._load(new_patch)
        except ConfigError as exc:
            raise UserRequestError(exc.message) from None
        self.entries.set(OVERRIDES_KEY, new_patch)
        self.reload()
        return get_value(self.config, path)

    def unset(self, path: str) -> None:
        """Remove one override (pruning empty parents)."""
        self.entries.set(OVERRIDES_KEY, unset_override(self._patch(), path))
        self.reload()

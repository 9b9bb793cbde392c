"""The configuration layers as pydantic-settings sources (docs/DESIGN.md §5.3).

Each layer is a ``LayerSource``: its table is read when the source is built, in layer
order, so the first unreadable layer is the one reported. ``SmithSettings`` is
``SmithConfig`` as a ``BaseSettings`` whose sources are exactly those layers, highest
precedence first; pydantic-settings merges them (tables key by key, anything else
replaces, as ``tree.deep_merge`` does) and validates the result.

This module imports pydantic-settings (tens of milliseconds): the loader imports it when it
first loads a configuration, so importing ``smith_tui.config`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from smith_tui.config.frozen import thaw
from smith_tui.config.schema import SmithConfig


class LayerSource(PydanticBaseSettingsSource):
    """One named layer (``defaults``, ``user``, ``env``, ``persisted``, ``ephemeral``)."""

    def __init__(self, name: str, table: Mapping[str, Any]) -> None:
        super().__init__(SmithSettings)
        self.name = name
        self.table: dict[str, Any] = thaw(table)
        """The layer as plain dicts and lists (pydantic-settings merges only plain dicts)."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """The layer's value for top-level setting ``field_name`` (``None`` when absent)."""
        return self.table.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        # Unknown keys stay in, so validation names them (extra settings are forbidden).
        table: dict[str, Any] = thaw(self.table)
        return table

    def __repr__(self) -> str:
        return f"LayerSource({self.name!r})"


_LAYERS: ContextVar[tuple[LayerSource, ...]] = ContextVar("smith_config_layers")
"""The sources of the load in progress, highest precedence first.

``settings_customise_sources`` is a class method with no arguments of its own; this is
how one ``settings_from`` call hands it that call's layers (thread- and task-safe)."""


class SmithSettings(SmithConfig, BaseSettings):
    """``SmithConfig`` built from the layer sources of one ``settings_from`` call.

    Instances are ``SmithConfig`` instances too. Built any other way (``SmithSettings()``
    outside ``settings_from``) it has no layers and raises ``LookupError``.
    """

    # SmithConfig's rules stand (pydantic-settings would also validate every default). Its
    # own sources (variables named like settings, .env files, secret folders) are never
    # asked: ``settings_customise_sources`` returns only the layers.
    model_config = SettingsConfigDict(validate_default=False)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the layers of the load in progress; the built-in env/.env/secret sources never."""
        return _LAYERS.get()


@contextmanager
def _layers(sources: tuple[LayerSource, ...]) -> Iterator[None]:
    token = _LAYERS.set(sources)
    try:
        yield
    finally:
        _LAYERS.reset(token)


def settings_from(layers: Sequence[LayerSource]) -> SmithSettings:
    """Merge and validate ``layers`` (lowest precedence first).

    Raises pydantic's ``ValidationError`` with the same locations ``SmithConfig`` gives.
    """
    with _layers(tuple(reversed(layers))):
        return SmithSettings()

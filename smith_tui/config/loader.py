"""Build the effective configuration from its layers (docs/DESIGN.md §5.3).

Layers, lowest to highest precedence:

1. ``defaults``  – built in (``DEFAULTS``).
2. ``user``      – the user JSON file: ``--config PATH``, else
   ``$XDG_CONFIG_HOME/smith/config.json``. A missing default file is fine; a missing
   ``--config`` file is an error. An empty file means no settings.
3. ``env``       – ``SMITH_API_URL`` (→ ``llm_config.api_url``).
4. ``persisted`` – the ``/config set`` patch, handed in by the caller (the store owns it).
5. ``ephemeral`` – in-memory overrides for this process (e.g. ``--api-url``), never saved.

Each layer is a pydantic-settings source (``settings.LayerSource``) and ``SmithSettings``
merges and validates them: tables merge key by key, anything else replaces, and the result
is validated as a whole. The layers are kept by name for ``EffectiveConfig.source_of``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError

from smith_tui.config.environment import API_URL_VARIABLE, read_environment, read_secret
from smith_tui.config.errors import ConfigError, ConfigProblem
from smith_tui.config.frozen import FrozenDict, freeze
from smith_tui.config.layers import (
    LAYER_NAMES,
    json_kind,
    merge_layers,
    read_user_file,
    user_file_path,
)
from smith_tui.config.schema import DEFAULTS, SmithConfig
from smith_tui.config.secrets import note_secret_variables
from smith_tui.config.tree import contains, split_path
from smith_tui.config.validation import problems_of

_INDEX = re.compile(r"\[[^\]]*\]")


@dataclass(frozen=True)
class LoadOptions:
    """What ``load_effective_config`` needs from its caller."""

    config_path: str | os.PathLike[str] | None = None
    """``--config PATH``: replaces the default user file path; it must exist."""
    persisted: Mapping[str, Any] | None = None
    """The persisted ``/config set`` patch, as read by the store."""
    ephemeral: Mapping[str, Any] | None = None
    """In-memory overrides for this process only (e.g. ``{"llm_config": {"api_url": …}}``)."""


@dataclass(frozen=True)
class EffectiveConfig:
    """The validated configuration a session runs with, and where each value came from."""

    effective: FrozenDict
    """The merged layers, deep-frozen: the snapshot a turn observes."""
    model: SmithConfig
    """The validated, typed view (schema defaults filled in, e.g. ``services.ui.keys``)."""
    layers: FrozenDict
    """Each layer by name (``LAYER_NAMES``), deep-frozen."""
    user_config_path: Path
    """The user JSON file that was (or would have been) read."""
    env_model: str | None = None
    """``SMITH_MODEL``, for model selection step 6; not merged into ``default_model``."""
    _api_key: SecretStr | None = field(default=None, repr=False, compare=False)

    def api_key(self) -> str | None:
        """The API key from the variable named by ``llm_config.api_key_env``, or ``None``."""
        return self._api_key.get_secret_value() if self._api_key is not None else None

    def source_of(self, path: str) -> str:
        """Name of the layer the value at dotted ``path`` comes from.

        For a table this is the highest layer contributing to it. A value only the
        schema supplies (e.g. ``services.ui.keys.cancel``) reports ``"defaults"``.
        Raises ``KeyError`` for a path that names no setting.
        """
        parts = split_path(path)
        if contains(self.effective, parts):
            for name in reversed(LAYER_NAMES):
                if contains(self.layers[name], parts):
                    return name
        if contains(self.model.model_dump(), parts):
            return "defaults"
        raise KeyError(path)


def load_effective_config(options: LoadOptions | None = None) -> EffectiveConfig:
    """Merge the layers, validate, and return the frozen result.

    Raises ``ConfigError`` with one message naming the file (or layer), the line and
    column or dotted path, and the rule broken.
    """
    options = options or LoadOptions()
    explicit = options.config_path is not None
    user_path = user_file_path(options.config_path)
    # pydantic-settings costs tens of milliseconds to import: only a load pays it, not every
    # importer of the config package (docs/PERFORMANCE.md).
    from smith_tui.config.settings_sources import LayerSource, settings_from

    environment = read_environment()
    sources = [  # read in this order, so the lowest unreadable layer is the one reported
        LayerSource("defaults", DEFAULTS),
        LayerSource("user", read_user_file(user_path, must_exist=explicit)),
        LayerSource("env", environment.as_layer()),
        LayerSource(
            "persisted", _as_table(options.persisted, "the persisted overrides (/config set)")
        ),
        LayerSource("ephemeral", _as_table(options.ephemeral, "the session overrides")),
    ]
    layers = {source.name: source.table for source in sources}
    try:
        model = settings_from(sources)
    except ValidationError as exc:
        raise _attributed(problems_of(exc), layers, user_path) from None
    merged = merge_layers(layers)  # the same merge pydantic-settings made, kept for the snapshot
    note_secret_variables(model)  # child processes started from now on never see these keys
    return EffectiveConfig(
        effective=freeze(merged),
        model=model,
        layers=freeze(layers),
        user_config_path=user_path,
        env_model=environment.model,
        _api_key=read_secret(model.llm_config.api_key_env),
    )


def _as_table(value: Mapping[str, Any] | None, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"Invalid configuration: {what} must be a table, not {json_kind(value)}.")
    return dict(value)


def _origin(parts: list[str], layers: Mapping[str, Mapping[str, Any]]) -> str:
    for length in range(len(parts), 0, -1):
        for name in reversed(LAYER_NAMES):
            if contains(layers[name], parts[:length]):
                return name
    return "defaults"


def _describe(layer: str, user_path: Path) -> str:
    return {
        "defaults": "the built-in defaults",
        "user": f"{user_path}",
        "env": f"the environment variable {API_URL_VARIABLE}",
        "persisted": "the saved overrides (/config set; remove one with /config unset <path>)",
        "ephemeral": "the session overrides (command-line flags)",
    }[layer]


def _attributed(
    problems: tuple[ConfigProblem, ...], layers: Mapping[str, Mapping[str, Any]], user_path: Path
) -> ConfigError:
    origins = [_origin(split_path(_INDEX.sub("", p.path)), layers) for p in problems]
    if len(set(origins)) == 1:
        header = f"Invalid configuration in {_describe(origins[0], user_path)}:"
        lines = [f"  {problem}" for problem in problems]
    else:
        header = "Invalid configuration:"
        lines = [
            f"  {problem}  [in {_describe(origin, user_path)}]"
            for problem, origin in zip(problems, origins, strict=True)
        ]
    return ConfigError("\n".join([header, *lines]), problems)

"""The configuration's layers without the schema: their names and order, the user's JSON
file, and how layers merge (docs/DESIGN.md §5.3).

Pydantic-free, so the first frame can read what it shows (the permission mode, the sandbox)
the same way :func:`~smith_tui.config.loader.load_effective_config` does, before the schema
is imported; the loader builds on these.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from smith_tui.config.errors import ConfigError
from smith_tui.config.locations import default_config_path
from smith_tui.config.tree import deep_merge

LAYER_NAMES = ("defaults", "user", "env", "persisted", "ephemeral")
"""Layer names, lowest precedence first."""


def user_file_path(config_path: str | os.PathLike[str] | None) -> Path:
    """The user JSON file: ``--config PATH``, else ``$XDG_CONFIG_HOME/smith/config.json``."""
    return default_config_path() if config_path is None else Path(config_path)


def merge_layers(layers: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Merge ``layers`` (by name; a missing one counts as empty) in ``LAYER_NAMES`` order:
    tables merge key by key, anything else replaces."""
    merged: dict[str, Any] = {}
    for name in LAYER_NAMES:
        merged = deep_merge(merged, layers.get(name) or {})
    return merged


def read_user_file(path: Path, *, must_exist: bool = False) -> dict[str, Any]:
    """Read the user JSON file as a table; ``{}`` when it is missing (unless ``must_exist``)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if must_exist:
            raise ConfigError(f"Config file {path} does not exist.") from None
        return {}
    except IsADirectoryError:
        raise ConfigError(f"Config file {path} is a directory, not a JSON file.") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read config file {path}: {exc.strerror}.") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"Config file {path} is not UTF-8 text (bad byte at offset {exc.start})."
        ) from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError(_syntax_message(path, text, exc)) from None
    except ValueError as exc:
        raise ConfigError(f"Invalid JSON in {path}: {exc}.") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"Config file {path} must hold a JSON object ({{ ... }}) at the top level, "
            f"not {json_kind(data)}."
        )
    return data


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _syntax_message(path: Path, text: str, exc: json.JSONDecodeError) -> str:
    lines = text.splitlines() or [""]
    line = lines[min(exc.lineno, len(lines)) - 1]
    excerpt = f"\n  {line}\n  {' ' * (exc.colno - 1)}^" if len(line) <= 120 else ""
    return f"Invalid JSON in {path} at line {exc.lineno}, column {exc.colno}: {exc.msg}.{excerpt}"


def json_kind(value: Any) -> str:
    """What a JSON value is, for a message: ``a list``, ``a string``, ``null`` …"""
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"

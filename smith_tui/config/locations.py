"""Where smith keeps its files, following the XDG base-directory convention."""

from __future__ import annotations

import os
from pathlib import Path

APP_DIR_NAME = "smith"
CONFIG_FILE_NAME = "config.json"
DB_FILE_NAME = "smith.db"


def _xdg_base(variable: str, fallback: tuple[str, ...]) -> Path:
    # The XDG spec says relative or empty values must be ignored.
    value = os.environ.get(variable, "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home().joinpath(*fallback)


def config_dir() -> Path:
    """``$XDG_CONFIG_HOME/smith``, or ``~/.config/smith`` when the variable is unset."""
    return _xdg_base("XDG_CONFIG_HOME", (".config",)) / APP_DIR_NAME


def data_dir() -> Path:
    """``$XDG_DATA_HOME/smith``, or ``~/.local/share/smith`` when the variable is unset."""
    return _xdg_base("XDG_DATA_HOME", (".local", "share")) / APP_DIR_NAME


def default_config_path() -> Path:
    """The user JSON config file read when ``--config`` is not given."""
    return config_dir() / CONFIG_FILE_NAME


def default_db_path() -> Path:
    """The SQLite database used when ``--db`` is not given."""
    return data_dir() / DB_FILE_NAME

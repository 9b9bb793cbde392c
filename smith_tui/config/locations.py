"""Where smith keeps its files, following the XDG base-directory convention."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP_DIR_NAME = "smith"
CONFIG_FILE_NAME = "config.json"
DB_FILE_NAME = "smith.db"


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's home folder: ``$HOME`` of ``env`` (default: this process's environment)
    when it is an absolute path, else what the system's user database says."""
    value = (os.environ if env is None else env).get("HOME", "")
    return Path(value) if value and os.path.isabs(value) else Path.home()


def _xdg_base(
    variable: str, fallback: tuple[str, ...], env: Mapping[str, str] | None = None
) -> Path:
    # The XDG spec says relative or empty values must be ignored.
    value = (os.environ if env is None else env).get(variable, "")
    if value and os.path.isabs(value):
        return Path(value)
    return home_dir(env).joinpath(*fallback)


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/smith``, or ``~/.config/smith`` when the variable is unset.

    ``env`` is the environment to read (default: this process's): a runtime passes its
    own, so the config file's folder, the user's ``AGENTS.md``, commands, skills and
    agents are found in one place.
    """
    return _xdg_base("XDG_CONFIG_HOME", (".config",), env) / APP_DIR_NAME


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/smith`` of ``env`` (default: this process's environment), or
    ``~/.local/share/smith`` when the variable is unset."""
    return _xdg_base("XDG_DATA_HOME", (".local", "share"), env) / APP_DIR_NAME


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/smith`` of ``env`` (default: this process's environment), or
    ``~/.cache/smith`` when the variable is unset: files smith can always rebuild."""
    return _xdg_base("XDG_CACHE_HOME", (".cache",), env) / APP_DIR_NAME


def default_config_path() -> Path:
    """The user JSON config file read when ``--config`` is not given."""
    return config_dir() / CONFIG_FILE_NAME


def default_db_path() -> Path:
    """The SQLite database used when ``--db`` is not given."""
    return data_dir() / DB_FILE_NAME

"""Helpers for tool tests: a context rooted in a project folder, and writing its files."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from smith_tui.cancel import CancelToken
from smith_tui.config import (
    ConfigError,
    LoadOptions,
    SmithConfig,
    check_config,
    load_effective_config,
)
from smith_tui.tools.spec import ToolContext


def typed_config(table: Mapping[str, Any] | None = None) -> SmithConfig:
    """``table`` (a partial config, as in a config file) validated as the loader does."""
    return check_config(table or {})


def config_file(folder: Path, table: Mapping[str, Any]) -> Path:
    """``folder/config.json`` holding ``table``."""
    path = folder / "config.json"
    path.write_text(json.dumps(table))
    return path


def load_error(folder: Path, table: Mapping[str, Any]) -> str:
    """The message loading a config file holding ``table`` fails with (it must fail); the
    file's path is in it."""
    path = config_file(folder, table)
    try:
        load_effective_config(LoadOptions(config_path=path))
    except ConfigError as exc:
        assert str(path) in exc.message, exc.message
        return exc.message
    raise AssertionError(f"{table} loaded without an error")


def tool_budget(tool: str, chars: int) -> dict[str, Any]:
    """The ``services`` table setting ``services.tool.<tool>.max_output_chars``."""
    return {"tool": {tool: {"max_output_chars": chars}}}


def project_context(root: Path, role: str, turn_id: str = "t", **config: Any) -> ToolContext:
    """A tool context for ``role`` whose cwd and project root are ``root``; ``config``
    holds top-level settings (``services={...}``), validated."""
    return ToolContext(
        role=role,
        turn_id=turn_id,
        cwd=root,
        cancel=CancelToken.new_root(),
        project_root=root,
        config=typed_config(config),
    )


def write_file(root: Path, rel: str, text: str) -> None:
    """Write ``text`` to ``root/rel``, creating the folders on the way."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)

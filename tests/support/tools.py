"""Helpers for tool tests: a context rooted in a project folder, and writing its files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smith_tui.cancel import CancelToken
from smith_tui.tools.spec import ToolContext


def project_context(root: Path, role: str, turn_id: str = "t", **config: Any) -> ToolContext:
    """A tool context for ``role`` whose cwd and project root are ``root``."""
    return ToolContext(
        role=role,
        turn_id=turn_id,
        cwd=root,
        cancel=CancelToken.new_root(),
        project_root=root,
        config=config,
    )


def write_file(root: Path, rel: str, text: str) -> None:
    """Write ``text`` to ``root/rel``, creating the folders on the way."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)

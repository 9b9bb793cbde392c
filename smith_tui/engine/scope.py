"""Per-turn scope: the working directory, its project, its index file and instruction files.

:func:`compute_scope` runs once at the start of every turn. Project discovery
is injected (the store's ``discover_project`` by default) and may fail: the
turn then runs without project information and the problem is recorded in
``TurnScope.warnings`` instead of raising.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from smith_tui.engine.bounded_text import read_bounded
from smith_tui.engine.instructions import InstructionFile, find_instructions

#: Largest part of the index file placed in the system prompt (about 16k tokens).
MAX_INDEX_BYTES = 64 * 1024

Discover = Callable[[Path], Any]


@dataclass(frozen=True)
class TurnScope:
    """Where a turn runs.

    ``root`` is the git repository root (``None`` outside a repository);
    ``index_content`` is the text of ``<project root>/<index_file>`` when it
    exists (possibly truncated, with a note saying so); ``instructions`` are the
    ``AGENTS.md`` layers (:mod:`smith_tui.engine.instructions`) in prompt order.
    """

    cwd: Path
    root: Path | None = None
    origin: str | None = None
    normalized_origin: str | None = None
    project_id: str | None = None
    index_file: str | None = None
    index_content: str | None = None
    warnings: tuple[str, ...] = field(default=())
    instructions: tuple[InstructionFile, ...] = field(default=())

    @property
    def project_root(self) -> Path:
        """The repository root, or the working directory outside a repository."""
        return self.root if self.root is not None else self.cwd


def compute_scope(
    cwd: str | os.PathLike[str],
    index_file: str | None,
    discover: Discover | None = None,
    *,
    max_index_bytes: int = MAX_INDEX_BYTES,
    user_dir: Path | None = None,
    instructions: bool = True,
) -> TurnScope:
    """Resolve the project of ``cwd`` and read its index file.

    ``discover(cwd)`` returns an object with ``root``, ``origin``,
    ``normalized_origin``, ``project_id`` and optionally ``in_git_repository``
    (or ``None`` when there is no project). The index file is read relative to
    the repository root (the working directory outside one): a missing file
    gives ``None``, a file over ``max_index_bytes`` is cut with a note, and
    bytes that are not UTF-8 are replaced. With ``instructions`` the ``AGENTS.md`` layers
    are read too, the user's from ``user_dir`` (default: smith's config folder).
    """
    cwd_path = Path(cwd).expanduser().absolute()
    warnings: list[str] = []
    if discover is None:
        from smith_tui.store.project_identity import discover_project

        discover = discover_project
    try:
        project = discover(cwd_path)
    except Exception as exc:  # a failed discovery must not fail the turn
        warnings.append(f"could not identify the project of {cwd_path}: {exc}")
        project = None

    root = origin = normalized = project_id = None
    if project is not None:
        in_repo = getattr(project, "in_git_repository", True)
        raw_root = getattr(project, "root", None)
        root = Path(raw_root) if raw_root is not None and in_repo else None
        origin = getattr(project, "origin", None) or None
        normalized = getattr(project, "normalized_origin", None) or None
        project_id = getattr(project, "project_id", None) or None

    content = None
    base = root if root is not None else cwd_path
    if index_file:
        content = _read_index(base, index_file, max_index_bytes, warnings)
    files: tuple[InstructionFile, ...] = ()
    if instructions:
        if user_dir is None:
            from smith_tui.config import config_dir

            user_dir = config_dir()
        skip = [base / index_file] if index_file and _is_safe_relative(index_file) else []
        files = find_instructions(cwd_path, base, user_dir, warnings, skip=skip)
    return TurnScope(
        cwd_path,
        root,
        origin,
        normalized,
        project_id,
        index_file or None,
        content,
        tuple(warnings),
        files,
    )


def _read_index(base: Path, name: str, limit: int, warnings: list[str]) -> str | None:
    """Read ``base / name`` safely; see :func:`compute_scope` and :func:`read_bounded`."""
    if not _is_safe_relative(name):
        warnings.append(
            f"index_file {name!r} must be a relative path inside the project; it was ignored"
        )
        return None
    found = read_bounded(base / name, limit, warnings, label=name, inside=base, kind="index_file")
    if found is None:
        return None
    text = found.text
    if found.cut:
        text = (
            text.rstrip("\n")
            + f"\n\n[{name} truncated: showing the first {found.shown} of {found.size} bytes]"
        )
    return text if text.strip() else None


def _is_safe_relative(name: str) -> bool:
    posix, windows = PurePosixPath(name), PureWindowsPath(name)
    if posix.is_absolute() or windows.is_absolute() or windows.drive:
        return False
    return ".." not in posix.parts and ".." not in windows.parts

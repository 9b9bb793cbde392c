"""Per-turn scope: the working directory, its project and the project's index file.

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

from smith_tui.tools.files import NotRegularFileError, open_regular_file, read_capped

#: Largest part of the index file placed in the system prompt (about 16k tokens).
MAX_INDEX_BYTES = 64 * 1024

Discover = Callable[[Path], Any]


@dataclass(frozen=True)
class TurnScope:
    """Where a turn runs.

    ``root`` is the git repository root (``None`` outside a repository);
    ``index_content`` is the text of ``<project root>/<index_file>`` when it
    exists (possibly truncated, with a note saying so).
    """

    cwd: Path
    root: Path | None = None
    origin: str | None = None
    normalized_origin: str | None = None
    project_id: str | None = None
    index_file: str | None = None
    index_content: str | None = None
    warnings: tuple[str, ...] = field(default=())

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
) -> TurnScope:
    """Resolve the project of ``cwd`` and read its index file.

    ``discover(cwd)`` returns an object with ``root``, ``origin``,
    ``normalized_origin``, ``project_id`` and optionally ``in_git_repository``
    (or ``None`` when there is no project). The index file is read relative to
    the repository root (the working directory outside one): a missing file
    gives ``None``, a file over ``max_index_bytes`` is cut with a note, and
    bytes that are not UTF-8 are replaced.
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
    if index_file:
        base = root if root is not None else cwd_path
        content = _read_index(base, index_file, max_index_bytes, warnings)
    return TurnScope(
        cwd_path, root, origin, normalized, project_id, index_file or None, content, tuple(warnings)
    )


def _read_index(base: Path, name: str, limit: int, warnings: list[str]) -> str | None:
    """Read ``base / name`` safely; see :func:`compute_scope`.

    The path is resolved (symlinks included) and must stay inside ``base``;
    only a regular file is opened, without blocking, and at most ``limit + 1``
    bytes are read.
    """
    if not _is_safe_relative(name):
        warnings.append(
            f"index_file {name!r} must be a relative path inside the project; it was ignored"
        )
        return None
    path = base / name
    real = Path(os.path.realpath(path))
    root = Path(os.path.realpath(base))
    if real != root and root not in real.parents:
        warnings.append(
            f"index_file {name!r} resolves to {real}, outside the project {root}; it was ignored"
        )
        return None
    try:
        fd = open_regular_file(real)
        try:
            size = os.fstat(fd).st_size
            data = read_capped(fd, limit + 1)
        finally:
            os.close(fd)
    except NotRegularFileError as exc:
        warnings.append(f"index_file {path} is {exc.kind}, not a regular file; it was ignored")
        return None
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        warnings.append(f"could not read {path}: {exc.strerror or exc}")
        return None

    truncated = len(data) > limit
    if truncated:
        data = data[:limit]
        cut = data.rfind(b"\n")
        if cut > limit // 2:
            data = data[: cut + 1]  # end on a whole line
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut in the middle of a character is not an encoding problem of the file.
        if truncated and exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            text = data[: exc.start].decode("utf-8", errors="replace")
        else:
            warnings.append(f"{name} is not valid UTF-8; undecodable bytes were replaced")
            text = data.decode("utf-8", errors="replace")
    if truncated:
        shown = len(text.encode("utf-8"))
        text = (
            text.rstrip("\n")
            + f"\n\n[{name} truncated: showing the first {shown} of {max(size, shown)} bytes]"
        )
    return text if text.strip() else None


def _is_safe_relative(name: str) -> bool:
    posix, windows = PurePosixPath(name), PureWindowsPath(name)
    if posix.is_absolute() or windows.is_absolute() or windows.drive:
        return False
    return ".." not in posix.parts and ".." not in windows.parts

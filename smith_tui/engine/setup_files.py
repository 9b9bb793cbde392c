"""Where the user's setup files live, and reading one of them safely.

Skills and sub-agents come from folders of the project (``.smith/``, ``.claude/``,
``.agents/``) and of the user (``$XDG_CONFIG_HOME/smith/``). A project is untrusted: a
file there is read only when it is a regular file (never a FIFO or a device, never
through a final symlink), no bigger than :data:`MAX_SETUP_FILE_BYTES`, and its folder
resolves inside the project (a ``.claude`` that is a symlink to elsewhere is skipped), so
a repository cannot make smith read, and show the model, a file from outside it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from smith_tui.tools.files import NotRegularFileError, open_regular_file, read_capped

#: The largest setup file read (a SKILL.md or an agent file).
MAX_SETUP_FILE_BYTES = 256 * 1024

OriginKind = Literal["user", "project"]


@dataclass(frozen=True)
class Origin:
    """One folder setup files are read from: whose it is and how it is shown."""

    kind: OriginKind
    folder: Path
    label: str
    """How listings name it: ``.claude/skills`` (project), ``~/.config/smith/agents`` (user)."""
    root: Path | None = None
    """For a project folder, the project root its files must stay inside."""


@dataclass(frozen=True)
class SetupProblem:
    """A setup file that could not be used (or only partly), with the line to fix."""

    path: Path
    line: int
    message: str

    def text(self) -> str:
        """``path:line: message``, as notices show it."""
        return f"{self.path}:{self.line}: {self.message}"


class SetupFileError(OSError):
    """A setup file that cannot be read; the message says why."""


def _shown(folder: Path) -> str:
    home = str(Path.home())
    text = str(folder)
    return "~" + text[len(home) :] if home != "/" and text.startswith(home + os.sep) else text


def origins(
    kind: Literal["skills", "agents"], project_root: Path | None, user_dir: Path | None
) -> list[Origin]:
    """The folders of ``kind``, the user's (``user_dir``: ``$XDG_CONFIG_HOME/smith``) first:
    on a name clash the first one wins, so a repository cannot shadow the user's."""
    found = [] if user_dir is None else [Origin("user", user_dir / kind, _shown(user_dir / kind))]
    if project_root is not None:
        project = (".smith", ".claude", ".agents") if kind == "skills" else (".smith", ".claude")
        for base in project:
            folder = project_root / base / kind
            found.append(Origin("project", folder, f"{base}/{kind}", project_root))
    return found


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def folder_is_usable(origin: Origin, folder: Path) -> bool:
    """Whether ``folder`` (the origin's or one inside it) is a directory that may be read:
    for a project folder, one that resolves inside the project."""
    if not folder.is_dir():
        return False
    if origin.root is None:
        return True
    return _inside(Path(os.path.realpath(folder)), Path(os.path.realpath(origin.root)))


def entries(origin: Origin, folder: Path | None = None) -> Iterator[os.DirEntry[str]]:
    """The entries of ``folder`` (default: the origin's), by name; none when it is missing
    or not usable."""
    where = origin.folder if folder is None else folder
    if not folder_is_usable(origin, where):
        return iter(())
    try:
        with os.scandir(where) as listing:
            return iter(sorted(listing, key=lambda entry: entry.name))
    except OSError:
        return iter(())


def read_setup_file(origin: Origin, path: Path) -> str:
    """The text of the setup file ``path`` (in a folder of ``origin``).

    Raises :class:`SetupFileError` for a file that is not a regular file, is too big,
    is not UTF-8, lies (through symlinked folders) outside the project, or cannot be read.
    """
    if not folder_is_usable(origin, path.parent):
        raise SetupFileError(f"{path.parent} leads outside the project; it is not read")
    target = path
    if path.is_symlink():
        if origin.kind == "project":
            raise SetupFileError(
                "it is a symbolic link; a project's setup files are read only as regular files"
            )
        target = Path(os.path.realpath(path))  # the user's own link (a dotfiles folder)
    try:
        fd = open_regular_file(target, shown=path)
    except NotRegularFileError as exc:
        raise SetupFileError(f"it is {exc.kind}, not a regular file") from None
    except OSError as exc:
        raise SetupFileError(f"it cannot be read: {exc.strerror or exc}") from None
    try:
        if os.fstat(fd).st_size > MAX_SETUP_FILE_BYTES:
            raise SetupFileError(f"it is larger than {MAX_SETUP_FILE_BYTES // 1024} KB")
        data = read_capped(fd, MAX_SETUP_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_SETUP_FILE_BYTES:
        raise SetupFileError(f"it is larger than {MAX_SETUP_FILE_BYTES // 1024} KB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SetupFileError(f"it is not UTF-8 text (byte {exc.start})") from None


def signature(paths: list[tuple[Origin, Path]]) -> tuple[tuple[str, int, int], ...]:
    """What changes when one of ``paths`` is added, removed or edited (name, mtime, size)."""
    found = []
    for _, path in paths:
        try:
            info = path.stat()
        except OSError:
            continue
        found.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(found)

"""Where the user's setup files live, and reading one of them safely.

Commands, skills and sub-agents come from folders of the user (``$XDG_CONFIG_HOME/smith/``
and ``~/.claude/``) and of the project (``.smith/``, ``.claude/``, for skills
``.agents/`` too): :func:`origins` is the one table of them. A project is untrusted: a
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

from smith_tui.engine.bounded_text import (
    LinkRefusedError,
    NotUtf8Error,
    OutsideError,
    TooLargeError,
    read_text,
)
from smith_tui.tools.files import NotRegularFileError

#: The largest setup file read (a SKILL.md or an agent file).
MAX_SETUP_FILE_BYTES = 256 * 1024

OriginKind = Literal["user", "project"]

#: Claude Code's tool names (lowercased) and the smith tools they stand for, for a command
#: file's ``allowed-tools`` and an agent file's ``tools``.
CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "bash": ("bash",),
    "read": ("read",),
    "edit": ("edit",),
    "multiedit": ("edit",),
    "write": ("write",),
    "notebookedit": ("edit",),
    "grep": ("code_grep",),
    "glob": ("code_files",),
    "ls": ("code_files",),
    "webfetch": ("web_fetch",),
    "websearch": ("web_search",),
    "todowrite": ("todo",),
    "skill": ("skill",),
    "task": ("dispatch",),
}


@dataclass(frozen=True)
class Origin:
    """One folder setup files are read from: whose it is and how it is shown."""

    kind: OriginKind
    folder: Path
    label: str
    """How listings name it: ``.claude/skills`` (project), ``~/.config/smith/agents`` (user)."""
    root: Path | None = None
    """For a project folder, the project root its files must stay inside (resolved)."""


@dataclass(frozen=True)
class SetupProblem:
    """A setup file that could not be used (or only partly), with the line to fix."""

    path: Path
    line: int
    message: str

    def text(self) -> str:
        """``path:line: message``, as notices show it."""
        return f"{self.path}:{self.line}: {self.message}"


def clash(what: str, name: str, path: Path, first: Path) -> SetupProblem:
    """The problem of a second file defining ``name`` (``what``: skill, agent): the first
    one found keeps it (:func:`origins` puts the user's folders first)."""
    return SetupProblem(path, 1, f"{what} {name!r} is ignored: {first} defines it first")


class SetupFileError(OSError):
    """A setup file that cannot be read; the message says why."""


SetupKind = Literal["commands", "skills", "agents"]

#: The project's folders of each kind, in the order their names win.
PROJECT_BASES: dict[str, tuple[str, ...]] = {
    "commands": (".smith", ".claude"),
    "skills": (".smith", ".claude", ".agents"),
    "agents": (".smith", ".claude"),
}


def _shown(folder: Path, home: Path | None) -> str:
    text = str(folder)
    if home is None or str(home) == "/":
        return text
    return "~" + text[len(str(home)) :] if text.startswith(str(home) + os.sep) else text


def origins(
    kind: SetupKind,
    project_root: Path | None,
    user_dir: Path | None,
    home: Path | None = None,
) -> list[Origin]:
    """The folders of ``kind`` in the order their names win: the user's first
    (``user_dir``: ``$XDG_CONFIG_HOME/smith``, then ``home``'s ``.claude``, as Claude Code
    keeps them), then the project's (``.smith``, ``.claude``, for skills ``.agents``).
    On a name clash the first one wins, so a repository cannot shadow the user's."""
    user = [] if user_dir is None else [user_dir / kind]
    if home is not None:
        user.append(home / ".claude" / kind)
    found = [Origin("user", folder, _shown(folder, home)) for folder in user]
    if project_root is not None:
        root = Path(os.path.realpath(project_root))
        for base in PROJECT_BASES[kind]:
            found.append(Origin("project", root / base / kind, f"{base}/{kind}", root))
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
    return _inside(Path(os.path.realpath(folder)), origin.root)


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
    """The text of the setup file ``path`` (in a folder of ``origin``), read by the one
    bounded reader (:func:`smith_tui.engine.bounded_text.read_text`): whole or not at all.

    Raises :class:`SetupFileError` for a file that is not a regular file, is too big,
    is not UTF-8, lies (through symlinked folders) outside the project, is a project's
    symbolic link (a user's own link, a dotfiles folder, is followed), or cannot be read.
    """
    try:
        return read_text(
            path,
            MAX_SETUP_FILE_BYTES,
            inside=origin.root,
            final_link=origin.kind != "project",
            cut=False,
            replace=False,
        ).text
    except OutsideError:
        raise SetupFileError(f"{path.parent} leads outside the project; it is not read") from None
    except LinkRefusedError:
        raise SetupFileError(
            "it is a symbolic link; a project's setup files are read only as regular files"
        ) from None
    except NotRegularFileError as exc:
        raise SetupFileError(f"it is {exc.kind}, not a regular file") from None
    except TooLargeError:
        raise SetupFileError(f"it is larger than {MAX_SETUP_FILE_BYTES // 1024} KB") from None
    except NotUtf8Error as exc:
        raise SetupFileError(f"it is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise SetupFileError(f"it cannot be read: {exc.strerror or exc}") from None


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

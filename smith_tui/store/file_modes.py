"""Keep the database private: its folder 0700, the file and its side files 0600.

The database holds whole conversations (code, command output, notes), so only its
owner may read it. SQLite gives the ``-wal`` and ``-shm`` files the mode of the
database file, so a 0600 database keeps them 0600 too.

Existing files and folders are narrowed only when this user owns them and they are
open to group or others. A folder that already existed is narrowed only when it is the
default data folder (``~/.local/share/smith``): a ``--db`` path may point into a folder
the user shares on purpose (a project or home directory), which is theirs to decide.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

PRIVATE_FOLDER_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
SIDE_FILE_SUFFIXES = ("-wal", "-shm", "-journal")
"""Files SQLite keeps beside the database."""


def _narrow(path: Path, mode: int) -> None:
    """chmod ``path`` to ``mode`` when we own it and it is open to group or others."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return
    if info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, mode)


def prepare_private_folder(folder: Path, *, narrow_existing: bool) -> None:
    """Create ``folder`` (and missing parents) with the leaf at 0700.

    An existing folder is narrowed to 0700 only with ``narrow_existing`` (see the module
    docstring). Raises ``OSError`` when the folder cannot be created.
    """
    if not folder.is_dir():
        try:
            folder.mkdir(mode=PRIVATE_FOLDER_MODE, parents=True)
        except FileExistsError:
            if not folder.is_dir():
                raise
            return  # another process created it just now, with its own mode
        # mkdir's mode passes through the umask; say exactly what we mean.
        os.chmod(folder, PRIVATE_FOLDER_MODE)
    elif narrow_existing:
        _narrow(folder, PRIVATE_FOLDER_MODE)


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 unless it exists (another process may race us)."""
    if os.path.lexists(path):
        return
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))


def prepare_private_database(path: Path) -> None:
    """Make the database file at ``path`` 0600 before SQLite opens it.

    A missing file is created empty (SQLite takes an empty file as a new database), so
    it never exists with a wider mode; an existing one and its side files are narrowed.
    """
    create_private_file(path)
    _narrow(path, PRIVATE_FILE_MODE)
    for suffix in SIDE_FILE_SUFFIXES:
        _narrow(path.with_name(path.name + suffix), PRIVATE_FILE_MODE)

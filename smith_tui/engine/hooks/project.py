"""A repository's own hooks: ``.smith/settings.json`` (``{"hooks": {...}}``), read safely.

The file is untrusted input from the repository. It is read beneath the project root
without following any symlink (:func:`smith_tui.tools.beneath.locate`, ``O_NOFOLLOW``):
a symlinked ``.smith`` folder or settings file is refused, as are a FIFO or device
(``O_NONBLOCK``, regular files only) and a file over :data:`MAX_SETTINGS_BYTES`. Its
hooks run only once the user trusted exactly these bytes (``trust.py``).
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from smith_tui.config.hooks import HookEntry, HooksTable, claude_entries
from smith_tui.tools.beneath import SymlinkOnTheWayError, locate

SETTINGS_PATH = (".smith", "settings.json")
"""Where a repository's settings live, below its root."""
MAX_SETTINGS_BYTES = 256 * 1024


@functools.cache
def _table() -> TypeAdapter[HooksTable]:
    """The validator of a ``hooks`` table (built once, when a repository has a file)."""
    return TypeAdapter(HooksTable)


@dataclass(frozen=True)
class ProjectHooks:
    """What a repository's settings file asks to run."""

    root: Path
    digest: str
    """SHA-256 of the file's bytes: the trust record names exactly this content."""
    hooks: dict[str, list[HookEntry]] = field(default_factory=dict)
    problem: str = ""
    """Why the file cannot be used (its hooks are then none)."""

    @property
    def path(self) -> Path:
        """The settings file."""
        return self.root.joinpath(*SETTINGS_PATH)

    def commands(self) -> list[tuple[str, str, str]]:
        """``(event, matcher, command)`` of every hook, for showing before trust."""
        return [
            (event, entry.matcher, entry.command)
            for event, entries in self.hooks.items()
            for entry in entries
        ]


def _read_bytes(root: Path) -> bytes | None:
    """The settings file's bytes, ``None`` when there is none; ``OSError`` when refused."""
    try:
        located = locate(root, list(SETTINGS_PATH), follow=False, follow_links=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except SymlinkOnTheWayError as exc:
        raise OSError(errno.ELOOP, "the .smith folder is a symlink") from exc
    with located:
        try:
            fd = os.open(
                located.name,
                os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                dir_fd=located.dir_fd,
            )
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise OSError(errno.ELOOP, "the settings file is a symlink") from None
            raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "the settings file is not a regular file")
        if info.st_size > MAX_SETTINGS_BYTES:
            raise OSError(errno.EFBIG, f"the settings file is over {MAX_SETTINGS_BYTES} bytes")
        chunks = []
        total = 0
        while chunk := os.read(fd, 65536):
            total += len(chunk)
            if total > MAX_SETTINGS_BYTES:
                raise OSError(errno.EFBIG, f"the settings file is over {MAX_SETTINGS_BYTES} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_project_hooks(root: Path | None) -> ProjectHooks | None:
    """The hooks ``root``'s settings file names; ``None`` when it has no file or no hooks.

    Never raises: a file that cannot be used comes back with ``problem`` set and no hooks.
    """
    if root is None:
        return None
    root = Path(os.path.realpath(root))
    try:
        data = _read_bytes(root)
    except OSError as exc:
        return ProjectHooks(root, "", problem=f"{exc.strerror or exc}; its hooks are ignored")
    if data is None:
        return None
    digest = hashlib.sha256(data).hexdigest()
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return ProjectHooks(root, digest, problem=f"not valid JSON ({exc}); its hooks are ignored")
    if not isinstance(parsed, dict):
        return ProjectHooks(root, digest, problem="not a JSON object; its hooks are ignored")
    table = parsed.get("hooks")
    if not table:
        return None
    try:
        hooks = _table().validate_python(claude_entries(table))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        return ProjectHooks(
            root, digest, problem=f"hooks.{where}: {first.get('msg')}; its hooks are ignored"
        )
    kept: dict[str, list[HookEntry]] = {
        event: list(items) for event, items in hooks.items() if items
    }
    if not kept:
        return None
    return ProjectHooks(root, digest, hooks=kept)

"""Resolving a path beneath a root folder from its descriptor, so no race can leave it.

A path checked with ``realpath`` and then opened by name can be redirected between
the two steps: a process that swaps a folder for a symlink makes the open land outside
the project. Here every lookup starts from a descriptor of the root and goes one
component at a time relative to the descriptor of the folder before it, never
following a symlink by name:

* fast path: ``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
  RESOLVE_NO_MAGICLINKS`` opens the folder of the final entry in one call when no
  symlink is on the way (the usual case: callers pass a path ``realpath`` already
  resolved). ``RESOLVE_IN_ROOT`` is not used: it would read an absolute link as
  relative to the root and so open a different file than the link names;
* otherwise (a symlink on the way, or no ``openat2``): the walk opens each folder with
  ``O_PATH | O_DIRECTORY | O_NOFOLLOW`` relative to the previous one. A symlink met on
  the way (or as the final entry, when following) is read with ``readlinkat`` and its
  target walked the same way from where it lives (an absolute target only when it
  names a place under the root); ``..`` steps back along the folders walked and never
  above the root. At most :data:`MAX_HOPS` symlinks are followed.

The result, :class:`Located`, is the descriptor of the final entry's folder, the
folder names walked to it (for checks like "never inside ``.git``") and the final
name, to be opened, created, replaced or removed relative to that descriptor.
What is not covered: a folder already walked can still be moved elsewhere by another
process while the descriptor is held; the entry then moves with it.
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import secrets
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_HOPS = 40
"""Most symlinks one resolution follows (the kernel's own limit for a path lookup)."""

_DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_OPENAT2_NUMBERS = {"x86_64": 437, "aarch64": 437}
_RETRIES = 8
"""Most times one walk looks a component up again (made or changed meanwhile)."""


class OutsideRootError(OSError):
    """A symlink (or ``..``) on the way leads out of the root; nothing was opened there."""

    def __init__(self, rel: str, target: str) -> None:
        super().__init__(errno.EXDEV, f"leads out of the root through {target!r}", rel)
        self.target = target


class SymlinkOnTheWayError(OSError):
    """A folder on the way is a symlink and the caller follows none (``follow_links=False``)."""

    def __init__(self, rel: str) -> None:
        super().__init__(errno.ELOOP, "a folder on the way is a symbolic link", rel)


@functools.cache
def _open_how() -> Any:
    """``struct open_how`` (built on first use: ``ctypes`` costs every start ~5 ms)."""
    import ctypes

    class OpenHow(ctypes.Structure):
        _fields_ = [
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        ]

    return OpenHow


class _Openat2:
    """``openat2(2)`` through ``syscall(3)``; switches itself off where the kernel lacks it.

    libc is looked up when first needed, not on import (most runs never open a file)."""

    def __init__(self) -> None:
        self.number = _OPENAT2_NUMBERS.get(platform.machine())
        self._call: Any = None
        self._loaded = False
        self._enabled: bool | None = None

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.number is not None:
            import ctypes

            try:
                libc = ctypes.CDLL(None, use_errno=True)
                self._call = libc.syscall
                self._call.restype = ctypes.c_long
            except (OSError, AttributeError):
                self.number = None

    @property
    def _syscall(self) -> Any:
        self._load()
        return self._call

    @property
    def enabled(self) -> bool:
        """Whether walks use ``openat2`` (false where the kernel or libc lacks it)."""
        if self._enabled is None:
            self._load()
            self._enabled = self.number is not None
        return self._enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        self._enabled = value

    def open_dir(self, dir_fd: int, rel: str) -> int:
        """Open the folder ``rel`` beneath ``dir_fd`` with no symlink allowed on the way."""
        import ctypes

        syscall = self._syscall
        assert syscall is not None and self.number is not None
        how = _open_how()(
            flags=_DIR_FLAGS,
            mode=0,
            resolve=_RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS,
        )
        while True:
            fd = syscall(
                ctypes.c_long(self.number),
                ctypes.c_int(dir_fd),
                ctypes.c_char_p(os.fsencode(rel)),
                ctypes.byref(how),
                ctypes.c_size_t(ctypes.sizeof(how)),
            )
            if fd >= 0:
                return int(fd)
            code = ctypes.get_errno()
            if code == errno.EINTR:
                continue
            if code in (errno.ENOSYS, errno.EPERM, errno.E2BIG, errno.EINVAL):
                self.enabled = False  # an old kernel or a seccomp filter: walk from now on
            raise OSError(code, os.strerror(code), rel)


OPENAT2 = _Openat2()
"""The process's ``openat2``; tests set ``OPENAT2.enabled = False`` to force the walk."""


@dataclass
class Located:
    """Where a path beneath ``root`` ends: entry ``name`` in the folder ``dir_fd``.

    ``folders`` are the names walked from the root to that folder, symlink targets
    included. ``name`` is ``"."`` for the root itself. The descriptor is an ``O_PATH``
    one: usable as ``dir_fd`` for ``*at`` calls, not for reading. Close it with
    :meth:`close` (or use the object as a context manager).
    """

    root: Path
    dir_fd: int
    folders: tuple[str, ...]
    name: str

    @property
    def rel(self) -> str:
        """The entry's path relative to the root, as walked."""
        return "/".join((*self.folders, self.name)) if self.name != "." or self.folders else "."

    @property
    def path(self) -> Path:
        """The entry's absolute path as walked (for messages)."""
        return self.root.joinpath(*self.folders, self.name)

    def names(self) -> tuple[str, ...]:
        """Every name on the way, the final entry's included."""
        return (*self.folders, self.name)

    def close(self) -> None:
        """Close the folder's descriptor."""
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1

    def __enter__(self) -> Located:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def split(rel: str | os.PathLike[str]) -> list[str]:
    """The components of a root-relative path (empty ones and ``.`` dropped)."""
    return [part for part in os.fspath(rel).split("/") if part not in ("", ".")]


def locate(
    root: Path,
    rel: str | os.PathLike[str] | Sequence[str],
    *,
    follow: bool = True,
    follow_links: bool = True,
    create: bool = False,
) -> Located:
    """Resolve ``rel`` beneath ``root`` (an absolute, resolved folder).

    ``follow``: a symlink as the final entry is followed (beneath the root). With
    ``follow_links=False`` a symlink on the way raises :class:`SymlinkOnTheWayError`
    instead of being followed. ``create`` makes missing folders on the way (mode
    0o777 minus the umask). Raises :class:`OutsideRootError` for a way out,
    ``FileNotFoundError`` / ``NotADirectoryError`` naming the component, ``OSError``
    ``ELOOP`` after :data:`MAX_HOPS` symlinks.
    """
    parts = split(rel) if isinstance(rel, str | os.PathLike) else [p for p in rel if p]
    if any("\x00" in part for part in parts):
        raise OSError(errno.EINVAL, "the path contains a NUL character", "/".join(parts))
    root_fd = os.open(root, _DIR_FLAGS)
    try:
        fast = _fast(root, root_fd, parts, follow=follow)
        if fast is not None:
            return fast
        return _walk(root, root_fd, parts, follow=follow, follow_links=follow_links, create=create)
    finally:
        os.close(root_fd)


def _fast(root: Path, root_fd: int, parts: list[str], *, follow: bool) -> Located | None:
    """One ``openat2`` for the folder, when nothing on the way is a symlink or ``..``."""
    if not OPENAT2.enabled or not parts or ".." in parts:
        return None
    folders, name = parts[:-1], parts[-1]
    try:
        fd = OPENAT2.open_dir(root_fd, "/".join(folders)) if folders else os.dup(root_fd)
    except OSError:
        return None  # a symlink, a missing folder, …: the walk finds out and says which
    if follow and _link_at(fd, name) is not None:
        os.close(fd)
        return None
    return Located(root, fd, tuple(folders), name)


def _link_at(dir_fd: int, name: str) -> str | None:
    """The target of ``name`` in ``dir_fd`` when it is a symlink, else ``None``."""
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:  # EINVAL: not a symlink; ENOENT: absent
        return None


def _walk(
    root: Path,
    root_fd: int,
    parts: list[str],
    *,
    follow: bool,
    follow_links: bool,
    create: bool,
) -> Located:
    todo = list(reversed(parts))  # a stack: the next component is last
    fds: list[int] = []  # fds[i] is the folder names[: i + 1]
    names: list[str] = []
    hops = retries = 0

    def here() -> int:
        return fds[-1] if fds else root_fd

    def shown(name: str) -> str:
        return "/".join((*names, name))

    def jump(name: str, target: str) -> None:
        """Replace the symlink ``name`` with its target's components."""
        nonlocal hops
        hops += 1
        if hops > MAX_HOPS:
            raise OSError(errno.ELOOP, "too many levels of symbolic links", shown(name))
        if target.startswith("/"):
            inside = _under_root(target, root)
            if inside is None:
                raise OutsideRootError(shown(name), target)
            while fds:
                os.close(fds.pop())
            names.clear()
            todo.extend(reversed(inside))
        else:
            todo.extend(reversed(split(target)))

    try:
        while True:
            if not todo:  # the root itself, or a path that ended in ".."
                if not fds:
                    return Located(root, os.dup(root_fd), (), ".")
                # report the last folder as an entry of its parent
                os.close(fds.pop())
                name = names.pop()
                return Located(root, os.dup(here()), tuple(names), name)
            part = todo.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if not names:
                    raise OutsideRootError(shown(".."), "..")
                os.close(fds.pop())
                names.pop()
                continue
            if not todo:  # the final entry
                target = _link_at(here(), part) if follow else None
                if target is None:
                    return Located(root, os.dup(here()), tuple(names), part)
                if not follow_links:
                    raise SymlinkOnTheWayError(shown(part))
                jump(part, target)
                continue
            try:
                fd = os.open(part, _DIR_FLAGS, dir_fd=here())
            except FileNotFoundError:
                if not create or retries >= _RETRIES:
                    raise FileNotFoundError(
                        errno.ENOENT, os.strerror(errno.ENOENT), shown(part)
                    ) from None
                retries += 1
                try:
                    os.mkdir(part, 0o777, dir_fd=here())
                except FileExistsError:
                    pass  # made meanwhile: open whatever is there now
                todo.append(part)
                continue
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise OSError(exc.errno, exc.strerror, shown(part)) from None
                target = _link_at(here(), part)
                if target is None and retries < _RETRIES and _may_be_dir(here(), part):
                    retries += 1  # a symlink a moment ago, not one now: look again
                    todo.append(part)
                    continue
                if target is None:
                    raise NotADirectoryError(
                        errno.ENOTDIR, os.strerror(errno.ENOTDIR), shown(part)
                    ) from None
                if not follow_links:
                    raise SymlinkOnTheWayError(shown(part)) from None
                jump(part, target)
                continue
            fds.append(fd)
            names.append(part)
    finally:
        for fd in fds:
            os.close(fd)


def _may_be_dir(dir_fd: int, name: str) -> bool:
    """``False`` only when ``name`` is there and neither a folder nor a symlink."""
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return True
    return stat.S_ISDIR(mode) or stat.S_ISLNK(mode)


def _under_root(target: str, root: Path) -> list[str] | None:
    """The components of absolute ``target`` after ``root``, or ``None`` when it starts
    elsewhere. Compared name by name, no normalisation: a ``..`` after the root is
    walked like any other component (and cannot climb above the root)."""
    given = target.split("/")[1:]
    prefix = list(root.parts[1:])
    kept = [part for part in given if part not in ("", ".")]
    if kept[: len(prefix)] != prefix:
        return None
    return kept[len(prefix) :]


def temp_name(name: str) -> str:
    """A fresh hidden name next to ``name`` for a file to be renamed over it."""
    return f".{name[:200]}.{secrets.token_hex(4)}.tmp"


def replace_at(
    loc: Located,
    chunks: Iterable[bytes],
    mode: int,
    check: Callable[[], object] | None = None,
) -> None:
    """Write ``chunks`` to a new temp file in ``loc``'s folder, fsync, then rename it
    over ``loc.name`` (same folder descriptor, so the rename cannot land elsewhere).

    ``check`` runs just before the rename and stops it by raising (e.g. when what is at
    ``loc.name`` may not be replaced); a directory there makes the rename fail
    (``EISDIR``) and leaves it alone. The temp file is removed on failure.
    """
    tmp = temp_name(loc.name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o600, dir_fd=loc.dir_fd)
    try:
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
            os.fsync(fd)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        if check is not None:
            check()
        os.rename(tmp, loc.name, src_dir_fd=loc.dir_fd, dst_dir_fd=loc.dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=loc.dir_fd)
        except OSError:
            pass
        raise


def symlink_at(loc: Located, target: str) -> None:
    """Make ``loc.name`` a symlink to ``target`` (created under a temp name, renamed over)."""
    tmp = temp_name(loc.name)
    os.symlink(target, tmp, dir_fd=loc.dir_fd)
    try:
        os.rename(tmp, loc.name, src_dir_fd=loc.dir_fd, dst_dir_fd=loc.dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=loc.dir_fd)
        except OSError:
            pass
        raise

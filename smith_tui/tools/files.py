"""File helpers for the built-in tools.

Path resolution (against the call's working directory, or confined to the
project root for the code and git tools), the path policy of ``read`` /
``edit`` / ``write`` (project root plus ``services.tool.extra_roots``),
opening regular files only (never a FIFO, device or socket) and reading them in
bounded chunks, hashing, line splitting that keeps line endings, and atomic
writes that keep the file mode and never replace a special file.

The policy is checked on the ``realpath`` of the path (for clear messages); the
file itself is then opened, created or replaced through :mod:`.beneath`, from a
descriptor of the root it was found in, so a folder swapped for a symlink in
between cannot redirect the call outside that root or into ``.git``.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from smith_tui.tools import beneath
from smith_tui.tools.args import bad_arguments
from smith_tui.tools.spec import ToolContext, ToolError

BINARY_SNIFF_BYTES = 8192
_SHA256_RE = re.compile(r"^[0-9a-fA-F]{64}$")

DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
"""Most bytes ``read`` loads from one file (and the largest file ``edit`` accepts)."""

READ_CHUNK_BYTES = 1024 * 1024
"""Bytes read per system call; cancellation is checked between chunks."""

# Opening never waits (a FIFO without writer, a terminal) and never makes a
# terminal ours; the path is already resolved, so a final symlink swapped in
# after the check makes the open fail instead of being followed.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def write_file(target: ToolPath, data: bytes, ctx: ToolContext, *, tool: str) -> None:
    """Write ``data`` through the front end's file backend when it takes it, else
    :func:`atomic_write` (same errors)."""
    backend = ctx.services.files
    if backend is not None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and backend.write_text(target.real, text):
            return
    atomic_write(target, data, tool=tool)


# ---------------------------------------------------------------------------
# paths and file content


def resolve_path(raw: str, ctx: ToolContext) -> Path:
    """Resolve a model-supplied path: ``~`` expanded, relative paths against ``ctx.cwd``.

    The result is absolute and normalised (``..`` collapsed) but symlinks are
    kept, so messages show the path the model asked for.
    """
    if "\x00" in raw:
        raise ToolError("`path` contains a NUL character; pass a plain file path.", code="bad_path")
    expanded = os.path.expanduser(raw.strip())
    path = Path(expanded)
    if not path.is_absolute():
        path = Path(ctx.cwd) / path
    return Path(os.path.normpath(path))


def describe_path(raw: str, resolved: Path, ctx: ToolContext) -> str:
    """Say how a path was resolved, for error messages about relative paths."""
    if os.path.isabs(os.path.expanduser(raw.strip())):
        return str(resolved)
    return f"{resolved} ('{raw}' relative to the working directory {ctx.cwd})"


def project_root(ctx: ToolContext) -> Path:
    """The folder every code tool works in: the project root, else the working directory."""
    root = (ctx.project_root or ctx.cwd).resolve()
    if not root.is_dir():
        raise ToolError(f"project root {root} is not a directory", code="no_project_root")
    return root


def resolve_in_project(
    tool: str, root: Path, raw: str | None, *, key: str = "path", want: str = "any"
) -> tuple[Path, str]:
    """Resolve ``raw`` against ``root``; return the absolute path and its root-relative form.

    ``want`` is ``"file"``, ``"dir"`` or ``"any"``. Paths that leave the root
    (``..``, absolute paths elsewhere, symlinks pointing out) and paths inside
    ``.git`` are refused.
    """
    if raw is None:
        return root, "."
    candidate = Path(raw)
    full = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if full != root and root not in full.parents:
        raise bad_arguments(tool, f"`{key}` {raw!r} is outside the project root {root}")
    rel = full.relative_to(root).as_posix() if full != root else "."
    if ".git" in Path(rel).parts:
        raise bad_arguments(
            tool, f"`{key}` {raw!r} is inside .git, which the code tools never read"
        )
    if not full.exists():
        raise bad_arguments(tool, f"`{key}` {raw!r} does not exist under the project root {root}")
    if want == "file" and not full.is_file():
        raise bad_arguments(tool, f"`{key}` {raw!r} is not a regular file")
    if want == "dir" and not full.is_dir():
        raise bad_arguments(tool, f"`{key}` {raw!r} is not a directory")
    return full, rel


# ---------------------------------------------------------------------------
# regular files only


class NotRegularFileError(OSError):
    """The path exists but is not a regular file (FIFO, device, socket, directory…)."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(errno.EINVAL, f"it is {kind}, not a regular file", os.fspath(path))
        self.kind = kind


_FILE_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link that could not be resolved"),
)
_SYMLINK_KIND = _FILE_KINDS[-1][1]


def file_kind(mode: int) -> str:
    """Describe the file type in ``mode`` for messages ("a FIFO (named pipe)", …)."""
    return next((kind for is_kind, kind in _FILE_KINDS if is_kind(mode)), "a special file")


def open_regular_file(
    path: str | os.PathLike[str],
    *,
    dir_fd: int | None = None,
    shown: str | os.PathLike[str] | None = None,
) -> int:
    """Open an already resolved ``path`` (relative to ``dir_fd`` when given) read-only
    and return the descriptor.

    The type is checked with ``lstat`` before opening (opening a device or FIFO
    can block or have side effects) and again with ``fstat`` on the open
    descriptor, so a file swapped in between is caught too. Anything but a
    regular file raises :class:`NotRegularFileError` (naming ``shown``, default
    ``path``); a final symlink is never followed (``ELOOP``); other failures raise
    the usual :class:`OSError` subclasses.
    """
    named = path if shown is None else shown
    before = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    if not stat.S_ISREG(before.st_mode):
        raise NotRegularFileError(named, file_kind(before.st_mode))
    fd = os.open(path, _OPEN_FLAGS, dir_fd=dir_fd)
    try:
        after = os.fstat(fd)
        if not stat.S_ISREG(after.st_mode):
            raise NotRegularFileError(named, file_kind(after.st_mode))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_capped(fd: int, limit: int, check: Callable[[], None] | None = None) -> bytes:
    """Read at most ``limit`` bytes from ``fd`` in bounded chunks.

    ``check`` runs before every chunk and stops the read by raising (e.g.
    :meth:`CancelToken.check`).
    """
    data = bytearray()
    while len(data) < limit:
        if check is not None:
            check()
        block = os.read(fd, min(READ_CHUNK_BYTES, limit - len(data)))
        if not block:
            break
        data += block
    return bytes(data)


# ---------------------------------------------------------------------------
# the path policy of read, edit and write


@dataclass(frozen=True)
class ToolPath:
    """A model-supplied path that passed the policy of ``read`` / ``edit`` / ``write``.

    ``shown`` keeps symlinks (messages show what the model asked for); every
    file operation uses ``real``, the fully resolved path inside ``root``.
    """

    shown: Path
    real: Path
    root: Path
    where: str


def extra_roots(ctx: ToolContext) -> list[Path]:
    """The folders of ``services.tool.extra_roots`` (absolute, checked when the config was
    loaded), ``~`` expanded and symlinks resolved."""
    folders = ctx.config.services.tool.extra_roots
    return [Path(os.path.realpath(os.path.expanduser(folder))) for folder in folders]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _touches_git_dir(paths: Sequence[Path], roots: Sequence[Path]) -> bool:
    """``True`` when any of ``paths`` has a ``.git`` component below one of ``roots``."""
    for path in paths:
        for root in roots:
            if _inside(path, root) and any(
                part.lower() == ".git" for part in path.relative_to(root).parts
            ):
                return True
    return False


def resolve_for_tool(raw: str, ctx: ToolContext, *, tool: str, writing: bool = False) -> ToolPath:
    """Resolve a path for ``read`` / ``edit`` / ``write`` and apply their path policy.

    The path (symlinks included) must resolve inside the project root or one of
    ``services.tool.extra_roots``; with ``writing`` it must also not lie in a
    ``.git`` folder (checked on the path as given and as resolved).
    """
    shown = resolve_path(raw, ctx)
    where = describe_path(raw, shown, ctx)
    real = _realpath(shown, where)
    project = project_root(ctx)
    roots = [project, *(root for root in extra_roots(ctx) if root != project)]
    root = next((root for root in roots if _inside(real, root)), None)
    if root is None:
        via = f" (it resolves to {real})" if real != shown else ""
        allowed = f"the project root {project}"
        if len(roots) > 1:
            allowed += " and the extra roots " + ", ".join(str(extra) for extra in roots[1:])
        folder = real.parent if real.name else real
        raise ToolError(
            f"{where}{via} is outside {allowed}; {tool} only works on files there. To allow "
            f"a folder outside the project, add its absolute path to services.tool.extra_roots "
            f'in the config file, e.g. {{"services": {{"tool": {{"extra_roots": ["{folder}"]}}}}}}.',
            code="outside_project",
        )
    given_roots = [*roots, Path(os.path.abspath(ctx.project_root or ctx.cwd))]
    if writing and _touches_git_dir([shown, real], given_roots):
        raise _git_internal(where, tool)
    return ToolPath(shown, real, root, where)


_REALPATH_RETRIES = 20


def _realpath(path: Path, where: str) -> Path:
    """``realpath`` of ``path``; a path that keeps changing while it is resolved (a symlink
    one moment, a folder the next: ``realpath`` then fails) is a ToolError."""
    for _ in range(_REALPATH_RETRIES):
        try:
            return Path(os.path.realpath(path))
        except OSError as exc:
            error = exc
    raise ToolError(
        f"cannot resolve {where}: {error.strerror or error} (it kept changing while it was "
        f"resolved); try again once nothing else is renaming files there.",
        code="os_error",
    )


def _git_internal(where: str, tool: str) -> ToolError:
    return ToolError(
        f"{where} is inside a .git folder; {tool} never changes git's own files (its "
        f"config and hooks can run commands). Use the git tool or bash for git operations.",
        code="git_internal",
    )


# ---------------------------------------------------------------------------
# opening beneath the root

_OPEN_RETRIES = 8
"""How often an entry that turned into a symlink between lookup and open is looked up again."""


def locate(target: ToolPath, *, tool: str, create: bool = False) -> beneath.Located:
    """Find ``target`` beneath its root (see :func:`beneath.locate`); the caller closes it.

    A way out of the root found on the way is a ``outside_project`` :class:`ToolError`;
    other failures are the usual :class:`OSError` subclasses.
    """
    rel = target.real.relative_to(target.root).parts if target.real != target.root else ()
    try:
        return beneath.locate(target.root, rel, create=create)
    except beneath.OutsideRootError as exc:
        raise ToolError(
            f"{target.where} leads out of {target.root} through a symbolic link that changed "
            f"while it was looked up (now {exc.filename} -> {exc.target}); {tool} only works "
            f"on files there, so nothing was read or written.",
            code="outside_project",
        ) from None


def open_beneath(target: ToolPath, *, tool: str) -> int:
    """Open ``target`` read-only beneath its root; a regular file only.

    Like :func:`open_regular_file` (``O_NONBLOCK | O_NOCTTY``, the type checked
    before and after opening) but relative to the descriptor of its folder.
    """
    for _ in range(_OPEN_RETRIES):
        with locate(target, tool=tool) as loc:
            try:
                return open_regular_file(loc.name, dir_fd=loc.dir_fd, shown=loc.path)
            except NotRegularFileError as exc:
                if exc.kind != _SYMLINK_KIND:
                    raise
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
            # the entry turned into a symlink after it was looked up: look it up again
    raise OSError(
        errno.ELOOP, "it kept changing into a symbolic link while it was opened", str(target.real)
    )


def max_file_bytes(ctx: ToolContext, tool: str) -> int:
    """The largest number of bytes ``tool`` loads from one file.

    ``services.tool.<tool>.max_file_bytes``, default :data:`DEFAULT_MAX_FILE_BYTES`.
    """
    return ctx.config.services.tool.table(tool).max_file_bytes or DEFAULT_MAX_FILE_BYTES


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` as lowercase hex."""
    return hashlib.sha256(data).hexdigest()


def is_sha256_hex(value: str) -> bool:
    """``True`` when ``value`` looks like a SHA-256 hex digest."""
    return bool(_SHA256_RE.match(value))


def looks_binary(data: bytes) -> bool:
    """A file is treated as binary when its first 8 KB hold a NUL byte."""
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


@dataclass
class TextLines:
    """A text file split into lines the way ``read`` and ``edit`` number them.

    ``lines`` keep any ``\\r`` of a CRLF ending (so untouched lines are written
    back byte for byte); lines are joined with ``\\n``. ``final_newline`` says
    whether the text ended with a line ending.
    """

    lines: list[str]
    final_newline: bool

    @classmethod
    def parse(cls, text: str) -> TextLines:
        """Split ``text`` on ``\\n``; a trailing line ending adds no extra line."""
        if text == "":
            return cls([], False)
        parts = text.split("\n")
        final_newline = parts[-1] == ""
        if final_newline:
            parts.pop()
        return cls(parts, final_newline)

    def render(self) -> str:
        """Join the lines back into text."""
        if not self.lines:
            return ""
        return "\n".join(self.lines) + ("\n" if self.final_newline else "")

    @property
    def uses_crlf(self) -> bool:
        """``True`` when most line endings in the text are CRLF."""
        ended = self.lines if self.final_newline else self.lines[:-1]
        crlf = sum(1 for line in ended if line.endswith("\r"))
        return crlf > 0 and crlf * 2 >= len(ended)


def display_line(line: str) -> str:
    """A line as shown to the model: without the CR of a CRLF ending."""
    return line[:-1] if line.endswith("\r") else line


def number_lines(lines: list[str], first_number: int, *, max_line_chars: int = 2000) -> str:
    """Format lines as ``<number>\\t<text>`` (right-aligned numbers), clipping long lines."""
    if not lines:
        return ""
    width = max(6, len(str(first_number + len(lines) - 1)))
    out = []
    for offset, line in enumerate(lines):
        shown = display_line(line)
        if len(shown) > max_line_chars:
            shown = shown[:max_line_chars] + f" […{len(shown) - max_line_chars} more characters]"
        out.append(f"{first_number + offset:>{width}}\t{shown}")
    return "\n".join(out)


@dataclass
class FileText:
    """What :func:`read_text_file` read.

    ``data`` is the whole file unless ``cut``: then it is the first part of
    it, ending on a whole line where one fits, and ``size`` tells how big the
    file is.
    """

    data: bytes
    text: str
    size: int
    cut: bool


def read_text_file(
    target: ToolPath, ctx: ToolContext, *, tool: str, limit: int, allow_cut: bool = False
) -> FileText:
    """Read a UTF-8 text file for ``read`` / ``edit``; every failure is a clear ToolError.

    Only a regular file is opened (never a FIFO, device or socket). At most
    ``limit`` bytes are loaded, in chunks, checking for cancellation between
    them: a bigger file is cut when ``allow_cut`` and refused otherwise. Bytes
    that are not valid UTF-8 are replaced with U+FFFD in ``text``.
    """
    where = target.where
    backend = ctx.services.files
    text = backend.read_text(target.real) if backend is not None else None
    if text is not None:  # the editor's buffer, unsaved changes included
        data = text.encode("utf-8")
        size = len(data)
        if size > limit and not allow_cut:
            raise _too_large(where, size, limit, tool)
        data = data[: limit + 1]
    else:
        data, size = read_file_bytes(target, ctx, tool=tool, limit=limit, allow_cut=allow_cut)
    size = max(size, len(data))  # a file can grow after fstat
    cut = len(data) > limit
    if cut:
        if not allow_cut:
            raise _too_large(where, size, limit, tool)
        data = data[:limit]
        end = data.rfind(b"\n")
        if end >= 0:
            data = data[: end + 1]  # end on a whole line
    if looks_binary(data):
        raise ToolError(
            f"{where} looks like a binary file ({size:,} bytes, NUL byte in the first "
            f"8 KB); {tool} only handles text. Inspect it with bash (e.g. `file`, `xxd | head`).",
            code="binary_file",
        )
    return FileText(data, data.decode("utf-8", errors="replace"), size, cut)


def read_file_bytes(
    target: ToolPath, ctx: ToolContext, *, tool: str, limit: int, allow_cut: bool = False
) -> tuple[bytes, int]:
    """The bytes of the regular file ``target`` (at most ``limit + 1`` of them) and its size,
    read as :func:`read_text_file` reads: beneath its root, never a FIFO, device or socket,
    in chunks with cancellation checks; every failure is a clear ToolError. A file over
    ``limit`` is refused unless ``allow_cut`` (the caller cuts what came back)."""
    where = target.where
    via = f" (through a symlink to {target.real})" if target.real != target.shown else ""
    try:
        fd = open_beneath(target, tool=tool)
        try:
            size = os.fstat(fd).st_size
            if size > limit and not allow_cut:
                raise _too_large(where, size, limit, tool)
            data = read_capped(fd, limit + 1, ctx.cancel.check)
        finally:
            os.close(fd)
    except NotRegularFileError as exc:
        if exc.kind == "a directory":
            raise ToolError(
                f"{where} is a directory, not a file. List it with code_files or bash `ls`, "
                f"then {tool} a file inside it.",
                code="is_directory",
            ) from None
        raise not_regular_error(f"{where}{via}", exc.kind, tool) from None
    except FileNotFoundError:
        kind = _kind_behind_links(target)
        if kind is not None:
            raise not_regular_error(where, kind, tool) from None
        parent = target.shown.parent
        hint = (
            "the directory exists, so check the file name"
            if parent.is_dir()
            else f"its directory {parent} does not exist either"
        )
        raise ToolError(
            f"file not found: {where}; {hint}. Use code_files to find the right path.",
            code="not_found",
        ) from None
    except PermissionError:
        raise ToolError(f"permission denied reading {where}.", code="permission_denied") from None
    except OSError as exc:
        raise ToolError(f"cannot read {where}: {exc.strerror or exc}.", code="os_error") from None
    return data, size


def not_regular_error(where: str, kind: str, tool: str, *, writing: bool = False) -> ToolError:
    """The error for a FIFO, device, socket… met where ``tool`` needs a regular file."""
    if writing:
        why = f"{tool} never replaces a special file. Nothing was written."
    else:
        why = (
            f"{tool} only opens regular files (reading a FIFO, device or socket can block or "
            f"never end). Nothing was read."
        )
    return ToolError(f"{where} is {kind}, not a regular file; {why}", code="not_regular_file")


def _kind_behind_links(target: ToolPath) -> str | None:
    """What ``target.shown`` leads to when its resolved path does not exist, if special.

    ``/proc/<pid>/fd`` links (``/dev/stdin`` and friends) to pipes and sockets
    resolve to names like ``pipe:[123]`` that cannot be looked up; ``stat``
    through the link still tells what is behind it, without opening it.
    """
    try:
        mode = os.stat(target.shown).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else file_kind(mode)


def _too_large(where: str, size: int, limit: int, tool: str) -> ToolError:
    return ToolError(
        f"{where} is {size:,} bytes, over the {tool} limit of {limit:,} bytes "
        f"(services.tool.{tool}.max_file_bytes); {tool} works on the whole file in memory, so "
        f"nothing was changed. Use bash (e.g. `sed -i`, or a small script) for a file this big.",
        code="file_too_large",
    )


def refuse_special_target(target: ToolPath, tool: str) -> bool:
    """Refuse to replace anything but a regular file at ``target``; return whether it exists.

    A directory gets ``is_directory``, a FIFO, device or socket ``not_regular_file``.
    Looked up beneath the root (a missing folder on the way means "does not exist").
    """
    try:
        with locate(target, tool=tool) as loc:
            mode = os.stat(loc.name, dir_fd=loc.dir_fd, follow_symlinks=False).st_mode
    except (FileNotFoundError, NotADirectoryError):
        kind = _kind_behind_links(target)
        if kind is None:
            return False
        raise not_regular_error(target.where, kind, tool, writing=True) from None
    except OSError as exc:
        raise ToolError(
            f"cannot check {target.where}: {exc.strerror or exc}.", code="os_error"
        ) from None
    if stat.S_ISDIR(mode):
        raise ToolError(
            f"{target.where} is a directory; give the path of a file to {tool}.",
            code="is_directory",
        )
    if not stat.S_ISREG(mode):
        raise not_regular_error(target.where, file_kind(mode), tool, writing=True)
    return True


def current_umask() -> int:
    """The process umask, read without changing it where the OS allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(target: ToolPath, data: bytes, *, tool: str, mode: int | None = None) -> None:
    """Write ``data`` to ``target`` atomically: a temp file created in the same folder
    (by descriptor, beneath the root), fsynced, then renamed over the name.

    Missing folders are made on the way. A symlink inside the root is followed so the
    link keeps pointing at the updated target. ``mode`` defaults to the existing file's
    permissions, or 0o666 minus the umask for a new file. Anything but a regular file
    at the target (FIFO, device, socket, directory) raises :class:`NotRegularFileError`
    instead of being replaced; a ``.git`` folder among the names walked (symlink targets
    included) is a ``git_internal`` :class:`ToolError`, a way out of the root an
    ``outside_project`` one.
    """
    with locate(target, tool=tool, create=True) as loc:
        if any(name.lower() == ".git" for name in loc.names()):
            raise _git_internal(target.where, tool)
        info = regular_or_absent(loc)
        if mode is None:
            mode = info.st_mode & 0o7777 if info is not None else 0o666 & ~current_umask()
        beneath.replace_at(loc, [data], mode, lambda: regular_or_absent(loc))


def regular_or_absent(loc: beneath.Located) -> os.stat_result | None:
    """The ``lstat`` of ``loc``'s entry, ``None`` when absent; raises
    :class:`NotRegularFileError` for anything but a regular file (a symlink included)."""
    try:
        info = os.stat(loc.name, dir_fd=loc.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFileError(loc.path, file_kind(info.st_mode))
    return info

"""File helpers for the built-in tools.

Path resolution (against the call's working directory, or confined to the
project root for the code and git tools), hashing, line splitting that keeps
line endings, and atomic writes that keep the file mode.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from smith_tui.tools.args import bad_arguments
from smith_tui.tools.spec import ToolContext, ToolError

BINARY_SNIFF_BYTES = 8192
_SHA256_RE = re.compile(r"^[0-9a-fA-F]{64}$")


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
        raise bad_arguments(tool, f"'{key}' {raw!r} is outside the project root {root}")
    rel = full.relative_to(root).as_posix() if full != root else "."
    if ".git" in Path(rel).parts:
        raise bad_arguments(
            tool, f"'{key}' {raw!r} is inside .git, which the code tools never read"
        )
    if not full.exists():
        raise bad_arguments(tool, f"'{key}' {raw!r} does not exist under the project root {root}")
    if want == "file" and not full.is_file():
        raise bad_arguments(tool, f"'{key}' {raw!r} is not a regular file")
    if want == "dir" and not full.is_dir():
        raise bad_arguments(tool, f"'{key}' {raw!r} is not a directory")
    return full, rel


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


def read_text_file(path: Path, raw: str, ctx: ToolContext, *, tool: str) -> tuple[bytes, str]:
    """Read a UTF-8 text file for ``read`` / ``edit``; every failure is a clear ToolError.

    Returns the raw bytes (for hashing) and the decoded text; bytes that are
    not valid UTF-8 are replaced with U+FFFD.
    """
    where = describe_path(raw, path, ctx)
    if path.is_dir():
        raise ToolError(
            f"{where} is a directory, not a file. List it with code_files or bash `ls`, "
            f"then {tool} a file inside it.",
            code="is_directory",
        )
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        parent = path.parent
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
    if looks_binary(data):
        raise ToolError(
            f"{where} looks like a binary file ({len(data):,} bytes, NUL byte in the first "
            f"8 KB); {tool} only handles text. Inspect it with bash (e.g. `file`, `xxd | head`).",
            code="binary_file",
        )
    return data, data.decode("utf-8", errors="replace")


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


def atomic_write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same dir, then rename).

    A symlink is followed so the link keeps pointing at the updated target.
    ``mode`` defaults to the existing file's permissions, or 0o666 minus the
    umask for a new file (a bare temp file would otherwise be 0o600).
    """
    target = Path(os.path.realpath(path))
    if mode is None:
        try:
            mode = target.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~current_umask()
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise

"""Reading a user's or a project's text file, bounded and safely: one reader for the index
file, the instruction files (``AGENTS.md``) and the setup files (commands, skills, agents).

:func:`read_text` holds the rules (docs/DESIGN.md §5.2); its callers only choose the cap
and what a file over it or not in UTF-8 becomes, and word the message:

* the path is resolved (symlinks included) and, with ``inside`` (a resolved folder: the
  caller resolves it once for many files), must stay inside that folder: a project
  cannot make smith read, and show the model, a file from elsewhere;
* with ``final_link=False`` a path that is itself a symbolic link is refused;
* only a regular file is opened (never a FIFO, device or socket: opening one can block or
  have side effects), checked before and after the open, without blocking;
* at most ``limit + 1`` bytes are read, whatever the file's size.

:func:`read_bounded` is the system prompt's wording of it (a warning line, never an
error); ``engine.setup_files.read_setup_file`` is the setup files'.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from smith_tui.tools.files import NotRegularFileError, open_regular_file, read_capped


@dataclass(frozen=True)
class BoundedText:
    """A text file read under the project's file rules: its text, its size on disk, the
    bytes of it that ``text`` holds, whether it was cut to the limit, and whether bytes
    that are not UTF-8 were replaced."""

    text: str
    size: int
    shown: int
    cut: bool
    replaced: bool = False


class OutsideError(OSError):
    """The path resolves outside the folder it must stay in."""

    def __init__(self, real: Path, root: Path) -> None:
        super().__init__(f"{real} is outside {root}")
        self.real = real
        self.root = root


class LinkRefusedError(OSError):
    """The path is a symbolic link and the caller reads none."""


class TooLargeError(OSError):
    """The file is over the cap and the caller does not cut."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than {limit} bytes")
        self.limit = limit


class NotUtf8Error(ValueError):
    """The file is not UTF-8 and the caller does not replace; ``start`` is the byte."""

    def __init__(self, start: int) -> None:
        super().__init__(f"not UTF-8 text (byte {start})")
        self.start = start


def read_text(
    path: Path,
    limit: int,
    *,
    inside: Path | None = None,
    final_link: bool = True,
    cut: bool = True,
    replace: bool = True,
) -> BoundedText:
    """The text of ``path`` under the rules of the module doc.

    A file over ``limit`` bytes is cut (on a whole line when one is near) with ``cut``,
    else :class:`TooLargeError`; bytes that are not UTF-8 are replaced with ``replace``
    (``replaced`` says so), else :class:`NotUtf8Error`. Raises :class:`OutsideError`,
    :class:`LinkRefusedError`, :class:`~smith_tui.tools.files.NotRegularFileError`, and
    the usual :class:`OSError` subclasses (``FileNotFoundError`` for a missing file).
    """
    if not final_link and path.is_symlink():
        raise LinkRefusedError(f"{path} is a symbolic link")
    real = Path(os.path.realpath(path))
    if inside is not None and real != inside and inside not in real.parents:
        raise OutsideError(real, inside)
    fd = open_regular_file(real, shown=path)
    try:
        size = os.fstat(fd).st_size
        if size > limit and not cut:
            raise TooLargeError(limit)
        data = read_capped(fd, limit + 1)
    finally:
        os.close(fd)
    truncated = len(data) > limit
    if truncated:
        if not cut:
            raise TooLargeError(limit)  # it grew after the fstat
        data = data[:limit]
        end = data.rfind(b"\n")
        if end > limit // 2:
            data = data[: end + 1]  # end on a whole line
    replaced = False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut in the middle of a character is not an encoding problem of the file.
        if truncated and exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            text = data[: exc.start].decode("utf-8", errors="replace")
        elif not replace:
            raise NotUtf8Error(exc.start) from None
        else:
            replaced = True
            text = data.decode("utf-8", errors="replace")
    shown = len(text.encode("utf-8"))
    return BoundedText(text, max(size, shown), shown, truncated, replaced)


def read_bounded(
    path: Path,
    limit: int,
    warnings: list[str],
    *,
    label: str,
    inside: Path | None = None,
    kind: str = "",
) -> BoundedText | None:
    """:func:`read_text` for the system prompt: ``None`` instead of an error.

    A missing file gives ``None`` silently; anything else that keeps it out gives ``None``
    with a line in ``warnings`` (``kind`` names what the file is, e.g. ``index_file``;
    ``label`` names it in the UTF-8 warning). A file over ``limit`` is cut; bytes that are
    not UTF-8 are replaced (with a warning).
    """
    shown_path = f"{kind} {path}" if kind else str(path)
    try:
        root = None if inside is None else Path(os.path.realpath(inside))
        read = read_text(path, limit, inside=root)
    except OutsideError as exc:
        what = f"{kind} {label!r}" if kind else str(path)
        warnings.append(
            f"{what} resolves to {exc.real}, outside the project {exc.root}; it was ignored"
        )
        return None
    except NotRegularFileError as exc:
        warnings.append(f"{shown_path} is {exc.kind}, not a regular file; it was ignored")
        return None
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        warnings.append(f"could not read {path}: {exc.strerror or exc}")
        return None
    if read.replaced:
        warnings.append(f"{label} is not valid UTF-8; undecodable bytes were replaced")
    return read

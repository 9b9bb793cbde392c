"""Reading a user's or a project's text file for the system prompt, bounded and safely.

One reader for the index file and the instruction files (``AGENTS.md``): see
:func:`read_bounded`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from smith_tui.tools.files import NotRegularFileError, open_regular_file, read_capped


@dataclass(frozen=True)
class BoundedText:
    """A text file read under the project's file rules: its text, its size on disk, the
    bytes of it that ``text`` holds, and whether it was cut to the limit."""

    text: str
    size: int
    shown: int
    cut: bool


def read_bounded(
    path: Path,
    limit: int,
    warnings: list[str],
    *,
    label: str,
    inside: Path | None = None,
    kind: str = "",
) -> BoundedText | None:
    """Read the text of ``path`` under the rules of the index file (docs/DESIGN.md §5.2).

    The path is resolved (symlinks included) and, with ``inside``, must stay inside that
    folder; only a regular file is opened (a FIFO or device never is), without blocking, and
    at most ``limit + 1`` bytes are read. A missing file gives ``None`` silently; anything
    else that keeps it out gives ``None`` with a line in ``warnings`` (``kind`` names what
    the file is, e.g. ``index_file``; ``label`` names it in the UTF-8 warning). A file over
    ``limit`` is cut on a whole line when one is near; bytes that are not UTF-8 are
    replaced (with a warning).
    """
    shown_path = f"{kind} {path}" if kind else str(path)
    real = Path(os.path.realpath(path))
    if inside is not None:
        root = Path(os.path.realpath(inside))
        if real != root and root not in real.parents:
            what = f"{kind} {label!r}" if kind else str(path)
            warnings.append(
                f"{what} resolves to {real}, outside the project {root}; it was ignored"
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
        warnings.append(f"{shown_path} is {exc.kind}, not a regular file; it was ignored")
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
            warnings.append(f"{label} is not valid UTF-8; undecodable bytes were replaced")
            text = data.decode("utf-8", errors="replace")
    shown = len(text.encode("utf-8"))
    return BoundedText(text, max(size, shown), shown, truncated)

"""Unified diffs of what ``edit`` and ``write`` changed, for the person reading along.

They go into the result's metadata (never into the content the model reads): the app
shows them as red/green lines and counts ``+N −M`` on the collapsed tool line.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smith_tui.tools.files import ToolPath

#: Lines of unchanged text around each change.
CONTEXT_LINES = 3
#: Diff lines kept in the metadata; a longer diff is cut with a note saying how much.
MAX_DIFF_LINES = 2000


@dataclass(frozen=True)
class FileDiff:
    """A unified diff and how many lines it adds and removes."""

    text: str
    added: int
    removed: int

    def metadata(self) -> dict[str, Any]:
        """The metadata keys the transcript reads (``diff``, ``diff_added``, ``diff_removed``)."""
        return {"diff": self.text, "diff_added": self.added, "diff_removed": self.removed}


def display_path(target: ToolPath) -> str:
    """The path as the user knows it: relative to its root (the project), else absolute."""
    for path in (target.shown, target.real):
        try:
            return Path(os.path.relpath(path, target.root)).as_posix()
        except ValueError:  # another drive (Windows)
            continue
    return str(target.shown)


def _cut(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_DIFF_LINES:
        return lines
    rest = len(lines) - MAX_DIFF_LINES
    return [*lines[:MAX_DIFF_LINES], f"… {rest} more diff lines not shown"]


def _clean(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def range_diff(path: str, old: list[str], start: int, removed: int, new: list[str]) -> FileDiff:
    """The diff of one contiguous change: ``removed`` lines at index ``start`` of ``old``
    (lines without newlines) are replaced by the lines ``new``.

    Built directly from the range, so an edit in a large file costs no matching.
    """
    lo = max(0, start - CONTEXT_LINES)
    before = [_clean(line) for line in old[lo:start]]
    after = [_clean(line) for line in old[start + removed : start + removed + CONTEXT_LINES]]
    gone = [_clean(line) for line in old[start : start + removed]]
    added = [_clean(line) for line in new]
    old_count = len(before) + len(gone) + len(after)
    new_count = len(before) + len(added) + len(after)
    old_first = lo + 1 if old_count else lo
    new_first = lo + 1 if new_count else lo
    lines = [
        f"--- a/{path}",
        f"+++ b/{path}",
        f"@@ -{old_first},{old_count} +{new_first},{new_count} @@",
        *(" " + line for line in before),
        *("-" + line for line in gone),
        *("+" + line for line in added),
        *(" " + line for line in after),
    ]
    return FileDiff("\n".join(_cut(lines)), len(added), len(gone))


def text_diff(path: str, old: str | None, new: str) -> FileDiff:
    """The diff from ``old`` (``None``: the file did not exist) to ``new``."""
    old_lines = [] if old is None else [_clean(line) for line in old.splitlines()]
    new_lines = [_clean(line) for line in new.splitlines()]
    source = "/dev/null" if old is None else f"a/{path}"
    lines = list(
        difflib.unified_diff(
            old_lines, new_lines, source, f"b/{path}", n=CONTEXT_LINES, lineterm=""
        )
    )
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return FileDiff("\n".join(_cut(lines)), added, removed)

"""A file's change cut into hunks, and the file with some of them taken back.

Per-hunk review (the turn diff screen) shows each hunk of a turn's change to a file and lets
the user revert some: :func:`revert` rebuilds the file from the turn's result with the
chosen hunks replaced by their old lines, so every other byte of the file, the untouched
hunks and the line endings included, stays exactly as the turn left it.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence
from dataclasses import dataclass

CONTEXT_LINES = 3
"""Unchanged lines shown around a hunk (display only: they are not part of it)."""


@dataclass(frozen=True)
class Hunk:
    """One run of changed lines: ``old[old_start:old_end]`` became ``new[new_start:new_end]``."""

    index: int
    old_start: int
    old_end: int
    new_start: int
    new_end: int

    def header(self) -> str:
        """``@@ -12,3 +12,4 @@`` in unified-diff numbering (1-based, 0 for an empty side)."""

        def side(start: int, end: int) -> str:
            count = end - start
            first = start + 1 if count else start
            return f"{first},{count}"

        return f"@@ -{side(self.old_start, self.old_end)} +{side(self.new_start, self.new_end)} @@"


def split_lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` with their endings kept (the last may have none)."""
    return data.splitlines(keepends=True)


def hunks(old: Sequence[bytes], new: Sequence[bytes]) -> list[Hunk]:
    """The changed runs from ``old`` to ``new`` lines, in file order."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    found: list[Hunk] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            found.append(Hunk(len(found), i1, i2, j1, j2))
    return found


def revert(old: Sequence[bytes], new: Sequence[bytes], chosen: Collection[int]) -> bytes:
    """``new`` with the hunks whose index is in ``chosen`` put back to their ``old`` lines."""
    out: list[bytes] = []
    position = 0
    for hunk in hunks(old, new):
        out.extend(new[position : hunk.new_start])
        if hunk.index in chosen:
            out.extend(old[hunk.old_start : hunk.old_end])
        else:
            out.extend(new[hunk.new_start : hunk.new_end])
        position = hunk.new_end
    out.extend(new[position:])
    return b"".join(out)


def hunk_text(old: Sequence[bytes], new: Sequence[bytes], hunk: Hunk) -> str:
    """The hunk as unified-diff lines (with a little context), decoded for display."""

    def text(line: bytes) -> str:
        return line.decode("utf-8", "replace").rstrip("\r\n")

    lines = [hunk.header()]
    before = max(0, hunk.old_start - CONTEXT_LINES)
    lines += [f" {text(line)}" for line in old[before : hunk.old_start]]
    lines += [f"-{text(line)}" for line in old[hunk.old_start : hunk.old_end]]
    lines += [f"+{text(line)}" for line in new[hunk.new_start : hunk.new_end]]
    lines += [f" {text(line)}" for line in old[hunk.old_end : hunk.old_end + CONTEXT_LINES]]
    return "\n".join(lines)

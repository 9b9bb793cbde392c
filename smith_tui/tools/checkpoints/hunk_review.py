"""Per-hunk review of one turn's changes: keep or revert each hunk, or each whole file.

Everything goes through the checkpoint store (:class:`~smith_tui.tools.checkpoints.shadow_repo.Checkpoints`):
the old text comes from the turn's checkpoint, the new text is the file as the turn left
it, and the reverted files are written beneath the project as a restore writes them,
recorded as a ``restore`` checkpoint so ``/undo`` takes a review back. The user's own
``.git`` is never read or written. A file that changed again after the turn is refused (its
hunks would no longer line up); ``/rewind`` restores a whole turn instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from smith_tui.tools.checkpoints.hunks import Hunk, hunk_text, hunks, revert, split_lines
from smith_tui.tools.checkpoints.shadow_repo import Checkpoint, CheckpointError, Checkpoints

MAX_REVIEW_BYTES = 2 * 1024 * 1024
"""Larger files are reviewed whole (revert the file or keep it), not hunk by hunk."""

WHOLE_FILE = "file"
"""The choice that reverts a whole file (added files go, deleted ones come back)."""


@dataclass(frozen=True)
class ReviewFile:
    """One file the turn changed, with its hunks when it is text of a reviewable size."""

    path: str
    status: str
    """``A`` added, ``M`` modified, ``D`` deleted by the turn."""
    old_mode: str | None
    new_mode: str | None
    old: tuple[bytes, ...] = ()
    new: tuple[bytes, ...] = ()
    hunks: tuple[Hunk, ...] = ()
    whole_only: str = ""
    """Why only the whole file can be reverted ("" when hunks can be chosen)."""

    def hunk_text(self, hunk: Hunk) -> str:
        """The hunk as diff lines, for display."""
        return hunk_text(self.old, self.new, hunk)


@dataclass
class ReviewResult:
    """What a review reverted."""

    checkpoint: Checkpoint
    undo: Checkpoint
    """The record written before the reverts (``/undo`` restores it)."""
    reverted: dict[str, list[str]] = field(default_factory=dict)
    """Path → the reverted hunks' headers, or ``["whole file"]``."""


def _text(data: bytes) -> bool:
    return b"\0" not in data[:8192]


def review_files(checkpoints: Checkpoints, checkpoint: Checkpoint) -> list[ReviewFile]:
    """The files the turn of ``checkpoint`` changed, as the turn left them."""
    after = checkpoint.after if checkpoint.after is not None else checkpoints.snapshot()
    changes = checkpoints.changes(checkpoint.before, after)
    paths = [change.path for change in changes]
    old_entries = checkpoints.entries(checkpoint.before, paths)
    new_entries = checkpoints.entries(after, paths)
    files: list[ReviewFile] = []
    for change in changes:
        old_entry, new_entry = old_entries.get(change.path), new_entries.get(change.path)
        old_mode = old_entry[0] if old_entry else None
        new_mode = new_entry[0] if new_entry else None
        if old_entry is None or new_entry is None:
            what = "added" if old_entry is None else "deleted"
            files.append(
                ReviewFile(change.path, change.status, old_mode, new_mode, whole_only=what)
            )
            continue
        if "100644" not in (old_mode, new_mode) and "100755" not in (old_mode, new_mode):
            files.append(
                ReviewFile(change.path, change.status, old_mode, new_mode, whole_only="not a file")
            )
            continue
        old = checkpoints.blob(old_entry[1], limit=MAX_REVIEW_BYTES)
        new = checkpoints.blob(new_entry[1], limit=MAX_REVIEW_BYTES)
        if old is None or new is None:
            why = "over 2 MB"
        elif not (_text(old) and _text(new)):
            why = "binary"
        else:
            why = ""
        if why:
            files.append(ReviewFile(change.path, change.status, old_mode, new_mode, whole_only=why))
            continue
        assert old is not None and new is not None
        old_lines, new_lines = tuple(split_lines(old)), tuple(split_lines(new))
        files.append(
            ReviewFile(
                change.path,
                change.status,
                old_mode,
                new_mode,
                old_lines,
                new_lines,
                tuple(hunks(old_lines, new_lines)),
            )
        )
    return files


def apply_review(
    checkpoints: Checkpoints,
    checkpoint: Checkpoint,
    choices: Mapping[str, set[int] | str],
) -> ReviewResult:
    """Revert the chosen hunks (``{path: {hunk index, ...}}``) or files (``{path: "file"}``).

    Raises :class:`CheckpointError` (nothing written) when a chosen file changed after the
    turn or a choice names no hunk of it.
    """
    by_path = {item.path: item for item in review_files(checkpoints, checkpoint)}
    current = checkpoints.entries(checkpoints.snapshot(), choices)
    after = checkpoint.after if checkpoint.after is not None else checkpoints.snapshot()
    turn_left = checkpoints.entries(after, choices)
    writes: dict[str, tuple[str, bytes] | None] = {}
    reverted: dict[str, list[str]] = {}
    for path, chosen in choices.items():
        item = by_path.get(path)
        if item is None:
            raise CheckpointError(f"review: this turn did not change {path}", code="review_failed")
        if current.get(path) != turn_left.get(path):
            raise CheckpointError(
                f"review: {path} changed after this turn, so its hunks no longer line up; "
                "/rewind restores the whole turn instead",
                code="review_failed",
            )
        if chosen == WHOLE_FILE:
            if item.old_mode is None:
                writes[path] = None
            else:
                old_oid = checkpoints.entries(checkpoint.before, [path])[path][1]
                content = checkpoints.blob(old_oid, limit=1 << 62) or b""
                writes[path] = (item.old_mode, content)
            reverted[path] = ["whole file"]
            continue
        if item.whole_only or not isinstance(chosen, set) or not chosen:
            raise CheckpointError(
                f"review: {path} can only be reverted whole ({item.whole_only or 'no hunk'})",
                code="review_failed",
            )
        known = {hunk.index for hunk in item.hunks}
        if not chosen <= known:
            raise CheckpointError(
                f"review: {path} has hunks 0-{len(known) - 1}, not {sorted(chosen - known)}",
                code="review_failed",
            )
        mode = item.new_mode or "100644"
        writes[path] = (mode, revert(item.old, item.new, chosen))
        reverted[path] = [item.hunks[index].header() for index in sorted(chosen)]
    if not writes:
        raise CheckpointError("review: nothing was chosen to revert", code="review_failed")
    undo = checkpoints.write_files(
        writes, prompt=f"review of checkpoint {checkpoint.id}", data={"reviewed": checkpoint.id}
    )
    return ReviewResult(checkpoint, undo, reverted)


def review_note(result: ReviewResult, label: str) -> str:
    """What the model is told at its next turn, so that it does not redo what was reverted."""
    parts = []
    for path, what in result.reverted.items():
        if what == ["whole file"]:
            parts.append(f"{path} (the whole file)")
        else:
            parts.append(f"{path} (hunks {', '.join(what)} of your change)")
    return (
        f"[Smith: the user reviewed the changes of {label} and reverted: "
        + "; ".join(parts)
        + ". The files are as they were before those hunks. Do not make these changes again "
        "unless the user asks.]"
    )

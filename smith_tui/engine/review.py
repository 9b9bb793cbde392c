"""A per-hunk review's reverts, told to the model at its next turn.

The turn diff screen reverts hunks through :mod:`smith_tui.tools.checkpoints.hunk_review`;
:func:`apply` does that off the event loop and keeps what the model must hear as a
conversation note, which :func:`take_note` hands (once) to the next turn's prompt, so the
model does not silently make the reverted change again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from smith_tui.engine.checkpoints import CheckpointHost, TurnLabels, runtime_checkpoints
from smith_tui.store import Store
from smith_tui.tools.checkpoints.shadow_repo import CheckpointError

if TYPE_CHECKING:  # the review's reader and writer load with a review, not with take_note
    from smith_tui.tools.checkpoints.hunk_review import ReviewFile, ReviewResult

PENDING_NOTE = "review:pending"
"""The conversation note holding what the next turn's prompt must tell the model."""


def _checkpoint(runtime: CheckpointHost, checkpoint_id: str) -> Any:
    checkpoints = runtime_checkpoints(runtime)
    item = checkpoints.get(checkpoint_id)
    if item is None:
        raise CheckpointError(
            f"no checkpoint {checkpoint_id!r} in this project; /rewind lists them",
            code="unknown_checkpoint",
        )
    return checkpoints, item


async def files(runtime: CheckpointHost, checkpoint_id: str) -> list[ReviewFile]:
    """The files (and hunks) of the turn of ``checkpoint_id``, read off the event loop."""

    from smith_tui.tools.checkpoints.hunk_review import review_files

    def read() -> list[ReviewFile]:
        checkpoints, item = _checkpoint(runtime, checkpoint_id)
        return review_files(checkpoints, item)

    return await asyncio.to_thread(read)


async def apply(
    runtime: CheckpointHost,
    store: Store,
    conversation_id: str | None,
    checkpoint_id: str,
    choices: Mapping[str, set[int] | str],
) -> ReviewResult:
    """Revert the chosen hunks and files; keep the note for the next turn of
    ``conversation_id`` (added to one left by an earlier review not yet told)."""

    from smith_tui.tools.checkpoints.hunk_review import apply_review, review_note

    def write() -> ReviewResult:
        checkpoints, item = _checkpoint(runtime, checkpoint_id)
        return apply_review(checkpoints, item, choices)

    result = await asyncio.to_thread(write)
    if conversation_id:
        label = TurnLabels(store).label(
            result.checkpoint.conversation_id, result.checkpoint.turn_id, result.checkpoint.prompt
        )
        note = review_note(result, label)
        earlier = store.notes.get(conversation_id, PENDING_NOTE)
        text = f"{earlier.content}\n{note}" if earlier is not None and earlier.content else note
        store.notes.put(conversation_id, PENDING_NOTE, text)
    return result


def take_note(store: Store, conversation_id: str) -> str | None:
    """The review note waiting for this conversation's next turn, removed as it is taken."""
    with store.atomic():
        note = store.notes.get(conversation_id, PENDING_NOTE)
        if note is None:
            return None
        store.notes.delete(conversation_id, PENDING_NOTE)
    return note.content or None

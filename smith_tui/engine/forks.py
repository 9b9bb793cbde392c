"""Forking a conversation: a new one holding the history up to a point, linked to its source.

A fork copies the source's messages and cuts them, with the rewind machinery's
:func:`~smith_tui.engine.checkpoints.truncate_conversation`, after the turn that holds the
chosen message (a turn is never cut in half: its calls keep their results). The fork's
metadata names its source (``forked_from``), so history can show forks as a tree. The
project's files are left alone unless asked: :func:`restore_files_for` puts them back as
they were when that turn ended (the checkpoint of the next turn that changed files).
Used by ``/fork``, inspect's ``f`` and ACP's ``session/fork``.
"""

from __future__ import annotations

from typing import Any

from smith_tui.engine.checkpoints import truncate_conversation
from smith_tui.engine.persistence import message_dict
from smith_tui.store import Store
from smith_tui.tools.checkpoints.shadow_repo import Checkpoints, RestoreResult

FORKED_FROM = "forked_from"
"""Conversation metadata: ``{"conversation": id, "turn": turn id or None}``."""

DROPPED_METADATA = ("permission_grants",)
"""Conversation metadata a fork does not inherit: "allow for this session" answers were
given for the session they were given in (a fork asks again)."""


class ForkError(ValueError):
    """A fork that cannot be made; the message says why."""


def turn_ids(store: Store, conversation_id: str) -> list[str]:
    """The conversation's turns in order (by their first message)."""
    seen: dict[str, None] = {}
    for message in store.conversations.list_messages(conversation_id):
        if message.turn_id and message.turn_id not in seen:
            seen[message.turn_id] = None
    return list(seen)


def fork_conversation(
    store: Store,
    source_id: str,
    *,
    through_turn: str | None = None,
    before_turn: str | None = None,
    title: str | None = None,
) -> str:
    """A new top-level conversation with ``source_id``'s messages: all of them, or those up
    to the end of ``through_turn``, or those before ``before_turn``; returns its id."""
    source = store.conversations.get(source_id)
    if source is None or source.parent_id is not None:
        raise ForkError(f"no conversation with id {source_id!r} to fork")
    turns = turn_ids(store, source_id)
    for turn in (through_turn, before_turn):
        if turn is not None and turn not in turns:
            raise ForkError(f"the conversation has no turn {turn!r}")
    cut = before_turn
    if through_turn is not None:
        later = turns[turns.index(through_turn) + 1 :]
        cut = later[0] if later else None
    metadata = {k: v for k, v in source.metadata.items() if k not in DROPPED_METADATA}
    if through_turn is not None:
        kept: str | None = through_turn
    elif before_turn is not None:
        index = turns.index(before_turn)
        kept = turns[index - 1] if index else None
    else:
        kept = turns[-1] if turns else None
    metadata[FORKED_FROM] = {"conversation": source_id, "turn": kept}
    name = title or (f"{source.title} (fork)" if source.title else None)
    with store.atomic():
        fork_id = store.conversations.create(
            source.project_id, name, pinned_model=source.pinned_model, metadata=metadata
        )
        copies: list[dict[str, Any]] = []
        for message in store.conversations.list_messages(source_id):
            data: dict[str, Any] = dict(message_dict(message))
            for key in ("id", "position"):
                data.pop(key, None)
            data["round"] = message.round
            copies.append(data)
        if copies:
            store.conversations.append_messages(fork_id, copies)
    if cut is not None:
        truncate_conversation(store, fork_id, cut)
    return fork_id


def restore_files_for(
    checkpoints: Checkpoints, conversation_id: str, through_turn: str, turns: list[str]
) -> RestoreResult | None:
    """Put the project's files back as they were when ``through_turn`` ended: the before-state
    of the first later turn of the conversation that has a checkpoint (``None``: no later
    turn changed files, so they already are). Git work: call it off the event loop."""
    later = set(turns[turns.index(through_turn) + 1 :])
    for item in checkpoints.list():
        if item.conversation_id == conversation_id and item.turn_id in later:
            return checkpoints.restore(item)
    return None

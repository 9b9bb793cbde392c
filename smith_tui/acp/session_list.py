"""Smith's conversations as ACP sessions: their titles, ``session/list`` pages, the
``session_info_update`` that names a session, and a fork of a stored conversation.

Every top-level conversation of the project is a session, started in an editor or in the
TUI alike (the session id is the conversation id). A conversation without a title is named
by its first prompt, as the TUI's history list names it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp.schema import ListSessionsResponse, SessionInfo, SessionInfoUpdate

from smith_tui.engine import events as ev
from smith_tui.engine.transcript_text import message_preview

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

PAGE_SIZE = 50
"""Sessions per ``session/list`` page."""
TITLE_WIDTH = 60


def iso_time(epoch: float) -> str:
    """``epoch`` seconds as an ISO 8601 UTC timestamp (``updatedAt``)."""
    return dt.datetime.fromtimestamp(epoch, tz=dt.UTC).isoformat().replace("+00:00", "Z")


def title_of(store: Any, conversation: Any) -> str:
    """The conversation's title, else its first prompt's first line, else ``""``."""
    title = (conversation.title or "").strip()
    if title:
        return message_preview({"content": title}, TITLE_WIDTH)
    for message in store.conversations.list_messages(conversation.id, limit=5):
        if message.role == "user" and isinstance(message.content, str) and message.content:
            return message_preview({"content": message.content}, TITLE_WIDTH)
    return ""


def list_page(store: Any, project_id: str, cwd: str, cursor: str | None) -> ListSessionsResponse:
    """One page of the project's conversations, most recently updated first; the cursor is
    the offset of the next page."""
    try:
        offset = max(0, int(cursor)) if cursor else 0
    except ValueError:
        raise ValueError(f"not a cursor this agent gave: {cursor!r}") from None
    found = store.conversations.list_for_project(project_id, limit=offset + PAGE_SIZE + 1)
    page = found[offset : offset + PAGE_SIZE]
    sessions = [
        SessionInfo(
            session_id=conv.id,
            cwd=cwd,
            title=title_of(store, conv) or None,
            updated_at=iso_time(conv.updated_at),
        )
        for conv in page
    ]
    more = len(found) > offset + PAGE_SIZE
    return ListSessionsResponse(
        sessions=sessions, next_cursor=str(offset + PAGE_SIZE) if more else None
    )


class TitleReporter:
    """Sends ``session_info_update`` (title, updatedAt) when a top-level turn ends and the
    session's title is new: after the first prompt, and after a rename."""

    def __init__(self, runtime: Runtime, send: Callable[[Any], None]) -> None:
        self.runtime = runtime
        self.send = send
        self.sent: str | None = None

    def announce(self) -> None:
        """Send the title if it changed since the last one sent."""
        conversation_id = self.runtime.conversations.conversation_id
        if not conversation_id:
            return
        conversation = self.runtime.store.conversations.get(conversation_id)
        if conversation is None:
            return
        title = title_of(self.runtime.store, conversation)
        if not title or title == self.sent:
            return
        self.sent = title
        self.send(
            SessionInfoUpdate(
                session_update="session_info_update",
                title=title,
                updated_at=iso_time(conversation.updated_at),
            )
        )

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.TurnFinished) and event.job_id is None:
            self.announce()


def fork_conversation(
    store: Any, source_id: str, *, before_turn: str | None = None, before_prompt: int | None = None
) -> str:
    """A new top-level conversation holding ``source_id``'s messages, cut before turn
    ``before_turn`` or before the ``before_prompt``-th prompt (from 1) when given; returns
    its id (:func:`smith_tui.engine.forks.fork_conversation` makes it, linked to its source).
    The project's files are not touched (``/rewind`` restores those)."""
    from smith_tui.engine import forks

    source = store.conversations.get(source_id)
    if source is None or source.parent_id is not None:
        raise ValueError(f"no conversation with id {source_id!r} to fork")
    if before_prompt is not None:
        messages = store.conversations.list_messages(source_id)
        prompts = [m for m in messages if m.role == "user" and m.turn_id]
        if not 1 <= before_prompt <= len(prompts):
            raise ValueError(
                f"beforePrompt must be 1 to {len(prompts)} (the conversation has "
                f"{len(prompts)} prompts), got {before_prompt}"
            )
        before_turn = prompts[before_prompt - 1].turn_id
    title = title_of(store, source)
    return forks.fork_conversation(
        store, source_id, before_turn=before_turn, title=f"{title} (fork)" if title else None
    )

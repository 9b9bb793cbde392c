"""The active conversation of a runtime: which one, its live transcript and its todo list."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from smith_tui.engine import events as ev
from smith_tui.engine.errors import UserRequestError
from smith_tui.engine.kept_notices import KeptNotices
from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.persistence import Persistence, message_dict
from smith_tui.store import Store, codec
from smith_tui.tools.builtin import todo as todo_tool

log = logging.getLogger(__name__)

#: ``ConversationChanged`` reasons that reopen a conversation the user did not pick just now
#: (plain ``smith``, ``--continue``, ``--resume``): the screen says what was reopened.
RESUME_REASONS = frozenset({"resume", "continue"})

#: Where the active role of a conversation is kept (its metadata), for a resume to restore.
ROLE_KEY = "active_role"


@dataclass(frozen=True)
class Resumed:
    """What a resume reopened, as it stood before this session touched it."""

    title: str
    messages: int
    last_active: float
    """When it last changed (epoch seconds)."""
    reason: str


def ago(seconds: float) -> str:
    """``seconds`` in the past in a person's words: ``just now``, ``5 min ago``, ``2 h ago``."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} d ago"


def resumed_line(resumed: Resumed, now: float | None = None) -> str:
    """The line a resumed conversation opens with (transcript and status line)."""
    title = f"‘{resumed.title}’" if resumed.title else "the last conversation"
    count = f"{resumed.messages} message{'' if resumed.messages == 1 else 's'}"
    when = ago((time.time() if now is None else now) - resumed.last_active)
    return f"Resumed {title} · {count} · {when} — /new starts fresh"


class Conversations:
    """The active conversation (resumed, created, loaded) and its transcript and todo list.

    ``project_id`` gives the project of the working directory, ``role`` the role events
    are named for, and ``require_idle`` raises when a turn is running (the conversation
    may not change under it).
    """

    def __init__(
        self,
        store: Store,
        persistence: Persistence,
        *,
        emit: Callable[[ev.Event], None],
        project_id: Callable[[], str],
        role: Callable[[], str],
        require_idle: Callable[[], None],
        auto_resume: bool = False,
        restore_role: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.persistence = persistence
        self.emit = emit
        self.project_id = project_id
        self.role = role
        self.require_idle = require_idle
        self.restore_role = restore_role
        """Called with a loaded conversation's role (the one it last ran as)."""
        self.resumed: Resumed | None = None
        """What the last resume reopened (``None`` after ``new`` or a load the user picked)."""
        self.conversation_id: str | None = None
        self._messages: list[TranscriptMessage] | None = []
        self._messages_lock = threading.Lock()  # read on first use, maybe off the event loop
        self.todo: list[dict[str, Any]] = []
        self._resume_checked = not auto_resume
        self.notices = KeptNotices(store, self)
        """What the active conversation's turns showed besides their messages."""
        self._unsaved: tuple[str, str | None] | None = None
        # (project id, title) of a new conversation that has no row yet: it is written with
        # its first message (see ensure), so starting smith or /new leaves nothing behind.

    @property
    def pinned_model(self) -> str | None:
        """The model pinned to the active conversation with ``/model``."""
        if not self.conversation_id:
            return None
        conv = self.store.conversations.get(self.conversation_id)
        return conv.pinned_model if conv else None

    @property
    def messages(self) -> list[TranscriptMessage]:
        """The active conversation's transcript as stored.

        A load or reload reads it from the store on first use, not at once: a conversation
        of 20,000 messages opens (and shows its end, see :meth:`recent`) without reading
        them all; the next turn does.
        """
        with self._messages_lock:
            if self._messages is None:
                conversation_id = self.conversation_id
                stored = (
                    self.store.conversations.list_messages(conversation_id)
                    if self.saved and conversation_id is not None
                    else []
                )
                self._messages = [message_dict(m) for m in stored]
            return self._messages

    @messages.setter
    def messages(self, messages: list[TranscriptMessage]) -> None:
        with self._messages_lock:
            self._messages = messages

    def recent(self, limit: int) -> list[TranscriptMessage]:
        """About the newest ``limit`` messages, oldest first, from the store unless read already.

        When older messages exist the slice starts at its first user message, so no round
        is cut from the tool calls it answers.
        """
        with self._messages_lock:
            loaded = self._messages
        conversation_id = self.conversation_id
        if loaded is not None:
            tail = loaded[-limit:]
        elif self.saved and conversation_id is not None:
            found = self.store.conversations.tail_messages(conversation_id, limit)
            tail = [message_dict(m) for m in found]
        else:
            tail = []
        if len(tail) >= limit:
            first_user = next((i for i, m in enumerate(tail) if m.get("role") == "user"), 0)
            tail = tail[first_user:]
        return tail

    def before(self, position: int, limit: int) -> list[TranscriptMessage]:
        """Up to ``limit`` stored messages just before ``position``, oldest first."""
        conversation_id = self.conversation_id
        if not self.saved or conversation_id is None:
            return []
        found = self.store.conversations.list_messages(
            conversation_id, before_position=position, limit=limit
        )
        return [message_dict(m) for m in found]

    def after(self, position: int, limit: int) -> list[TranscriptMessage]:
        """Up to ``limit`` stored messages just after ``position``, oldest first (``-1``: from
        the conversation's first message)."""
        conversation_id = self.conversation_id
        if not self.saved or conversation_id is None:
            return []
        found = self.store.conversations.list_messages(
            conversation_id, after_position=position, limit=limit
        )
        return [message_dict(m) for m in found]

    def prompts(self, limit: int) -> list[str]:
        """The text of the newest ``limit`` user messages, oldest first (prompt history)."""
        conversation_id = self.conversation_id
        if not self.saved or conversation_id is None:
            return []
        return self.store.conversations.user_prompts(conversation_id, limit)

    @property
    def saved(self) -> bool:
        """Whether the active conversation has a row in the store (not one still empty)."""
        return self.conversation_id is not None and self._unsaved is None

    @property
    def title(self) -> str:
        """The active conversation's title (``""`` when it has none), stored yet or not."""
        if self._unsaved is not None:
            return self._unsaved[1] or ""
        if self.conversation_id is None:
            return ""
        conversation = self.store.conversations.get(self.conversation_id)
        return (conversation.title or "") if conversation is not None else ""

    def new(self, title: str | None = None) -> str:
        """Start a fresh conversation and make it active.

        Its id is minted now; the store gets it only with its first message (:meth:`ensure`).
        """
        self.require_idle()
        self.conversation_id = codec.new_id()
        self._unsaved = (self.project_id(), title)
        self.messages = []
        self.todo = []
        self._resume_checked = True
        self.resumed = None
        self.emit(
            ev.ConversationChanged(
                conversation_id=self.conversation_id, reason="new", role=self.role()
            )
        )
        return self.conversation_id

    def load(self, conversation_id: str, reason: str = "load") -> str:
        """Make an existing conversation active (an id prefix that names one is enough)."""
        self.require_idle()
        conv = self.store.conversations.get(conversation_id)
        if conv is None:
            matches = [
                c.id
                for c in self.store.conversations.list_all(limit=500)
                if c.id.startswith(conversation_id)
            ]
            if len(matches) != 1:
                raise UserRequestError(
                    f"no conversation with id {conversation_id!r}; /history lists them"
                )
            conv = self.store.conversations.get(matches[0])
            assert conv is not None
        self.resumed = (
            Resumed(
                title=conv.title or self._first_prompt(conv.id),
                messages=self.store.conversations.count_messages(conv.id),
                last_active=conv.updated_at,
                reason=reason,
            )
            if reason in RESUME_REASONS
            else None
        )
        self.store.conversations.repair_orphan_tool_calls(conv.id)
        self.conversation_id = conv.id
        self._unsaved = None
        self._resume_checked = True
        self.reload()
        # Under the conversation's own project: resuming project A's conversation while in
        # project B must not make a restart in B reopen it.
        self.persistence.set_active_conversation(conv.id, conv.project_id)
        role = self.stored_role(conv.id)
        if role and self.restore_role is not None:
            self.restore_role(role)
        self.emit(ev.ConversationChanged(conversation_id=conv.id, reason=reason, role=self.role()))
        return conv.id

    def _first_prompt(self, conversation_id: str, limit: int = 50) -> str:
        """The first words of a conversation's first prompt (what names one without a title)."""
        for message in self.store.conversations.list_messages(conversation_id, limit=5):
            if message.role == "user" and isinstance(message.content, str):
                words = " ".join(message.content.split())
                return words if len(words) <= limit else words[: limit - 1] + "…"
        return ""

    def stored_role(self, conversation_id: str) -> str | None:
        """The role ``conversation_id`` last ran as: the one ``/role`` chose for it, else its
        last turn's."""
        conv = self.store.conversations.get(conversation_id)
        chosen = (conv.metadata or {}).get(ROLE_KEY) if conv is not None else None
        if isinstance(chosen, str) and chosen:
            return chosen
        turns = self.store.turns.list_for_conversation(conversation_id)
        return turns[-1].role if turns else None

    def remember_role(self, role: str) -> None:
        """Keep ``role`` with the active conversation (a resume restores it)."""
        conversation_id = self.conversation_id
        if not self.saved or conversation_id is None:
            return
        conv = self.store.conversations.get(conversation_id)
        if conv is None or (conv.metadata or {}).get(ROLE_KEY) == role:
            return
        self.store.conversations.set_metadata(conversation_id, {**conv.metadata, ROLE_KEY: role})

    def refresh(self) -> None:
        """Catch up with what a turn stored: like :meth:`reload`, but when every message held
        is still stored at its position (the turn only appended), only the messages after
        the last one are read, not the whole conversation again; anything else (a repair
        that inserted results, an edit) reads it whole on next use."""
        conversation_id = self.conversation_id
        with self._messages_lock:
            held = self._messages
        if not self.saved or conversation_id is None or held is None:
            self.reload()
            return
        stored = self.store.conversations.message_keys(conversation_id)
        if len(stored) < len(held) or any(
            key != (message.get("id"), message.get("position"))
            for key, message in zip(stored, held, strict=False)
        ):
            self.reload()
            return
        if len(stored) > len(held):
            after = held[-1]["position"] if held else -1
            new = self.store.conversations.list_messages(conversation_id, after_position=after)
            with self._messages_lock:
                if self._messages is held:
                    held.extend(message_dict(m) for m in new)
        self.todo = todo_tool.load_todo(self.store, conversation_id)

    def reload(self) -> None:
        """Rebuild the live transcript and todo list from the store."""
        conversation_id = self.conversation_id
        if not self.saved or conversation_id is None:
            self.messages = []
            return
        with self._messages_lock:
            self._messages = None  # read on first use (see messages)
        self.todo = todo_tool.load_todo(self.store, conversation_id)

    def continue_latest(self) -> str | None:
        """Load the most recent conversation of this project, if there is one."""
        conv = self.store.conversations.most_recent(self.project_id())
        if conv is None:
            return None
        return self.load(conv.id, reason="continue")

    def prepare(self) -> str:
        """Return the active conversation, resuming one or starting a new (unsaved) one."""
        if self.conversation_id is not None:
            return self.conversation_id
        if not self._resume_checked:
            self._resume_checked = True
            project_id = self.project_id()
            active = self.persistence.active_conversation(project_id)
            conv = self.store.conversations.get(active) if active else None
            if conv is not None and conv.project_id == project_id:
                return self.load(conv.id, reason="resume")
        return self.new()

    def ensure(self) -> str:
        """The active conversation with its row in the store (written now if it was new).

        Called when something is about to be stored in it: a turn, a pinned model.
        """
        conversation_id = self.prepare()
        if self._unsaved is not None:
            project_id, title = self._unsaved
            self.store.conversations.create(project_id, title, conversation_id=conversation_id)
            self._unsaved = None
            self.persistence.set_active_conversation(conversation_id, project_id)
            self.notices.stored(conversation_id)
        return conversation_id

    # -- the notices a turn showed, kept with its record ---------------------------------
    def observe(self, event: ev.Event) -> None:
        """Keep what a turn showed besides its messages (see ``KeptNotices.observe``)."""
        self.notices.observe(event)

    def turn_records(self, turn_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The stored records of the active conversation's turns (``KeptNotices.turn_records``)."""
        return self.notices.turn_records(turn_ids)

    def clear_todo(self, role: str) -> None:
        """Empty the todo list at the start of a turn (stored and live)."""
        if self.conversation_id is not None:
            todo_tool.clear_todo(self.store, self.conversation_id)
        if self.todo:
            self.todo = []
            self.emit(ev.TodoUpdated(items=[], role=role))

    def todo_changed(self, event: ev.Event) -> ev.TodoUpdated | None:
        """Take a new todo list from a finished ``todo`` call; the event to emit after it."""
        if isinstance(event, ev.ToolCallFinished) and "todo" in event.metadata:
            self.todo = list(event.metadata["todo"])
            return ev.TodoUpdated(items=self.todo, role=event.role, job_id=event.job_id)
        return None

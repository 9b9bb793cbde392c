"""What a conversation's turns showed besides their messages (retries, budget and scope
warnings, automatic compactions, typed slash commands' output), kept in the store so a
reload shows each where it was."""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Protocol

from smith_tui.engine import events as ev
from smith_tui.store import Store

log = logging.getLogger(__name__)

#: The key of a turn record under which the notices the turn showed are kept.
NOTICES_KEY = "notices"

#: The notes (one per output) keeping the slash commands' output the transcript showed.
COMMAND_NOTE_PREFIX = "command_output-"

#: Command output actions front ends show in the transcript (the others open a screen or a
#: picker instead, which says it better: those outputs are not kept for a reload).
SHOWN_ACTIONS = frozenset({"", "copy", "edit"})


class ActiveConversation(Protocol):
    """Which conversation is active, and whether its row is stored yet."""

    @property
    def conversation_id(self) -> str | None: ...

    @property
    def saved(self) -> bool: ...


class KeptNotices:
    """The notices of the active conversation's turns: collected while a turn runs, written
    into its record when it ends, and read back for a reload."""

    def __init__(self, store: Store, active: ActiveConversation) -> None:
        self.store = store
        self.active = active
        self._notices: dict[str, list[dict[str, Any]]] = {}
        """The notices of the turns running, by turn id (see observe)."""
        self._running_turn: str | None = None
        """The top-level turn running (its compactions are its notices)."""
        self._unsaved_outputs: list[tuple[str, dict[str, Any]]] = []
        """Command output shown before the conversation was stored (conversation id, note)."""

    def stored(self, conversation_id: str) -> None:
        """The row of ``conversation_id`` was just written: keep the output it showed before."""
        pending, self._unsaved_outputs = self._unsaved_outputs, []
        for owner, note in pending:
            if owner == conversation_id:
                self._put_command_note(conversation_id, note)

    def observe(self, event: ev.Event) -> None:
        """Keep what a top-level turn said besides its messages (retries, warnings) and write
        it into the turn's record when the turn ends, so a reload shows it where it was.

        Each notice keeps ``after``: the position of the turn's last stored message when it
        was shown (``None``: before the turn stored anything past its prompt). How the turn
        ended (error, cancel, a truncated answer) is in the record already.
        """
        if event.job_id is not None:
            return
        if isinstance(event, ev.TurnStarted):
            self._running_turn = event.turn_id
        if isinstance(event, ev.TurnFinished):
            self._running_turn = None
            self._write_notices(event.conversation_id, event.turn_id)
            return
        if isinstance(event, ev.CommandOutput):
            self._keep_command_output(event)
            return
        notice = _notice_of(event)
        if notice is None:
            return
        turn_id = str(getattr(event, "turn_id", None) or self._running_turn or "")
        self._notices.setdefault(turn_id, []).append({**notice, "after": self._after(turn_id)})

    def _keep_command_output(self, event: ev.CommandOutput) -> None:
        """Keep a typed slash command's output the transcript shows (one note, one write),
        placed after the conversation's last stored message; a conversation not stored yet
        keeps it until its row is written."""
        action = str(event.data.get("action") or "")
        if not event.command.startswith("/") or not event.text or action not in SHOWN_ACTIONS:
            return  # notices of the session (setup, MCP, marks) or output shown by a screen
        if "conversation_id" in event.data:
            # /new, /clear, /load, /fork moved to another conversation: the reload that follows
            # shows it, and "loaded conversation X" is no line of X's own history.
            return
        conversation_id = self.active.conversation_id
        if conversation_id is None:
            return
        note: dict[str, Any] = {
            "kind": "command",
            "command": event.command,
            "text": event.text,
            "ok": event.ok,
        }
        if not self.active.saved:
            self._unsaved_outputs.append((conversation_id, {**note, "after": None}))
            return
        last = self.store.conversations.tail_messages(conversation_id, 1)
        note["after"] = last[0].position if last else None
        note["turn_id"] = last[0].turn_id if last else None
        self._put_command_note(conversation_id, note)

    def _put_command_note(self, conversation_id: str, note: dict[str, Any]) -> None:
        try:
            self.store.notes.put(
                conversation_id, f"{COMMAND_NOTE_PREFIX}{time.time_ns()}", json.dumps(note)
            )
        except Exception:  # best effort, as the turn records
            log.exception("keeping the output of %s failed", note.get("command"))

    def command_notices(self, turn_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        """The kept command output of the active conversation, by the turn whose last
        message it followed (output shown before any message goes with the first turn)."""
        conversation_id = self.active.conversation_id
        if not self.active.saved or conversation_id is None:
            return {}
        try:
            notes = self.store.notes.list(conversation_id, prefix=COMMAND_NOTE_PREFIX)
        except Exception:
            log.warning("reading the command output failed", exc_info=True)
            return {}
        first: str | None = None
        found: dict[str, list[dict[str, Any]]] = {}
        wanted = set(turn_ids)
        for note in notes:  # by note id: in the order shown
            try:
                data = json.loads(note.content)
            except ValueError:
                continue
            if not isinstance(data, dict):
                continue
            turn = data.get("turn_id")
            if data.get("after") is None:
                if first is None:
                    head = self.store.conversations.list_messages(conversation_id, limit=1)
                    first = str(head[0].turn_id) if head else ""
                turn, data = first, {**data, "before": True}
            if turn in wanted:
                found.setdefault(str(turn), []).append(data)
        return found

    def _after(self, turn_id: str) -> int | None:
        conversation_id = self.active.conversation_id
        if not self.active.saved or conversation_id is None:
            return None
        last = self.store.conversations.tail_messages(conversation_id, 1)
        return last[0].position if last and last[0].turn_id == turn_id else None

    def _write_notices(self, conversation_id: str, turn_id: str) -> None:
        notices = self._notices.pop(turn_id, None)
        if not notices:
            return
        try:
            record = self.store.notes.get_turn_record(conversation_id, turn_id) or {}
            self.store.notes.put_turn_record(
                conversation_id, turn_id, {**record, NOTICES_KEY: notices}
            )
        except Exception:  # the record is best effort, as the rest of it
            log.exception("keeping the notices of turn %s failed", turn_id)

    def turn_records(self, turn_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The stored records of the active conversation's turns ``turn_ids``, by turn id
        (how each ended, as which role, what it noticed); unreadable ones are left out."""
        conversation_id = self.active.conversation_id
        if not self.active.saved or conversation_id is None:
            return {}
        try:
            records = self.store.notes.get_turn_records(conversation_id, turn_ids)
        except Exception:
            log.warning("reading the records of %d turns failed", len(turn_ids), exc_info=True)
            records = {}
        for turn_id, outputs in self.command_notices(turn_ids).items():
            record = records.setdefault(turn_id, {})
            notices = record.get(NOTICES_KEY)
            kept = notices if isinstance(notices, list) else []
            records[turn_id] = {**record, NOTICES_KEY: [*kept, *outputs]}
        return records


def _notice_of(event: ev.Event) -> dict[str, Any] | None:
    """The stored form of a notice the transcript shows for ``event`` during a turn."""
    if isinstance(event, ev.RetryScheduled):
        return {
            "kind": "retry",
            "attempt": event.attempt,
            "delay_s": event.delay_s,
            "reason": event.reason,
        }
    if isinstance(event, ev.BudgetWarning):
        return {"kind": "budget", "message": event.message}
    if isinstance(event, ev.ScopeWarning):
        return {"kind": "scope", "message": event.message}
    if isinstance(event, ev.ContextCompacted) and event.reason != "manual":
        return {  # /compact (manual) says it in its own output, kept as command output
            "kind": "compacted",
            "reason": event.reason,
            "summarised": event.summarised,
            "kept": event.kept,
            "tokens_before": event.tokens_before,
            "tokens_after": event.tokens_after,
        }
    return None

"""What lies above the mounted entries: pruned entries in memory, then the store."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from smith_tui.widgets.transcript.entries import Entry
from smith_tui.widgets.transcript.history import entries_from_messages

#: ``loader(before_position, limit)``: up to ``limit`` stored messages just before
#: ``before_position``, oldest first (``Store.conversations.list_messages`` order).
Loader = Callable[[int, int], list[dict[str, Any]]]

#: ``marks(turn_ids)``: the checkpoint marks of those turns that changed files, by turn id.
MarkLoader = Callable[[list[str]], Mapping[str, dict[str, Any]]]

#: ``records(turn_ids)``: the stored records of those turns, by turn id (roles, notices).
RecordLoader = Callable[[list[str]], Mapping[str, Mapping[str, Any]]]


class HistoryWindow:
    """Entries older than the mounted ones, handed out a page at a time (newest first).

    Entries pruned from the top go back here; when they run out, ``loader`` is
    asked for stored messages before the oldest position seen.
    """

    def __init__(self, loader: Loader | None = None, role: str = "direct") -> None:
        self.loader = loader
        self.role = role
        self.marks: MarkLoader | None = None
        """Where the marks of turns that changed files come from (none without it)."""
        self.records: RecordLoader | None = None
        """Where the turns' records come from (their roles and notices; none without it)."""
        self._older: list[Entry] = []  # oldest first
        self._before: int | None = None
        self._oldest_turn: str | None = None

    @property
    def has_older(self) -> bool:
        """True when a page can still be taken."""
        return bool(self._older) or (self.loader is not None and self._before is not None)

    def open(self, messages: list[dict[str, Any]], shown: int) -> list[Entry]:
        """Start over with a stored conversation; return the newest ``shown`` entries."""
        self._oldest_turn = None
        entries = self._entries(messages)
        positions = [m["position"] for m in messages if isinstance(m.get("position"), int)]
        self._older = entries[:-shown] if len(entries) > shown else []
        self._before = min(positions) if positions and self.loader is not None else None
        return entries[len(self._older) :]

    def push_pruned(self, entries: list[Entry]) -> None:
        """Keep entries pruned from the top (oldest first) for a later page."""
        self._older.extend(entries)

    def take_page(self, size: int) -> list[Entry]:
        """The ``size`` entries just above the mounted ones (oldest first; [] when none)."""
        if self._older:
            page = self._older[-size:]
            del self._older[-size:]
            return page
        if self.loader is None or self._before is None:
            return []
        messages = self.loader(self._before, size)
        positions = [m["position"] for m in messages if isinstance(m.get("position"), int)]
        if not messages or not positions:
            self._before = None
            return []
        self._before = min(positions)
        return self._entries(messages, drop_unanswered_calls=True)

    def _entries(
        self, messages: list[dict[str, Any]], *, drop_unanswered_calls: bool = False
    ) -> list[Entry]:
        """The entries of ``messages``, with the marks of their turns that changed files."""
        turn_ids = [str(m["turn_id"]) for m in messages if m.get("turn_id")]
        marks = self.marks(turn_ids) if self.marks is not None and turn_ids else None
        records = self.records(turn_ids) if self.records is not None and turn_ids else None
        continued = self._oldest_turn  # its end (and mark) is in the newer messages
        self._oldest_turn = messages[0].get("turn_id") if messages else None
        return entries_from_messages(
            messages,
            role=self.role,
            drop_unanswered_calls=drop_unanswered_calls,
            marks=marks,
            continued_turn=continued,
            records=records,
        )

"""What lies outside the mounted entries: above them (pruned entries in memory, then the
store), and below them while the window is opened at the conversation's start."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from smith_tui.widgets.transcript.entries import Entry
from smith_tui.widgets.transcript.history import entries_from_messages

#: ``loader(before_position, limit)``: up to ``limit`` stored messages just before
#: ``before_position``, oldest first (``Store.conversations.list_messages`` order).
Loader = Callable[[int, int], list[dict[str, Any]]]

#: ``newer(after_position, limit)``: up to ``limit`` stored messages just after
#: ``after_position`` (``-1``: from the first), oldest first.
NewerLoader = Callable[[int, int], list[dict[str, Any]]]

#: ``marks(turn_ids)``: the checkpoint marks of those turns that changed files, by turn id.
MarkLoader = Callable[[list[str]], Mapping[str, dict[str, Any]]]

#: ``records(turn_ids)``: the stored records of those turns, by turn id (roles, notices).
RecordLoader = Callable[[list[str]], Mapping[str, Mapping[str, Any]]]


@dataclass
class _Kept:
    """What lay above the mounted entries when the window was opened at the start (the
    mounted ones stay with the transcript), to go back to at the end."""

    older: list[Entry]
    """The entries in memory above the mounted ones, oldest first."""
    before: int | None
    """The store position where ``entries`` begin (``None``: no stored message above)."""
    oldest_turn: str | None
    """The turn of the message at ``before`` (its end may be in ``entries``)."""


def page_end(messages: list[dict[str, Any]], size: int) -> int:
    """Where to cut ``messages`` (a read of more than ``size``) to at most ``size``: before
    the last user message that leaves something (a new round), else before the last answer
    with every call above it answered, else at ``size`` (a call's result is then on the
    next page, shown on its own as a page loaded above shows it)."""
    user = clean = 0
    open_calls: set[str] = set()
    for index, message in enumerate(messages[: size + 1]):
        role = message.get("role")
        if index and role == "user":
            user = index
        elif index and role == "assistant" and not open_calls:
            clean = index
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict) and call.get("id"):
                    open_calls.add(str(call["id"]))
        elif role == "tool":
            open_calls.discard(str(message.get("tool_call_id") or ""))
    return user or clean or size


class HistoryWindow:
    """Entries older than the mounted ones, handed out a page at a time (newest first);
    and, once :meth:`open_start` opened the window at the conversation's first messages,
    the entries newer than the mounted ones (oldest first) until the window is back at the
    newest ones.

    Entries pruned from the top go back here; when they run out, ``loader`` is
    asked for stored messages before the oldest position seen.
    """

    def __init__(self, loader: Loader | None = None, role: str = "direct") -> None:
        self.loader = loader
        self.role = role
        self.newer: NewerLoader | None = None
        """Where stored messages after a position come from (no :meth:`open_start` without)."""
        self.marks: MarkLoader | None = None
        """Where the marks of turns that changed files come from (none without it)."""
        self.records: RecordLoader | None = None
        """Where the turns' records come from (their roles and notices; none without it)."""
        self._older: list[Entry] = []  # oldest first
        self._before: int | None = None
        self._oldest_turn: str | None = None
        self._kept: _Kept | None = None  # while opened at the start
        self._after: int | None = None  # the last stored position mounted (store part left)
        self._newer: list[Entry] = []  # kept older entries not mounted yet, oldest first
        self._ahead: list[Entry] = []  # taken, then given back unmounted (next in line)

    @property
    def has_older(self) -> bool:
        """True when a page can still be taken."""
        return bool(self._older) or (self.loader is not None and self._before is not None)

    @property
    def detached(self) -> bool:
        """True while the window is opened at the start and not back at the newest entries."""
        return self._kept is not None

    @property
    def has_newer(self) -> bool:
        """True when a newer page can still be taken (only while :attr:`detached`)."""
        return self._kept is not None and bool(
            self._ahead or self._after is not None or self._newer
        )

    def above(self) -> int:
        """About how many entries lie above the mounted ones: those in memory, and the
        stored messages before the oldest position seen (positions count from 0)."""
        return len(self._older) + (self._before or 0)

    def open(self, messages: list[dict[str, Any]], shown: int) -> list[Entry]:
        """Start over with a stored conversation; return the newest ``shown`` entries."""
        self._oldest_turn = None
        self._kept, self._after, self._newer, self._ahead = None, None, [], []
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

    # -- opened at the start --------------------------------------------------------------
    def open_start(self, size: int) -> list[Entry]:
        """Open the window at the conversation's first messages, above the entries mounted
        now (which the transcript keeps, hidden): keep what lies above them for
        :meth:`reattach` and return the first page (about ``size`` stored messages, oldest
        first). Newer pages then lead down to the kept entries. Needs :attr:`newer` when
        stored messages lie above (without it, the first page would be the entries in
        memory, not the conversation's first)."""
        kept = self._kept
        if kept is None:  # (opened at the start already: the window to go back to stays)
            kept = _Kept(self._older, self._before, self._oldest_turn)
        self._kept = kept
        self._older, self._before, self._oldest_turn = [], None, None
        has_store = self.newer is not None and kept.before is not None
        self._after = -1 if has_store else None
        self._newer, self._ahead = list(kept.older), []
        return self.take_newer(size)

    def give_back(self, entries: list[Entry]) -> None:
        """Entries taken by :meth:`take_newer` but not mounted (oldest first): the next
        ones it hands out."""
        self._ahead[:0] = entries

    def take_newer(self, size: int) -> list[Entry]:
        """The entries between the window opened at the start and the kept ones (oldest
        first; [] when none are left): stored messages until where the entries in memory
        begin, cut between rounds, then those."""
        kept = self._kept
        if self._ahead:
            page_entries = self._ahead[:size]
            del self._ahead[:size]
            return page_entries
        while kept is not None and self._after is not None and self.newer is not None:
            limit = kept.before
            read = [
                m
                for m in self.newer(self._after, size + 1)
                if isinstance(m.get("position"), int) and (limit is None or m["position"] < limit)
            ]
            if len(read) > size:  # more follow: end the page between two rounds
                end = page_end(read, size)
                page, continued = read[:end], read[end].get("turn_id")
                self._after = page[-1]["position"]
            else:  # the stored part ends here: the kept entries follow
                page, continued = read, kept.oldest_turn
                self._after = None
            if page and page[-1].get("turn_id") != continued:
                continued = None
            entries = self._build(page, continued)
            if entries:
                return entries
        if self._newer:
            page_entries = self._newer[:size]
            del self._newer[:size]
            return page_entries
        return []

    def reattach(self) -> None:
        """Back to the window as it was before :meth:`open_start` (the transcript shows its
        kept entries again): what lay above them comes back a page at a time, as before."""
        kept = self._kept
        if kept is None:
            return
        self._kept, self._after, self._newer, self._ahead = None, None, [], []
        self._older, self._before, self._oldest_turn = kept.older, kept.before, kept.oldest_turn

    def reached_newest(self) -> None:
        """Everything between the window opened at the start and the kept entries is
        mounted: one window again, from the first message (nothing above it)."""
        if not self.has_newer:
            self._kept = None

    # -- entries --------------------------------------------------------------------------
    def _entries(
        self, messages: list[dict[str, Any]], *, drop_unanswered_calls: bool = False
    ) -> list[Entry]:
        """The entries of ``messages``, with the marks of their turns that changed files."""
        continued = self._oldest_turn  # its end (and mark) is in the newer messages
        self._oldest_turn = messages[0].get("turn_id") if messages else None
        return self._build(messages, continued, drop_unanswered_calls=drop_unanswered_calls)

    def _build(
        self,
        messages: list[dict[str, Any]],
        continued: str | None,
        *,
        drop_unanswered_calls: bool = True,
    ) -> list[Entry]:
        """The entries of ``messages`` whose last turn ``continued`` ends in newer ones."""
        turn_ids = [str(m["turn_id"]) for m in messages if m.get("turn_id")]
        marks = self.marks(turn_ids) if self.marks is not None and turn_ids else None
        records = self.records(turn_ids) if self.records is not None and turn_ids else None
        return entries_from_messages(
            messages,
            role=self.role,
            drop_unanswered_calls=drop_unanswered_calls,
            marks=marks,
            continued_turn=continued,
            records=records,
        )

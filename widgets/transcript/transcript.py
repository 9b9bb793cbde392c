"""The transcript pane: the conversation, streamed as it happens.

Costs stay in proportion to what is new:

- text deltas are buffered and written at most every ``flush_interval`` seconds;
- a streamed answer is split into frozen Markdown parts plus a live tail
  (:class:`StreamingMarkdown`), so only the tail is laid out again;
- at most ``max_widgets`` entries are mounted: older ones are pruned from the
  top while the view follows the bottom, and come back (from memory, then from
  ``loader``) when the user scrolls to the top;
- ``Home`` in a long conversation opens the window at its first messages (from
  ``newer_loader``) instead of mounting every page above, loads newer pages as the
  user scrolls down, and goes back to the newest entries on ``End`` or live output.

The view is anchored: it follows new output until the user scrolls up, and
follows again once they scroll back to the bottom. Apps hosting it should set
``App.PAUSE_GC_ON_SCROLL = True``.

All public methods are synchronous (they can be called from an engine event
callback); the work that must wait for widgets runs in order on one queue.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
import weakref
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

from textual.containers import VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget

from smith_tui.widgets.activity import clean_output
from smith_tui.widgets.output_tail import OutputTail, tail_text
from smith_tui.widgets.textual_compat import anchor_released, is_pruning
from smith_tui.widgets.transcript.block_split import DEFAULT_PART_CHARS
from smith_tui.widgets.transcript.dispatch_card import DispatchCard
from smith_tui.widgets.transcript.entries import (
    AssistantEntry,
    DispatchEntry,
    Entry,
    NoticeEntry,
    ToolEntry,
    UserEntry,
)
from smith_tui.widgets.transcript.entry_widgets import build_widget
from smith_tui.widgets.transcript.event_router import route_event
from smith_tui.widgets.transcript.history import dispatch_result_of
from smith_tui.widgets.transcript.history_window import (
    HistoryWindow,
    Loader,
    MarkLoader,
    NewerLoader,
    RecordLoader,
)
from smith_tui.widgets.transcript.notice import Notice
from smith_tui.widgets.transcript.parking import (
    Placeholder,
    child_offsets,
    is_near,
    one_update,
    parked_height,
    replace_widgets,
)
from smith_tui.widgets.transcript.row_estimate import newest_filling
from smith_tui.widgets.transcript.tool_call import TAIL_LINES, ToolCallEntry
from smith_tui.widgets.transcript.turn_changes import TurnChanges, changes_entry
from smith_tui.widgets.transcript.user_message import UserMessage
from smith_tui.widgets.transcript.view_anchor import ViewAnchor
from smith_tui.widgets.transcript.work_queue import Job, WorkQueue

if TYPE_CHECKING:
    from smith_tui.widgets.transcript.assistant_message import AssistantMessage

_W = TypeVar("_W", bound=Widget)

#: The assistant message's module, with the Markdown machinery it brings (markdown-it,
#: mdurl, linkify, pygments, Textual's Markdown widget: about 3 MB and 90 modules). Not
#: needed before the first prompt: imported when an answer is first shown, or just after
#: the user's first message is painted, while the model is asked (docs/PERFORMANCE.md).
ANSWER_MODULE = "smith_tui.widgets.transcript.assistant_message"

#: Older entries are mounted this many at a time (the UI answers in between).
LOAD_CHUNK = 4

#: ``Home`` opens the window at the conversation's start (instead of mounting every page
#: above) when more than this many pages of entries or stored messages lie above.
START_PAGES = 4

#: Seconds an open waits after painting its newest entries before mounting the rest.
FRAME_OUT_S = 0.05

#: Rows of a long stored answer built when it is mounted from its end (a tall screen and
#: the parking window's margin); the parts above start parked. Opening a conversation, the
#: newest entries that fill this many rows are painted before the rest of the page (fewer
#: when the pane's height is known: the view and a quarter more, see ``_first_paint_rows``).
BUILT_ROWS = 80


@dataclass
class _Stream:
    """The assistant message being streamed and the text not written to it yet."""

    widget: AssistantMessage
    mounted: Awaitable[Any] | None
    """The message's mount until it has been awaited (then None: each await of a Textual
    ``AwaitMount`` asks the transcript for another layout of the whole screen)."""
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)

    async def wait_mounted(self) -> None:
        """Wait until the message is mounted (once; at once afterwards)."""
        if self.mounted is not None:
            await self.mounted
            self.mounted = None


class ParkedEntry(Placeholder):
    """Adjacent parked top-level entries: each one's record and height, to rebuild it.

    One placeholder stands for a whole run of entries far from the view, so the number of
    widgets stays small however far the user pages (each widget costs memory and layout).
    """

    def __init__(self, items: list[tuple[Entry, int]]) -> None:
        super().__init__(sum(height for _, height in items))
        self.items = items
        """``(entry, height)`` oldest first; heights include each entry's top margin."""

    @property
    def entry(self) -> Entry:
        """The first (oldest) entry of the run."""
        return self.items[0][0]

    @property
    def entries(self) -> list[Entry]:
        """The entries of the run, oldest first."""
        return [entry for entry, _ in self.items]

    def drop_oldest(self, count: int) -> list[Entry]:
        """Take the oldest ``count`` entries out of the run (fewer than it holds, so one
        stays) and return them, oldest first; the placeholder loses their rows."""
        if not 0 < count < len(self.items):
            raise ValueError(f"cannot drop {count} of {len(self.items)} parked entries")
        dropped, self.items = self.items[:count], self.items[count:]
        self.parked_height -= sum(height for _, height in dropped)
        self.refresh(layout=True)
        return [entry for entry, _ in dropped]


def _is_answer(widget: Widget) -> TypeGuard[AssistantMessage]:
    """Whether ``widget`` is an assistant message (none exists before its module is loaded)."""
    module = sys.modules.get(ANSWER_MODULE)
    return module is not None and isinstance(widget, module.AssistantMessage)


def _entries_of(widget: Widget) -> list[Entry]:
    """The entries a top-level widget shows (several for a parked run)."""
    if isinstance(widget, ParkedEntry):
        return widget.entries
    return [widget.entry]  # type: ignore[attr-defined]


class Transcript(VerticalScroll, can_focus=True):
    """The conversation pane, driven by engine events (see :meth:`handle_event`).

    Args:
        loader: ``loader(before_position, limit)`` returns stored messages older
            than what was loaded (see :data:`Loader`); without it, only what
            :meth:`load_messages` received can be scrolled back to.
        max_widgets: how many entries stay mounted while following the bottom (parked
            ones count: the oldest go to the history window).
        page_size: entries mounted per load at the top (and on open, unless
            ``first_page`` is given).
        first_page: entries mounted on open: a page that fills the view is enough to
            show a stored conversation; more come when the user scrolls up.
        flush_interval: seconds between writes of buffered text.
        part_chars: a streamed answer is frozen in parts of about this size.
        role: the role shown for answers that do not name one.
    """

    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        layout: stream;
    }
    """

    class OlderLoaded(Message):
        """Older entries were mounted at the top (``count`` of them)."""

        def __init__(self, count: int) -> None:
            self.count = count
            super().__init__()

    def __init__(
        self,
        *,
        loader: Loader | None = None,
        max_widgets: int = 200,
        page_size: int = 16,
        first_page: int | None = None,
        flush_interval: float = 0.05,
        part_chars: int = DEFAULT_PART_CHARS,
        role: str = "direct",
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.history = HistoryWindow(loader, role)
        self.max_widgets = max(10, max_widgets)
        self.page_size = max(1, page_size)
        self.first_page = self.page_size if first_page is None else max(1, first_page)
        self.flush_interval = flush_interval
        self.part_chars = part_chars
        self.role = role
        self._stream: _Stream | None = None
        self._flush_timer: Timer | None = None
        self._flushing = False
        self._work = WorkQueue(self._report_error)
        self._tools: dict[str, ToolEntry] = {}
        self._live_since_load: list[Widget] | None = None
        """While a :meth:`load_messages` waits in the queue: the entries appended since, which
        its replace keeps (``None`` when no load is pending)."""
        self._loading_older = False
        self._loading_newer = False
        self._prune_queued = False
        self._to_start = 0
        """Counts :meth:`scroll_to_start` and :meth:`follow` calls: a scroll to the start
        goes on while no later one came."""
        self._start_request: int | None = None
        """The :attr:`_to_start` of a queued open at the start (live output cancels it)."""
        self._kept: list[Widget] = []
        """While the window is opened at the start: the entries mounted before (hidden,
        below it), shown again by ``End`` or when scrolling down reaches them."""
        self._attaching = False
        """While going back from the window opened at the start to the kept entries: live
        output mounted meanwhile stays hidden (in :attr:`_hidden_live`) until they show."""
        self._hidden_live: list[Widget] = []
        self._below: weakref.WeakSet[Widget] = weakref.WeakSet()
        """Entries mounted at the bottom of the window opened at the start that the parking
        window has not reached yet (as :attr:`_unreached`, below the view)."""
        self._opening = False
        """While :meth:`load_messages` mounts its page (parking waits until it is in)."""
        self._park_timer: Timer | None = None
        self._unsettled_parks = 0
        self._unreached: weakref.WeakSet[Widget] = weakref.WeakSet()
        """Entries mounted at the top that the parking window has not reached yet: built to
        be read next, they stay built until then if they are within a screen of the window
        (a page can be taller than the window; parked, it would be built again when read)."""
        self._unfinished: weakref.WeakSet[Widget] = weakref.WeakSet()
        """Assistant messages from their start until their end job has run. Parking one
        would take it out of the screen while that job still writes its buffered text and
        waits for its stream to render, which it then never does (the queue would stall)."""

    # -- lifecycle ----------------------------------------------------------------------
    def on_mount(self) -> None:
        """Follow the bottom and start the queue of widget work."""
        self.anchor()
        self.run_worker(self._work.run(), group="transcript-work", exit_on_error=True)

    @property
    def loader(self) -> Loader | None:
        """Where older stored messages come from (see :data:`Loader`)."""
        return self.history.loader

    @loader.setter
    def loader(self, loader: Loader | None) -> None:
        self.history.loader = loader

    @property
    def newer_loader(self) -> NewerLoader | None:
        """Where newer stored messages come from (see :data:`NewerLoader`): with it, ``Home``
        in a long conversation opens at its first messages."""
        return self.history.newer

    @newer_loader.setter
    def newer_loader(self, newer: NewerLoader | None) -> None:
        self.history.newer = newer

    @property
    def detached(self) -> bool:
        """True while the window is opened at the conversation's start (``Home``) and not
        back at the newest entries."""
        return self.history.detached

    @property
    def turn_marks(self) -> MarkLoader | None:
        """Where the marks of stored turns that changed files come from (see :data:`MarkLoader`)."""
        return self.history.marks

    @turn_marks.setter
    def turn_marks(self, marks: MarkLoader | None) -> None:
        self.history.marks = marks

    @property
    def turn_records(self) -> RecordLoader | None:
        """Where the records of stored turns come from (see :data:`RecordLoader`)."""
        return self.history.records

    @turn_records.setter
    def turn_records(self, records: RecordLoader | None) -> None:
        self.history.records = records

    def _report_error(self, error: Exception) -> None:
        # One failed update must not stop the pane (nor the session).
        self.log.error(f"transcript update failed: {error!r}")

    def _enqueue(self, job: Job) -> asyncio.Future[None]:
        return self._work.put(job)

    async def settle(self) -> None:
        """Write all buffered text and wait until queued widget work is done.

        Raises the first error an update ran into since the last call.
        """
        self._schedule_flush(now=True)
        await self._work.join()
        if self._stream is not None:
            await self._stream.widget.body.wait_rendered()
        error = self._work.take_error()
        if error is not None:
            raise error

    # -- state --------------------------------------------------------------------------
    @property
    def following(self) -> bool:
        """True while the view sticks to the bottom (the user has not scrolled up)."""
        return self.is_anchored and not anchor_released(self)

    @property
    def streaming(self) -> bool:
        """True between :meth:`begin_assistant` and :meth:`end_assistant`."""
        return self._stream is not None

    @property
    def has_older(self) -> bool:
        """True when older entries can still be loaded at the top."""
        return self.history.has_older

    @property
    def entry_widgets(self) -> list[Widget]:
        """The mounted top-level widgets, oldest first (while the window is opened at the
        start, not those it keeps hidden)."""
        kept = set(self._kept)
        return [
            child
            for child in self.children
            if hasattr(child, "entry") and not is_pruning(child) and child not in kept
        ]

    @property
    def entries(self) -> list[Entry]:
        """The entries of the mounted top-level widgets (parked runs included), oldest first."""
        return [entry for widget in self.entry_widgets for entry in _entries_of(widget)]

    # -- adding content -----------------------------------------------------------------
    def add_user(self, text: str, images: list[dict[str, Any]] | None = None) -> UserMessage:
        """Show a message the user sent (``images``: its image attachments)."""
        widget = self._append(UserMessage(UserEntry(text=text, images=list(images or []))))
        if ANSWER_MODULE not in sys.modules:  # the answer's widgets, while the model thinks
            self.call_after_refresh(importlib.import_module, ANSWER_MODULE)
        return widget

    def begin_assistant(self, role: str = "direct", job_id: str | None = None) -> AssistantMessage:
        """Start an assistant message that text and reasoning stream into."""
        from smith_tui.widgets.transcript.assistant_message import AssistantMessage

        if self._stream is not None:
            self.end_assistant()
        widget = AssistantMessage(
            AssistantEntry(role=role, job_id=job_id), streaming=True, part_chars=self.part_chars
        )
        mounted = self.mount(widget)
        self._track_live(widget)
        self._unfinished.add(widget)
        self._stream = _Stream(widget=widget, mounted=mounted)
        self._prune()
        return widget

    def append_text(self, delta: str) -> None:
        """Add a piece of answer text (buffered; written at most every flush interval)."""
        if not delta:
            return
        if self._stream is None:
            self.begin_assistant(self.role)
        assert self._stream is not None
        self._stream.text.append(delta)
        self._schedule_flush()

    def append_reasoning(self, delta: str) -> None:
        """Add a piece of reasoning (it streams into a collapsed section)."""
        if not delta:
            return
        if self._stream is None:
            self.begin_assistant(self.role)
        assert self._stream is not None
        self._stream.reasoning.append(delta)
        self._schedule_flush()

    def end_assistant(self) -> None:
        """The assistant message is complete: write what is buffered and freeze it."""
        stream, self._stream = self._stream, None
        if stream is None:
            return

        async def finish() -> None:
            widget = stream.widget
            try:
                with one_update(self):
                    await self._write(stream)
                    await widget.finish()
                    if not widget.entry.text.strip() and not widget.entry.reasoning.strip():
                        await widget.remove()
            finally:
                self._unfinished.discard(widget)
            if widget.body.unmeasured:
                await self._next_refresh()  # the answer's end on screen before the rest is built
            self._schedule_parking()

        self._enqueue(finish)

    def reset_stream(self) -> None:
        """Discard the partial assistant output (the request is being retried)."""
        stream, self._stream = self._stream, None
        if stream is None:
            return
        stream.text.clear()
        stream.reasoning.clear()

        async def discard() -> None:
            try:
                await stream.wait_mounted()
                await stream.widget.clear()
                await stream.widget.remove()
            finally:
                self._unfinished.discard(stream.widget)

        self._enqueue(discard)

    def add_tool_call(
        self, call_id: str, name: str, arguments: str | dict[str, Any] = ""
    ) -> ToolCallEntry:
        """Show a tool call that started (compact line; the result comes later)."""
        entry = ToolEntry(
            call_id=call_id, name=name, arguments=arguments, output=OutputTail(TAIL_LINES)
        )
        self._tools[call_id] = entry
        return self._append(ToolCallEntry(entry))

    def tool_output(self, call_id: str, text: str) -> None:
        """A running call printed ``text``: its row shows the last lines."""
        entry = self._tools.get(call_id)
        if entry is None or entry.output is None:
            return
        entry.output.add(clean_output(tail_text(text, entry.output.size, entry.output.line_chars)))
        widget = self._widget_for(entry)
        if isinstance(widget, ToolCallEntry):
            widget.output_changed()

    def finish_tool_call(
        self,
        call_id: str,
        ok: bool,
        duration_s: float | None = None,
        summary: str = "",
        content: str = "",
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Record a tool call's outcome; a ``dispatch`` result also gets its card."""
        metadata = dict(metadata or {})
        entry = self._tools.pop(call_id, None)
        widget = self._widget_for(entry) if entry is not None else None
        if isinstance(widget, ToolCallEntry):
            widget.finish(ok, duration_s, summary, content, metadata)
        else:
            if entry is None:  # a result without a call: show it on its own
                entry = ToolEntry(call_id=call_id, name="tool")
                self._append(ToolCallEntry(entry))
            # (a parked entry is rebuilt from this record)
            entry.finished, entry.ok, entry.duration_s = True, ok, duration_s
            entry.summary, entry.content, entry.metadata = summary, content, metadata
        assert entry is not None  # the finished widget's entry, or the one just made
        result = dispatch_result_of(entry.name, content, metadata)
        if result is not None:
            self.add_dispatch_result(result)

    def toggle_tool_results(self) -> bool:
        """Expand every tool call of the view, or collapse them all when none is collapsed;
        returns whether they are now expanded (parked calls come back the same way)."""
        widgets = [w for w in self.entry_widgets if isinstance(w, ToolCallEntry)]
        records = [e for e in self.entries if isinstance(e, ToolEntry)]
        expand = any(not e.expanded for e in records)
        for entry in records:
            entry.expanded = expand
        for widget in widgets:
            widget.expanded = expand
        return expand

    def add_dispatch_result(self, result: dict[str, Any]) -> DispatchCard:
        """Show a dispatched sub-agent's result as a card."""
        return self._append(DispatchCard(DispatchEntry(result=dict(result))))

    def add_notice(self, text: str, style: str = "info") -> Notice:
        """Show a line from the app (``info``, ``warning``, ``error`` or ``success``)."""
        return self._append(Notice(NoticeEntry(text=text, style=style)))

    def add_turn_changes(self, data: dict[str, Any]) -> TurnChanges | None:
        """Mark a turn that changed files (``data``: its checkpoint notice's data)."""
        entry = changes_entry(data)
        return self._append(TurnChanges(entry)) if entry is not None else None

    def handle_event(self, event: Any) -> None:
        """Show an engine event; sub-agent events (``job_id`` set) are left to the dispatch tree."""
        if getattr(event, "job_id", None) is not None:
            return
        route_event(self, event)

    # -- history ------------------------------------------------------------------------
    def load_messages(self, messages: list[dict[str, Any]]) -> asyncio.Future[None]:
        """Replace the content with a stored conversation (oldest first).

        Only the newest ``first_page`` entries are mounted; the rest, and then
        whatever ``loader`` returns, come back when the user scrolls to the top.
        """
        self.history.role = self.role
        shown = self.history.open(messages, self.first_page)
        self._stream = None
        self._tools.clear()
        self._below.clear()
        self._kept = []  # (removed with the rest by the replace)
        for entry in shown:  # a call still running: its output and result come live
            if isinstance(entry, ToolEntry) and not entry.finished:
                entry.output = OutputTail(TAIL_LINES)
                self._tools[entry.call_id] = entry
        rows = self._first_paint_rows()
        widgets = [self._build_from_bottom(entry, rows) for entry in shown]
        # What the live session shows from now on (the user's prompt sent while this load
        # waits in the queue, the answer streaming to it, its tool calls) is newer than the
        # loaded history: the replace keeps it.
        live: list[Widget] = []
        self._live_since_load = live

        # The newest entries that fill the view go first, and are painted before the rest
        # of the page is mounted above them: the last message shows as soon as it can.
        newest = newest_filling(shown, rows)
        rest, widgets = widgets[:-newest], widgets[-newest:]

        async def replace() -> None:
            self._opening = True
            if self._park_timer is not None:  # (it would run on the page half mounted)
                self._park_timer.stop()
                self._park_timer = None
            try:
                await fill()
            finally:
                self._opening = False
            self.call_after_refresh(self._fill_view)
            self._schedule_parking(0.02)  # a long answer's parked top may be in view

        async def fill() -> None:
            with one_update(self):
                # In screen order: a row appended while an answer streams sits above it.
                kept = [child for child in self.children if child in live]
                await self.remove_children([c for c in self.children if c not in kept])
                if widgets:
                    if kept:
                        await self.mount_all(widgets, before=kept[0])
                    else:
                        await self.mount_all(widgets)
            self.anchor()
            if rest:
                await self._next_refresh()
                # The frame reaches the terminal through Textual's writer thread, which the
                # mounts below would hold up (the GIL): give it a moment first.
                await asyncio.sleep(FRAME_OUT_S)
                with one_update(self):
                    await self.mount_all(rest, before=widgets[0])
                # Laid out before anything else looks at where entries are (parking would
                # see the new ones without a height and the newest far down).
                await self._next_refresh()
            if self._live_since_load is live:
                self._live_since_load = None
            if self.following:  # (a PageUp while the rest of the page came in stays up)
                self.anchor()

        return self._enqueue(replace)

    def _fill_view(self) -> None:
        """Load older entries while they all fit in the view: with nothing to scroll, the
        user could never scroll to the top to ask for them."""
        if self.has_older and self.max_scroll_y == 0 and self.children:
            self.load_older()

    def clear(self) -> asyncio.Future[None]:
        """Remove everything (a new conversation)."""
        return self.load_messages([])

    # -- keyboard navigation ------------------------------------------------------------
    def follow(self) -> None:
        """Jump to the newest output and follow it again (the user just sent something);
        a :meth:`scroll_to_start` still loading pages stops, and a window opened at the
        start goes back to the newest entries (as a reopen shows them)."""
        self._to_start += 1
        self._start_request = None
        if self.history.detached:
            self._reattach()  # (it follows the end once they are in)
            return
        self.anchor()

    def action_scroll_end(self) -> None:
        """``End`` with the pane focused: the bottom, or, while the window is opened at the
        start, back to the newest entries (its bottom is not the conversation's end)."""
        if self.history.detached:
            self.follow()
        else:
            super().action_scroll_end()

    def _reattach(self) -> asyncio.Future[None]:
        """From the window opened at the start back to the entries it kept (what a reopen
        showed, unless the reader had paged up before): shown again, the window dropped."""
        self.history.reattach()
        self._attaching = True
        self._below.clear()

        async def back() -> None:
            kept, self._kept = self._kept, []
            live, self._hidden_live = self._hidden_live, []
            stays = {*kept, *live}
            window = [child for child in self.children if child not in stays]
            try:
                with one_update(self):
                    for child in window:
                        child.display = False
                    for child in (*kept, *live):
                        child.display = True
                    await self.remove_children(window)
            finally:
                self._attaching = False
            self.anchor()

        return self._enqueue(back)

    def page(self, pages: int) -> None:
        """Scroll ``pages`` screens down (negative: up); paging up past the top loads older
        entries as scrolling there does."""
        if pages < 0:
            # Let go of the bottom first, as a user's scroll does: otherwise content still
            # arriving (the end of an answer) would pull the view straight back down.
            self.release_anchor()
            if self.scroll_y <= self.scrollable_content_region.height:
                self.load_older()
            self.scroll_page_up(animate=False)
        elif pages > 0:
            self.scroll_page_down(animate=False)
            if self.history.detached:
                self.call_after_refresh(self._fill_below)

    def scroll_to_start(self, turn_running: bool = False) -> asyncio.Future[None]:
        """Show the conversation's very first message.

        With more than :data:`START_PAGES` pages above and no turn running, the window is
        opened at the conversation's first messages (:meth:`_open_start`); otherwise every
        older page is loaded first (a turn's output must keep arriving where it belongs).
        """
        self.release_anchor()
        self._to_start += 1
        request = self._to_start

        def wanted() -> bool:  # (not once the user went back to the end)
            return self._to_start == request

        if self._may_open_start(turn_running):
            self._start_request = request

            async def open_start() -> None:
                if self._start_request == request:
                    self._start_request = None
                if wanted() and self._may_open_start(turn_running):
                    await self._open_start()

            return self._enqueue(open_start)

        async def to_start() -> None:
            self._loading_older = True
            try:
                while self.history.has_older and wanted():
                    entries = self.history.take_page(self.page_size)
                    if not entries:
                        break
                    await self._mount_above(entries)  # (End stops it between pages)
            finally:
                self._loading_older = False
            if wanted():
                await self._next_refresh()
                self.scroll_home(animate=False, immediate=True)

        return self._enqueue(to_start)

    def _may_open_start(self, turn_running: bool) -> bool:
        """Whether ``Home`` opens the window at the start: a long history above, a way to
        read it forwards, and nothing live (no turn, no answer streaming or finishing)."""
        return (
            not turn_running
            and self._stream is None
            and not self._unfinished
            and self.history.newer is not None
            and self.history.above() > START_PAGES * self.page_size
        )

    async def _open_start(self) -> None:
        """Hide the mounted entries (kept for :meth:`_reattach`) and mount the
        conversation's first page above them, scrolled to the top."""
        page = self.history.open_start(self.page_size)
        if not self._kept:
            self._kept = [child for child in self.children if not is_pruning(child)]
        window = [child for child in self.children if child not in set(self._kept)]
        self.anchor(False)  # the bottom of this window is not the conversation's end
        self._unreached.clear()
        self._below.clear()
        if self._park_timer is not None:  # (it would run on the page half mounted)
            self._park_timer.stop()
            self._park_timer = None
        # Only the oldest entries that fill the view and the parking window's margin below
        # it are built: the rest of the page comes as the reader scrolls down (built now,
        # most of it would be parked again by the next pass).
        first = newest_filling(page[::-1], self._start_rows())
        self.history.give_back(page[first:])
        widgets = [build_widget(entry, part_chars=self.part_chars) for entry in page[:first]]
        self._opening = True
        try:
            with one_update(self):
                for child in self._kept:
                    child.display = False
                await self.remove_children(window)  # (Home again: the window opened before)
                await self._mount_below(widgets)
                self.scroll_home(animate=False, immediate=True)
            await self._next_refresh()
            self.scroll_home(animate=False, immediate=True)
        finally:
            self._opening = False
        self.call_after_refresh(self._fill_below)
        self._schedule_parking(0.02)

    def load_newer(self) -> None:
        """Queue loading one page of newer entries at the bottom of a window opened at the
        start."""
        if self._loading_newer or not self.history.has_newer:
            return
        self._loading_newer = True
        self._enqueue(self._load_newer)

    async def _load_newer(self) -> None:
        try:
            if not self.history.detached:
                return  # back at the newest entries meanwhile
            entries = self.history.take_newer(self.page_size)
            if entries:
                widgets = [build_widget(entry, part_chars=self.part_chars) for entry in entries]
                self._below.update(widgets)
                with one_update(self):
                    await self._mount_below(widgets)  # below the view: nothing it shows moves
                await self._next_refresh()
            if self.history.detached and not self.history.has_newer:
                # Down to the kept entries: they show below, and this is one window again;
                # the view stays where it is and follows the end once the reader gets there.
                self.history.reached_newest()
                kept, self._kept = self._kept, []
                self._below.update(kept)
                with one_update(self):
                    for child in kept:
                        child.display = True
                await self._next_refresh()
                top = self.scroll_y
                self.anchor()
                if top < self.max_scroll_y:
                    self.scroll_to(y=top, animate=False, immediate=True)
        finally:
            self._loading_newer = False
        self.call_after_refresh(self._fill_below)

    async def _mount_below(self, widgets: list[Widget]) -> None:
        """Mount ``widgets`` at the bottom of the window opened at the start (above the
        entries it keeps hidden)."""
        if not widgets:
            return
        if self._kept:
            await self.mount_all(widgets, before=self._kept[0])
        else:
            await self.mount_all(widgets)

    def _start_rows(self) -> int:
        """Rows the window opened at the start mounts first: the view and the parking
        window's margin below it (:data:`BUILT_ROWS` for a pane without a size)."""
        height = self.scrollable_content_region.height
        return height + height // 2 if height > 0 else BUILT_ROWS

    def _near_bottom(self, y: float) -> bool:
        """Whether a view at ``y`` is less than half a screen from the bottom of what is
        mounted (where newer entries of a window opened at the start are loaded)."""
        return y > self.max_scroll_y - self.scrollable_content_region.height // 2

    def _fill_below(self) -> None:
        """Load newer entries while the view is near the bottom of a window opened at the
        start (or the mounted entries do not fill it)."""
        if self.history.has_newer and self.children and self._near_bottom(self.scroll_y):
            self.load_newer()

    def load_older(self) -> None:
        """Queue loading one page of older entries at the top."""
        if self._loading_older or not self.has_older:
            return
        self._loading_older = True
        self._enqueue(self._load_older)

    async def _load_older(self) -> None:
        try:
            entries = self.history.take_page(self.page_size)
            if not entries:
                return
            # A few at a time, newest first (what the reader meets first), so the
            # screen repaints and keys are answered while a page comes in.
            for end in range(len(entries), 0, -LOAD_CHUNK):
                await self._mount_above(entries[max(0, end - LOAD_CHUNK) : end])
            self.post_message(self.OlderLoaded(len(entries)))
        finally:
            self._loading_older = False
        self.call_after_refresh(self._fill_view)

    async def _mount_above(self, entries: list[Entry]) -> None:
        """Mount ``entries`` at the top, keeping the view on what it showed."""
        widgets = [self._build_from_bottom(entry) for entry in entries]
        self._unreached.update(widgets)
        height_before = self.virtual_size.height
        first = self.children[0] if self.children else None
        if first is not None:
            await self.mount_all(widgets, before=first)
        else:
            await self.mount_all(widgets)
        await self._next_refresh()
        grown = self.virtual_size.height - height_before
        if grown and not self.following:
            # From where the view is now: the reader may have scrolled while this mounted.
            # (Back at the bottom, the anchor keeps the view there: moving it would let go.)
            self.scroll_to(y=self.scroll_y + grown, animate=False, immediate=True)

    async def _next_refresh(self) -> None:
        """Wait until the screen has been laid out and painted once more (at most 1 s)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def painted() -> None:
            if not done.done():
                done.set_result(None)

        self.call_after_refresh(painted)
        try:
            await asyncio.wait_for(done, 1.0)
        except TimeoutError:
            pass

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Load older entries at the top; rebuild parked content coming into view."""
        super().watch_scroll_y(old_value, new_value)
        near_top = new_value <= self.scrollable_content_region.height
        if near_top and self.max_scroll_y > 0 and not self.following and not self._attaching:
            self.load_older()
        if self.history.has_newer and self._near_bottom(new_value):
            self.load_newer()
        if round(old_value) != round(new_value):
            self._schedule_parking(0.02)

    def on_resize(self) -> None:
        """Placeholders keep their old heights; rebuild what is near the view (the view
        stays on what it showed, see :meth:`_park`)."""
        self._schedule_parking(0.02)

    # -- parking ------------------------------------------------------------------------
    def _schedule_parking(self, delay: float = 0.2, *, recheck: bool = False) -> None:
        if self._opening:
            return  # the open schedules it once the whole page is in
        if not recheck:
            self._unsettled_parks = 0  # something changed: allow fresh re-checks
        if self._park_timer is None:
            self._park_timer = self.set_timer(delay, self._on_park_timer)

    def _on_park_timer(self) -> None:
        self._park_timer = None
        self._enqueue(self._park)

    async def _park(self, *, in_update: bool = False) -> None:
        """Park entries (and parts of long answers) more than a screen away from the view.

        Away from the bottom, the view is kept on what it showed: a rebuilt entry above it
        may not be as tall as its placeholder (the width changed since it was parked).
        ``in_update``: called while this transcript holds screen updates (a flush), so no
        paint can come before it returns: it schedules its next look instead of waiting
        for one (Textual runs "after refresh" callbacks on idle while updates are held, so
        such a wait would return at once, with nothing painted).
        """
        anchor = None if self.following else ViewAnchor.take(self)
        if self.following:
            self._unreached.clear()  # back at the bottom: nothing is about to be read above
            self._below.clear()
        height = self.scrollable_content_region.height
        top = round(self.scroll_y)
        margin = height // 2
        # Paging up, what is above the view is about to be seen: keep a screen more built
        # there (a page loaded at the top stays built until the view reaches it).
        above = margin if self.following else margin + height
        # Following, all below the view is what was written since it last scrolled to the
        # end, which it is about to show: parked, it was drawn again a flush later.
        below = sys.maxsize if self.following else top + height + margin
        window = (top - above, below)
        streaming = self._stream.widget if self._stream is not None else None
        focused = self.screen.focused
        replacements: list[tuple[list[Widget], list[Widget]]] = []
        run: list[tuple[Widget, list[tuple[Entry, int]]]] = []  # far entries, adjacent

        built_or_parked = False  # (merging placeholders changes no height)

        def end_run() -> None:
            # Park the run as one placeholder (unless it is one already).
            nonlocal built_or_parked
            if len(run) > 1 or (run and not isinstance(run[0][0], ParkedEntry)):
                items = [item for _, parked in run for item in parked]
                replacements.append(([widget for widget, _ in run], [ParkedEntry(items)]))
                built_or_parked |= any(not isinstance(w, ParkedEntry) for w, _ in run)
            run.clear()

        settled = True
        building = False  # a long answer's unmeasured parts are still being built
        for child, y, h in child_offsets(self.children):
            if is_pruning(child):  # being removed (pruned or swapped) already
                continue
            settled = settled and h > 0
            near = is_near(y, h, window)
            if isinstance(child, ParkedEntry):
                if near:
                    end_run()
                    replacements.append(([child], self._unpark(child, y, window)))
                    built_or_parked = True
                else:
                    run.append((child, child.items))
                continue
            parkable = (
                not near
                and child is not streaming
                and child not in self._unfinished
                and hasattr(child, "entry")
            )
            if child in self._unreached and y + h > window[0] - height:
                if y + h > window[0]:
                    self._unreached.discard(child)  # reached: parked as usual from now on
                else:
                    parkable = False  # about to be read: a screen more stays built
            if child in self._below and y < window[1] + height:
                if y < window[1]:
                    self._below.discard(child)  # reached: parked as usual from now on
                else:
                    parkable = False  # about to be read (scrolling down): stays built
            if parkable and focused is not None:
                parkable = not (focused is child or child in focused.ancestors)
            if parkable:
                run.append((child, [(child.entry, parked_height(child))]))  # type: ignore[attr-defined]
                continue
            end_run()
            if near and _is_answer(child):
                settled = await child.park_outside((window[0] - y, window[1] - y)) and settled
                building = building or child.body.unmeasured > 0
        end_run()
        if replacements:
            settled = settled and not built_or_parked
            await replace_widgets(self, replacements)
        if anchor is not None and not settled:
            if in_update:
                self._schedule_parking(0.02, recheck=True)  # restored once laid out
                anchor = None
            else:
                await self._next_refresh()
                if not self.following:
                    anchor.restore()
        # New or rebuilt widgets have no height until laid out: look again soon.
        self._unsettled_parks = 0 if settled else self._unsettled_parks + 1
        if building:
            # One pass builds a few parts: the screen shows them (and answers keys) before
            # the next pass, which a queue of passes would otherwise keep from painting.
            if not in_update:
                await self._next_refresh()
            self._schedule_parking(0.02, recheck=True)
        elif not settled and self._unsettled_parks <= 5:
            self._schedule_parking(recheck=True)

    def _unpark(self, parked: ParkedEntry, top: int, window: tuple[int, int]) -> list[Widget]:
        """What replaces a parked run that meets ``window``: its entries there rebuilt, the
        others still parked (before and after them)."""
        out: list[Widget] = []
        far: list[tuple[Entry, int]] = []
        for entry, height in parked.items:
            if is_near(top, height, window):
                if far:
                    out.append(ParkedEntry(far))
                    far = []
                out.append(build_widget(entry, part_chars=self.part_chars))
            else:
                far.append((entry, height))
            top += height
        if far:
            out.append(ParkedEntry(far))
        return out

    def _build_from_bottom(self, entry: Entry, rows: int = BUILT_ROWS) -> Widget:
        """The widget of a stored entry the reader meets from its end (opening a
        conversation, paging up): of a long answer only the last parts that fill about
        ``rows`` rows are built."""
        return build_widget(entry, part_chars=self.part_chars, built_rows=rows)

    def _first_paint_rows(self) -> int:
        """Rows an open builds before its first paint: the view's height and a quarter
        more once the pane has a size (parking builds the rest of its window right after
        that paint), else :data:`BUILT_ROWS`."""
        height = self.scrollable_content_region.height
        return min(BUILT_ROWS, height + height // 4) if height > 0 else BUILT_ROWS

    def _widget_for(self, entry: Entry) -> Widget | None:
        """The live widget showing ``entry`` (searched from the bottom)."""
        for child in reversed(self.children):
            if getattr(child, "entry", None) is entry and not is_pruning(child):
                return child
        return None

    # -- internals ----------------------------------------------------------------------
    def _track_live(self, widget: Widget) -> None:
        """Note ``widget`` as live output a pending :meth:`load_messages` must keep.

        Live output belongs after the newest entries: a window opened at the start goes
        back to them first (the widget stays hidden until they are in), and a queued open
        at the start does not happen.
        """
        if self.history.detached or self._start_request == self._to_start:
            self._to_start += 1
            self._start_request = None
            if self.history.detached:
                self._reattach()
            else:
                self.anchor()  # (Home had let go of the end; the open at the start is off)
        if self._attaching:
            widget.display = False
            self._hidden_live.append(widget)
        if self._live_since_load is not None:
            self._live_since_load.append(widget)

    def _append(self, widget: _W) -> _W:
        self._track_live(widget)
        stream = self._stream
        if stream is not None and stream.widget.is_attached:
            # Keep the streaming message last so its text stays in place.
            self.mount(widget, before=stream.widget)
        else:
            self.mount(widget)
        self._prune()
        self._schedule_parking()
        return widget

    def _prune(self) -> None:
        """Queue a pass of :meth:`_prune_oldest` (one at a time: it runs between the other
        widget work, so a parking pass or a flush never sees the entries it moves)."""
        if self._prune_queued:
            return
        self._prune_queued = True
        self._enqueue(self._prune_oldest)

    async def _prune_oldest(self) -> None:
        """Move the oldest mounted entries beyond ``max_widgets`` to the history window
        (only while following the bottom).

        Entries are counted, not widgets: a parked run is one widget holding many entries
        (counted as one, it grew by a turn's rows every turn and nothing was ever pruned).
        A run whose oldest entries go keeps the others. The answer still streaming (or not
        finished yet) and what follows it stay, so the history stays in order.
        """
        self._prune_queued = False
        if not self.following or self.history.detached or self._live_since_load is not None:
            return  # (a pending load replaces the entries and the history window)
        widgets = self.entry_widgets
        excess = sum(len(_entries_of(widget)) for widget in widgets) - self.max_widgets
        streaming = self._stream.widget if self._stream is not None else None
        pruned: list[Entry] = []
        doomed: list[Widget] = []
        for widget in widgets:
            if excess <= 0 or widget is streaming or widget in self._unfinished:
                break
            if isinstance(widget, ParkedEntry) and len(widget.items) > excess:
                pruned.extend(widget.drop_oldest(excess))
                break
            entries = _entries_of(widget)
            doomed.append(widget)
            pruned.extend(entries)
            excess -= len(entries)
        if not pruned:
            return
        self.history.push_pruned(pruned)
        if doomed:
            with one_update(self):
                await self.remove_children(doomed)

    def _schedule_flush(self, now: bool = False) -> None:
        if now:
            if self._flush_timer is not None:
                self._flush_timer.stop()
                self._flush_timer = None
            self._enqueue(self._flush)
            return
        # One flush at a time: the next is armed when this one is done, so the
        # screen always gets ``flush_interval`` to paint (and keys to be handled).
        if self._flush_timer is None and not self._flushing:
            self._flush_timer = self.set_timer(self.flush_interval, self._on_flush_timer)

    def _on_flush_timer(self) -> None:
        self._flush_timer = None
        self._flushing = True
        self._enqueue(self._timed_flush)

    async def _timed_flush(self) -> None:
        try:
            await self._flush()
        finally:
            self._flushing = False
            stream = self._stream
            if stream is not None and (stream.text or stream.reasoning):
                self._schedule_flush()

    async def _flush(self) -> None:
        stream = self._stream
        if stream is None or not (stream.text or stream.reasoning):
            return
        # One screen update per flush: rendering the new text (several mounts) and
        # parking what scrolled away would otherwise each cost a layout and a paint.
        # (When the reader has scrolled away, parking may need a layout to keep their
        # view in place, see _park, which cannot happen inside one update: it waits.)
        following = self.following
        with one_update(self):
            await self._write(stream)
            await stream.widget.wait_rendered()
            if following:
                await self._park(in_update=True)
        if not following:
            self._schedule_parking(0.02)

    async def _write(self, stream: _Stream) -> None:
        await stream.wait_mounted()
        if stream.reasoning:
            reasoning = "".join(stream.reasoning)
            stream.reasoning.clear()
            await stream.widget.write_reasoning(reasoning)
        if stream.text:
            text = "".join(stream.text)
            stream.text.clear()
            stream.widget.write_text(text)

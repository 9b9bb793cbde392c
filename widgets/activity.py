"""The tool-activity pane: every tool call of the session, top level and sub-agents.

One line per call (state mark, role alias in its tint, tool, key argument, elapsed time);
the calls still running add the last lines of their output below their line. The pane is
a line-API :class:`~textual.scroll_view.ScrollView`: it keeps plain records and renders
only the visible lines, so thousands of calls cost no widgets.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from smith_tui.engine import events as ev
from smith_tui.engine.presentation import format_duration, key_argument
from smith_tui.engine.roles import role_display
from smith_tui.terminal_text import visible
from smith_tui.widgets.output_tail import CUT_MARK, KEEP_LINES, OutputTail, tail_text
from smith_tui.widgets.tool_outcome import CallState, call_state, exit_label

#: Calls kept by default; older ones are dropped.
MAX_CALLS = 500
#: Output lines shown under a running call by default.
TAIL_LINES = 3
#: Seconds between two redraws of the running calls' elapsed time.
TICK_S = 0.25

#: How a hook run's outcome shows: it let things go on, or it stopped something / failed.
_HOOK_STATES: dict[str, CallState] = {
    "ok": "ok",
    "allowed": "ok",
    "ask": "ok",
    "cancelled": "cancelled",
}
_MARKS: dict[str, str] = {"running": "▶", "ok": "✓", "error": "✗", "cancelled": "⊘"}
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
# Carriage returns stay: the output tail starts a line over at them (progress bars). C1
# controls go too (U+009B starts a sequence without any ESC), and lone surrogates.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def clean_output(text: str) -> str:
    """Output text without terminal escapes or control characters other than newlines and
    carriage returns (tabs become spaces)."""
    text = _ANSI.sub("", text).replace("\t", "    ")
    return _CONTROL.sub("", text)


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells, with an ellipsis when it was longer."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    out: list[str] = []
    used = 0
    for char in text:
        size = cell_len(char)
        if used + size > width - 1:
            break
        out.append(char)
        used += size
    return "".join(out) + "…"


def _fit_end(text: str, width: int) -> str:
    """The end of ``text`` in ``width`` cells, behind an ellipsis when it was longer."""
    return _fit(text[::-1], width)[::-1]


@dataclass
class ToolCallRecord:
    """One tool call as the pane shows it."""

    key: tuple[str, str]
    """``(turn_id, call_id)``: call ids are only unique within one turn."""
    call_id: str
    name: str
    role: str
    job_id: str | None
    argument: str
    started: float
    state: CallState = "running"
    duration_s: float | None = None
    summary: str = ""
    exit: str = ""
    """``exit 1`` for a command that exited non-zero."""
    output: OutputTail = field(default_factory=lambda: OutputTail(TAIL_LINES))
    """The last lines of output (bounded, whatever the tool prints)."""
    version: int = 0

    def tail_lines(self, limit: int) -> list[str]:
        """The last ``limit`` lines of output (the unfinished line included)."""
        return self.output.lines()[-limit:] if limit > 0 else []

    def add_output(self, text: str) -> None:
        """Append a piece of output, keeping only the last lines."""
        # Cut first: the escape filter then never sees more than what can show.
        self.output.add(clean_output(tail_text(text, self.output.size, self.output.line_chars)))
        self.version += 1


class ToolActivity(ScrollView, can_focus=True):
    """Live list of the session's tool calls, bounded and virtualised."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tool-activity--running",
        "tool-activity--ok",
        "tool-activity--error",
        "tool-activity--cancelled",
        "tool-activity--tool",
        "tool-activity--argument",
        "tool-activity--elapsed",
        "tool-activity--tail",
        "tool-activity--empty",
    }

    DEFAULT_CSS = """
    ToolActivity {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
    }
    ToolActivity > .tool-activity--running { color: $warning; text-style: bold; }
    ToolActivity > .tool-activity--ok { color: $success; }
    ToolActivity > .tool-activity--error { color: $error; text-style: bold; }
    ToolActivity > .tool-activity--cancelled { color: $text-muted; }
    ToolActivity > .tool-activity--tool { text-style: bold; }
    ToolActivity > .tool-activity--argument { color: $text-muted; }
    ToolActivity > .tool-activity--elapsed { color: $text-muted; }
    ToolActivity > .tool-activity--tail { color: $text-muted; text-style: italic; }
    ToolActivity > .tool-activity--empty { color: $text-disabled; }
    """

    def __init__(
        self,
        *,
        max_calls: int = MAX_CALLS,
        tail_lines: int = TAIL_LINES,
        clock: Callable[[], float] = time.monotonic,
        tick_s: float = TICK_S,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """Create the pane.

        Args:
            max_calls: Calls kept; the oldest are dropped beyond this.
            tail_lines: Output lines shown under a running call (at most
                :data:`~smith_tui.widgets.output_tail.KEEP_LINES`).
            clock: Seconds, monotonic; injected for deterministic tests.
            tick_s: Interval of the elapsed-time redraw while something runs.
        """
        super().__init__(name=name, id=id, classes=classes)
        self.max_calls = max_calls
        self.tail_size = min(tail_lines, KEEP_LINES)
        self.clock = clock
        self.tick_s = tick_s
        self._calls: deque[ToolCallRecord] = deque()
        self._by_key: dict[tuple[str, str], ToolCallRecord] = {}
        self._live: dict[tuple[str, str], ToolCallRecord] = {}
        self._lines: list[tuple[ToolCallRecord, int]] = []
        self._layout_dirty = False
        self._cache: LRUCache[tuple[Any, ...], Strip] = LRUCache(1024)
        self._ticker: Timer | None = None
        self._hook_runs = 0

    # -- public state ---------------------------------------------------------------------
    @property
    def calls(self) -> list[ToolCallRecord]:
        """The calls kept, oldest first."""
        return list(self._calls)

    @property
    def running_count(self) -> int:
        """How many calls are running."""
        return len(self._live)

    @property
    def ticking(self) -> bool:
        """Whether the elapsed-time timer is active."""
        return self._ticker is not None

    def line_texts(self) -> list[str]:
        """The plain text of every line (visible or not), as it would render now."""
        self._ensure_layout()
        width = max(self.scrollable_content_region.width, 20)
        return [self._line_strip(i, width).text.rstrip() for i in range(len(self._lines))]

    def clear(self) -> None:
        """Forget every call."""
        self._calls.clear()
        self._by_key.clear()
        self._live.clear()
        self._cache.clear()
        self._mark_layout()
        self._update_ticker()

    def load_calls(self, calls: list[Any]) -> None:
        """Show a stored conversation's calls (``engine.stored_calls.StoredCall``, oldest
        first) as they ended, in place of what is listed."""
        self.clear()
        for stored in calls[-self.max_calls :]:
            record = self._record(
                stored.turn_id,
                stored.call_id,
                stored.name,
                stored.role,
                stored.job_id,
                stored.arguments,
                state=call_state(
                    finished=True,
                    ok=stored.ok,
                    cancelled=stored.cancelled or not stored.finished,
                    metadata=stored.metadata,
                ),
                exit=exit_label(stored.metadata),
                duration_s=stored.duration_s,
            )
            old = self._by_key.pop(record.key, None)
            if old is not None:
                self._calls.remove(old)
            self._calls.append(record)
            self._by_key[record.key] = record
        self._mark_layout()

    # -- events ---------------------------------------------------------------------------
    def handle_event(self, event: ev.Event) -> None:
        """Follow tool calls; every other event is ignored."""
        if isinstance(event, ev.ToolCallStarted):
            self._started(event)
        elif isinstance(event, ev.ToolOutputDelta):
            record = self._live.get((event.turn_id, event.call_id))
            if record is not None:
                before = len(record.tail_lines(self.tail_size))
                record.add_output(event.text)
                if len(record.tail_lines(self.tail_size)) != before:
                    self._mark_layout()
                else:
                    self.refresh()
        elif isinstance(event, ev.ToolCallFinished):
            self._finished(event)
        elif isinstance(event, ev.HookRun):
            self._hook_ran(event)
        elif isinstance(event, ev.TurnFinished):
            self._turn_ended(event)
        elif isinstance(event, ev.ConversationChanged):
            self.clear()

    def _record(
        self,
        turn_id: str,
        call_id: str,
        name: str,
        role: str,
        job_id: str | None,
        arguments: Any,
        **ended: Any,
    ) -> ToolCallRecord:
        """A row for one call, live or stored (``ended``: how a stored call ended)."""
        return ToolCallRecord(
            key=(turn_id, call_id),
            call_id=call_id,
            name=visible(name),
            role=role,
            job_id=job_id,
            argument=key_argument(name, arguments),
            started=self.clock(),
            output=OutputTail(self.tail_size),
            **ended,
        )

    def _started(self, event: ev.ToolCallStarted) -> None:
        record = self._record(
            event.turn_id, event.call_id, event.name, event.role, event.job_id, event.arguments
        )
        key = record.key
        old = self._by_key.pop(key, None)
        if old is not None:
            self._calls.remove(old)
            self._live.pop(key, None)
        self._calls.append(record)
        self._by_key[key] = record
        self._live[key] = record
        while len(self._calls) > self.max_calls:
            dropped = self._calls.popleft()
            self._by_key.pop(dropped.key, None)
            self._live.pop(dropped.key, None)
        self._mark_layout()
        self._update_ticker()

    def _finished(self, event: ev.ToolCallFinished) -> None:
        record = self._by_key.get((event.turn_id, event.call_id))
        if record is None:
            return
        record.state = call_state(
            finished=True, ok=event.ok, cancelled=event.cancelled, metadata=event.metadata
        )
        record.exit = exit_label(event.metadata)
        record.duration_s = event.duration_s
        record.summary = event.error or event.summary
        record.version += 1
        self._live.pop(record.key, None)
        self._mark_layout()
        self._update_ticker()

    def _hook_ran(self, event: ev.HookRun) -> None:
        """A hook run: one ended row, ``hook <event>``, its outcome and command."""
        self._hook_runs += 1
        record = ToolCallRecord(
            key=(event.turn_id or "", f"hook-{self._hook_runs}"),
            call_id=f"hook-{self._hook_runs}",
            name=visible(f"hook {event.event}"),
            role=event.role,
            job_id=event.job_id,
            argument=visible(f"{event.outcome}: {event.command}"),
            started=self.clock(),
            state=_HOOK_STATES.get(event.outcome, "error"),
            duration_s=event.duration_s,
            summary=visible(event.message),
            exit=f"exit {event.exit_code}" if event.exit_code not in (0, 2, None) else "",
        )
        self._calls.append(record)
        self._by_key[record.key] = record
        while len(self._calls) > self.max_calls:
            self._by_key.pop(self._calls.popleft().key, None)
        self._mark_layout()

    def _turn_ended(self, event: ev.TurnFinished) -> None:
        """Calls of a turn that ended without their result are shown as cancelled/failed."""
        stale = [r for r in self._live.values() if r.key[0] == event.turn_id]
        for record in stale:
            record.state = "cancelled" if event.stop_reason == "cancelled" else "error"
            record.duration_s = self.clock() - record.started
            record.version += 1
            self._live.pop(record.key, None)
        if stale:
            self._mark_layout()
            self._update_ticker()

    # -- timer ----------------------------------------------------------------------------
    def _update_ticker(self) -> None:
        if self._live and self._ticker is None and self.is_attached:
            self._ticker = self.set_interval(self.tick_s, self._tick, name="activity-elapsed")
        elif not self._live and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def on_mount(self) -> None:
        """Start ticking if calls arrived before the pane was mounted."""
        self._update_ticker()

    def _tick(self) -> None:
        if not self._live:
            self._update_ticker()
            return
        self.refresh()

    # -- layout and rendering -------------------------------------------------------------
    def _mark_layout(self) -> None:
        """Lines were added or removed: lay out once after the current batch of events."""
        if not self._layout_dirty:
            self._layout_dirty = True
            self.call_later(self._ensure_layout)

    def _ensure_layout(self) -> None:
        if not self._layout_dirty:
            return
        follow = self.scroll_y >= self.max_scroll_y
        lines: list[tuple[ToolCallRecord, int]] = []
        for record in self._calls:
            lines.append((record, -1))
            if record.state == "running":
                count = len(record.tail_lines(self.tail_size))
                lines.extend((record, i) for i in range(count))
        self._lines = lines
        self._layout_dirty = False
        self.virtual_size = Size(self.scrollable_content_region.width, max(len(lines), 1))
        if follow:
            self.scroll_end(animate=False, immediate=False, x_axis=False)
        self.refresh()

    def on_resize(self) -> None:
        """Re-fit the lines to the new width."""
        self._cache.clear()
        self._layout_dirty = False
        self._mark_layout()

    def notify_style_update(self) -> None:
        """Forget rendered lines when the theme or CSS changes."""
        super().notify_style_update()
        self._cache.clear()

    def render_line(self, y: int) -> Strip:
        """Render line ``y`` of the visible area."""
        width = self.scrollable_content_region.width
        index = int(self.scroll_y) + y
        if not self._calls and y == 0:
            style = self.get_component_rich_style("tool-activity--empty")
            return Strip([Segment(_fit("no tool calls yet", width), style)]).extend_cell_length(
                width, self.rich_style
            )
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        return self._line_strip(index, width)

    def _line_strip(self, index: int, width: int) -> Strip:
        record, sub = self._lines[index]
        elapsed = ""
        if sub < 0:
            if record.state == "running":
                elapsed = format_duration(self.clock() - record.started)
            else:
                elapsed = format_duration(record.duration_s or 0.0)
        cache_key = (record.key, record.version, sub, width, elapsed)
        strip = self._cache.get(cache_key)
        if strip is None:
            if sub < 0:
                segments = self._header_segments(record, width, elapsed)
            else:
                segments = self._tail_segments(record, sub, width)
            strip = Strip(segments).crop_extend(0, width, self.rich_style)
            self._cache[cache_key] = strip
        return strip

    def _header_segments(self, record: ToolCallRecord, width: int, elapsed: str) -> list[Segment]:
        base = self.rich_style
        state_style = self.get_component_rich_style(f"tool-activity--{record.state}")
        alias, tint = role_display(record.role)
        alias_style = Style(bold=True, color=tint) if tint else Style(bold=True)
        exit_text = f" {record.exit}" if record.exit else ""
        right = f" {elapsed}"
        head = [
            (f"{_MARKS[record.state]} ", state_style),
            (f"{alias} ", alias_style),
            (record.name, self.get_component_rich_style("tool-activity--tool")),
        ]
        used = sum(cell_len(text) for text, _ in head)
        room = width - used - cell_len(right) - cell_len(exit_text)
        segments = [Segment(text, base + style) for text, style in head]
        if room < 0:
            return segments
        if record.argument and room > 2:
            argument = _fit(record.argument, room - 1)
            arg_style = self.get_component_rich_style("tool-activity--argument")
            segments.append(Segment(" " + argument, base + arg_style))
            room -= 1 + cell_len(argument)
        segments.append(Segment(" " * room, base))
        if exit_text:
            segments.append(Segment(exit_text, base + state_style))
        segments.append(
            Segment(right, base + self.get_component_rich_style("tool-activity--elapsed"))
        )
        return segments

    def _tail_segments(self, record: ToolCallRecord, sub: int, width: int) -> list[Segment]:
        lines = record.tail_lines(self.tail_size)
        text = lines[sub] if sub < len(lines) else ""
        style = self.rich_style + self.get_component_rich_style("tool-activity--tail")
        if text.startswith(CUT_MARK):  # a line cut to its end shows its end
            return [Segment("  │ " + _fit_end(text, width - 4), style)]
        return [Segment(_fit("  │ " + text, width), style)]

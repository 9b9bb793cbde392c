"""A tool call on one line; click or Enter shows its full result.

While the call runs, the last lines of its output show under the line
(:class:`ToolOutputLines`, one small widget that goes when the call ends).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from smith_tui.engine.presentation import format_duration, key_argument
from smith_tui.terminal_text import visible
from smith_tui.widgets.output_tail import CUT_MARK
from smith_tui.widgets.tool_outcome import CallState, call_state, exit_label
from smith_tui.widgets.transcript.diff_view import DiffView, change_lines
from smith_tui.widgets.transcript.entries import ToolEntry

#: Lines of a running call's output shown under its line.
TAIL_LINES = 3


def entry_state(entry: ToolEntry) -> CallState:
    """Running, ok, error (a non-zero exit too) or cancelled."""
    return call_state(
        finished=entry.finished,
        ok=entry.ok,
        cancelled=bool(entry.metadata.get("cancelled")),
        metadata=entry.metadata,
    )


def status_mark(entry: ToolEntry) -> tuple[str, str]:
    """The mark and its style: running, ok, error (``✗ exit 1`` for a command that exited
    non-zero) or cancelled."""
    state = entry_state(entry)
    if state == "running":
        return "…", "dim"
    if state == "cancelled":
        return "⊘", "yellow"
    if state == "error":
        label = exit_label(entry.metadata)
        return (f"✗ {label}" if label else "✗"), "bold red"
    return "✓", "green"


def change_counts(entry: ToolEntry) -> tuple[int | None, int | None]:
    """Lines an ``edit``/``write`` added and removed (from its diff metadata), if known."""
    if not entry.finished:
        return None, None
    added, removed = entry.metadata.get("diff_added"), entry.metadata.get("diff_removed")
    if isinstance(added, int) and isinstance(removed, int):
        return added, removed
    return None, None


class ToolCallLine(Widget):
    """``▸ name  key argument …  1.2s ✓`` fitted to the width."""

    DEFAULT_CSS = """
    ToolCallLine {
        height: 1;
    }
    """

    def __init__(self, entry: ToolEntry) -> None:
        super().__init__()
        self.entry = entry

    def render(self) -> Text:
        """Build the line for the current width."""
        entry = self.entry
        mark, mark_style = status_mark(entry)
        right = Text()
        added, removed = change_counts(entry)
        if added is not None and removed is not None:
            right.append(f"+{added}", style="green")
            right.append(f" −{removed}  ", style="red")
        duration = format_duration(entry.duration_s) if entry.finished else ""
        if duration:
            right.append(duration + " ", style="dim")
        right.append(mark, style=mark_style)
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("▾ " if entry.expanded else "▸ ", style="dim")
        line.append(visible(entry.name), style="bold")
        argument = key_argument(entry.name, entry.arguments)
        room = self.size.width - line.cell_len - right.cell_len - 4
        if argument and room > 1:
            shown = argument if len(argument) <= room else argument[: room - 1] + "…"
            line.append("  ")
            line.append(shown, style="dim")
        line.append(" " * max(2, self.size.width - line.cell_len - right.cell_len))
        line.append_text(right)
        return line


class ToolOutputLines(Widget):
    """The last :data:`TAIL_LINES` lines of a running call's output, each fitted to the
    width (a line cut to its end shows its end)."""

    DEFAULT_CSS = """
    ToolOutputLines {
        height: auto;
        padding: 0 0 0 2;
        color: $text-muted;
        text-style: italic;
    }
    """

    def __init__(self, entry: ToolEntry) -> None:
        super().__init__()
        self.entry = entry

    def lines(self) -> list[str]:
        """The lines shown, oldest first."""
        tail = self.entry.output
        return tail.lines()[-TAIL_LINES:] if tail is not None else []

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        """One row per line shown."""
        return len(self.lines())

    def render(self) -> Text:
        """``│ line`` per line, cut to the width."""
        width = max(self.size.width - 2, 1)
        out = Text(no_wrap=True, overflow="ellipsis")
        for n, line in enumerate(self.lines()):
            if n:
                out.append("\n")
            if line.startswith(CUT_MARK) and len(line) > width:
                line = CUT_MARK + line[-(width - 1) :]
            out.append("│ " + line)
        return out


class ToolCallEntry(Vertical, can_focus=True):
    """A compact tool-call line that expands to the full result."""

    DEFAULT_CSS = """
    ToolCallEntry {
        height: auto;
    }
    ToolCallEntry > .tool-result {
        display: none;
        height: auto;
    }
    ToolCallEntry.-expanded > .tool-result {
        display: block;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_result", "Show result", show=False)
    ]

    expanded: reactive[bool] = reactive(False)
    """Whether the full result is shown."""

    def __init__(self, entry: ToolEntry) -> None:
        super().__init__()
        self.entry = entry
        self.line = ToolCallLine(entry)
        self._result: Vertical | None = None
        self._tail: ToolOutputLines | None = None
        self.set_reactive(ToolCallEntry.expanded, entry.expanded)

    def compose(self) -> ComposeResult:
        """The line (and the output so far, while running); the result is built on first
        expansion."""
        yield self.line
        if not self.entry.finished and self.entry.output is not None:
            self._tail = ToolOutputLines(self.entry)
            yield self._tail

    def output_changed(self) -> None:
        """The running call printed more: show its newest lines."""
        if not self.is_attached or self.entry.finished:
            return
        if self._tail is None:
            if self.line.parent is None:
                return  # not composed yet: composing adds the lines
            self._tail = ToolOutputLines(self.entry)
            self.mount(self._tail, after=self.line)
        elif self._tail.size.height != len(self._tail.lines()):
            self._tail.refresh(layout=True)
        else:
            self._tail.refresh()  # same height: no layout of the transcript

    def finish(
        self,
        ok: bool,
        duration_s: float | None,
        summary: str,
        content: str,
        metadata: dict[str, Any] | None,
    ) -> None:
        """Record the outcome of the call."""
        entry = self.entry
        entry.finished = True
        entry.ok = ok
        entry.duration_s = duration_s
        entry.summary = summary
        entry.content = content
        entry.metadata = dict(metadata or {})
        entry.output = None
        if not self.is_attached:
            return
        if self._tail is not None:
            self._tail.remove()
            self._tail = None
        self.set_class(entry_state(entry) == "error", "-error")
        if self._result is not None:
            self._result.remove()
            self._result = None
            if self.expanded:
                self._show_result()
        self.line.refresh()

    def on_mount(self) -> None:
        """Style failed calls; show the result of a call rebuilt expanded."""
        self.set_class(entry_state(self.entry) == "error", "-error")
        if self.expanded:
            self.watch_expanded(True)

    def action_toggle_result(self) -> None:
        """Show or hide the full result."""
        self.expanded = not self.expanded

    def on_click(self, event: events.Click) -> None:
        """A click on the line toggles the result (clicks in the result do not)."""
        if event.widget is self.line or event.widget is self:
            self.expanded = not self.expanded

    def watch_expanded(self, expanded: bool) -> None:
        """Build the result view on demand."""
        self.entry.expanded = expanded
        self.line.refresh()
        if expanded and self._result is None:
            self._show_result()
        self.set_class(expanded, "-expanded")

    def result_text(self) -> str:
        """The plain text the expanded view shows (for tests and copying)."""
        entry = self.entry
        if not entry.finished:
            return "(still running)"
        return entry.content or entry.summary or "(no output)"

    def _show_result(self) -> None:
        entry = self.entry
        children: list[Widget] = []
        lines = change_lines(entry) if entry.finished else None
        if lines is not None:
            children.append(DiffView(lines))
        else:
            children.append(
                Static(Text(visible(self.result_text())), markup=False, classes="tool-output")
            )
        self._result = Vertical(*children, classes="tool-result")
        self.mount(self._result)

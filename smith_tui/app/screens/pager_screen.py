"""The transcript pager (alt+h): the whole conversation, un-elided, read-only, searchable.

The text lives in one :class:`TextPager`, which draws only the visible rows, so long
conversations open quickly. Find highlights every match and moves through them (enter /
f3 / n for the next, shift+enter / shift+f3 / N for the previous); case is ignored.
``o`` (ctrl+o) opens the transcript of the sub-agent a ``dispatch`` call in view started.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input, Static

from smith_tui.app.screens.modal import SmithModal
from smith_tui.engine.persistence import message_dict
from smith_tui.engine.transcript_text import HEADING_PREFIX, transcript_text
from smith_tui.widgets.text_pager import TextPager

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

_DISPATCH_CALL = re.compile(r"^→ dispatch .*  \[([^\]]+)\]$")
"""A ``dispatch`` call's line in the text (see ``message_text``)."""
_DISPATCH_RESULT = re.compile(r"^── (?:#\d+ )?tool dispatch \[([^\]]+)\]")
"""The header of a ``dispatch`` result."""


class PagerScreen(SmithModal):
    """Read the whole transcript of the active conversation."""

    AUTO_FOCUS = "#pager-text"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("slash", "focus_find", "Find"),
        Binding("f3,n", "find(1)", "Next"),
        Binding("shift+f3,N", "find(-1)", "Previous"),
        Binding("c", "copy", "Copy selection"),
        Binding("o,ctrl+o", "open_child", "Sub-agent"),
    ]

    def __init__(
        self,
        runtime: Runtime,
        *,
        messages: Sequence[Mapping[str, Any]] | None = None,
        at_position: int | None = None,
        find: str = "",
        job_id: str | None = None,
    ) -> None:
        """The pager on ``messages`` (default: the active conversation's; ``job_id``: the
        sub-agent job they are of); ``at_position`` opens it at that stored message with
        the first match of ``find`` in it current (a ``/search`` hit)."""
        super().__init__()
        self.runtime = runtime
        self.job_id = job_id
        self._messages = messages
        self.at_position = at_position
        self.find_text = find
        self.query_text = ""

    def compose(self) -> ComposeResult:
        """Find bar, match counter, the text."""
        with Vertical(id="pager-dialog") as dialog:
            dialog.border_title = "Transcript"
            with Horizontal(id="pager-find-row"):
                yield Input(
                    placeholder="find… (enter: next, shift+enter: previous)", id="pager-find"
                )
                yield Static("", id="pager-count", markup=False)
            yield TextPager(id="pager-text", heading_prefix=HEADING_PREFIX)
        yield Footer()

    def on_mount(self) -> None:
        """Render the transcript (at the message asked for, once laid out)."""
        self.pager.load_text(transcript_text(self.messages))
        if self.at_position is not None:
            self.call_after_refresh(self.go_to_message, self.at_position, self.find_text)

    @property
    def messages(self) -> list[Mapping[str, Any]]:
        """The messages shown: those given, else the active conversation's; while a turn
        runs, from the store (its rounds so far are stored, the session's list gets them
        when the turn ends)."""
        if self._messages is not None:
            return list(self._messages)
        runtime = self.runtime
        if getattr(runtime, "busy", False) and runtime.conversation_id:
            stored = runtime.store.conversations.list_messages(runtime.conversation_id)
            return [dict(message_dict(message)) for message in stored]
        return list(runtime.messages)

    def message_lines(self, position: int) -> tuple[int, int] | None:
        """The first and past-the-last text line of stored message ``position``."""
        lines = self.pager.lines
        head = f"{HEADING_PREFIX}#{position} "
        start = next((n for n, line in enumerate(lines) if line.startswith(head)), None)
        if start is None:
            return None
        end = next(
            (n for n in range(start + 1, len(lines)) if lines[n].startswith(HEADING_PREFIX + "#")),
            len(lines),
        )
        return start, end

    def go_to_message(self, position: int, find: str = "") -> None:
        """Scroll to message ``position``; with ``find``, its first match there is current
        (every match highlighted, n/N move on from it)."""
        span = self.message_lines(position)
        if span is None:
            self.notify(f"Message #{position} is not in this transcript.", severity="warning")
            return
        pager = self.pager
        if find and pager.find(find):
            inside = [i for i, m in enumerate(pager.matches) if span[0] <= m.line < span[1]]
            if inside:
                self.query_text = find
                pager.current_index = inside[0] - 1
                pager.find_next(1)
                self._show_count()
            else:
                pager.find("")
        if pager.current_match is None or not span[0] <= pager.current_match.line < span[1]:
            pager.scroll_to(y=pager.row_of(span[0]), animate=False)

    def dispatch_in_view(self) -> str | None:
        """The call id of the ``dispatch`` call to open: the first one on screen, else the
        nearest above, else the nearest below; ``None`` when the text has none."""
        pager = self.pager
        calls = []
        for number, line in enumerate(pager.lines):
            found = _DISPATCH_CALL.match(line) or _DISPATCH_RESULT.match(line)
            if found:
                calls.append((pager.row_of(number), found.group(1)))
        if not calls:
            return None
        top, height = int(pager.scroll_y), pager.scrollable_content_region.height
        shown = [call for row, call in calls if top <= row < top + height]
        above = [call for row, call in calls if row < top]
        return (shown or above[-1:] or [calls[0][1]])[0]

    def action_open_child(self) -> None:
        """``o``: the transcript of the sub-agent the ``dispatch`` call in view started
        (live while it runs, from the store after)."""
        from smith_tui.app.screens.child_transcript import open_child

        call_id = self.dispatch_in_view()
        if call_id is None:
            self.notify("No sub-agent was dispatched in this transcript.", timeout=3)
            return
        open_child(self, self.runtime, call_id, self.messages, self.job_id)

    @property
    def pager(self) -> TextPager:
        """The text view."""
        return self.query_one("#pager-text", TextPager)

    # -- find -----------------------------------------------------------------------------

    def action_close(self) -> None:
        """Escape: clear the find box first (back to reading), close when it is empty."""
        find = self.query_one("#pager-find", Input)
        if find.value or self.focused is find:
            find.value = ""
            self.search("")
            self.pager.focus()
            return
        if self.pager.text_selection is not None:
            self.clear_selection()
            return
        super().action_close()

    def action_copy(self) -> None:
        """Copy the selected text (shift+down / shift+up select rows, or the mouse)."""
        text = self.pager.selected_text or self.get_selected_text() or ""
        if not text:
            self.notify("Select lines first: shift+down / shift+up (or drag with the mouse).")
            return
        self.app.copy_to_clipboard(text)
        lines = len(text.splitlines())
        self.notify(f"Copied {lines} line{'s' if lines != 1 else ''} to the clipboard.")

    def action_focus_find(self) -> None:
        """Put the cursor in the find box."""
        self.query_one("#pager-find", Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        """Search as the query is typed."""
        event.stop()
        self.search(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter: the next match."""
        event.stop()
        self.action_find(1)

    def on_key(self, event: Any) -> None:
        """shift+enter in the find box: the previous match."""
        if event.key == "shift+enter" and self.focused is self.query_one("#pager-find", Input):
            event.stop()
            event.prevent_default()
            self.action_find(-1)

    def search(self, query: str) -> None:
        """Highlight every match of ``query`` and go to the first one."""
        self.query_text = query
        if self.pager.find(query):
            self.pager.find_next(1)
        self._show_count()

    def action_find(self, step: int) -> None:
        """Go to the next (``step`` 1) or previous (-1) match, wrapping around."""
        if not self.query_text:
            self.action_focus_find()
            return
        self.pager.find_next(step)
        self._show_count()

    def _show_count(self) -> None:
        count = self.query_one("#pager-count", Static)
        pager = self.pager
        if not self.query_text:
            count.update("")
        elif not pager.matches:
            count.update("no matches")
        else:
            count.update(f"{pager.current_index + 1} of {len(pager.matches)}")

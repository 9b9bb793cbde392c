"""The transcript pager (alt+h): the whole conversation, un-elided, read-only, searchable.

The text lives in one read-only ``TextArea``, which draws only the visible lines, so
long conversations stay cheap. Find selects each match in turn (enter / f3 / n for the
next, shift+enter / shift+f3 / N for the previous); case is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input, Static, TextArea
from textual.widgets.text_area import Selection

from smith_tui.app.screens.modal import SmithModal
from smith_tui.app.screens.transcript_text import transcript_text


def find_all(text: str, needle: str) -> list[int]:
    """Start offsets of every (case-insensitive, non-overlapping) occurrence of ``needle``."""
    if not needle:
        return []
    haystack, needle = text.casefold(), needle.casefold()
    if len(haystack) != len(text):  # casefold changed lengths (ß → ss): fall back to lower()
        haystack, needle = text.lower(), needle.lower()
    found: list[int] = []
    start = haystack.find(needle)
    while start >= 0:
        found.append(start)
        start = haystack.find(needle, start + len(needle))
    return found


class PagerScreen(SmithModal):
    """Read the whole transcript of the active conversation."""

    AUTO_FOCUS = "#pager-text"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("slash", "focus_find", "Find"),
        Binding("f3,n", "find(1)", "Next"),
        Binding("shift+f3,N", "find(-1)", "Previous"),
    ]

    def __init__(
        self, runtime: Any, *, messages: Sequence[Mapping[str, Any]] | None = None
    ) -> None:
        super().__init__()
        self.runtime = runtime
        self._messages = messages
        self.text = ""
        self.matches: list[int] = []
        self.match_index = -1
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
            yield TextArea(
                id="pager-text",
                read_only=True,
                soft_wrap=True,
            )
        yield Footer()

    def on_mount(self) -> None:
        """Render the transcript."""
        messages = self._messages if self._messages is not None else self.runtime.messages
        self.text = transcript_text(list(messages))
        area = self.query_one("#pager-text", TextArea)
        area.cursor_blink = False  # a steady cursor marks the reading position
        area.load_text(self.text)

    # -- find -----------------------------------------------------------------------------

    def action_focus_find(self) -> None:
        """Put the cursor in the find box."""
        self.query_one("#pager-find", Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        """Search as the query is typed; jump to the first match at or after the view."""
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
        """Find every match of ``query`` and select the first one."""
        self.query_text = query
        self.matches = find_all(self.text, query)
        self.match_index = -1
        if self.matches:
            self.action_find(1)
        else:
            self._clear_selection()
            self._show_count()

    def action_find(self, step: int) -> None:
        """Select the next (``step`` 1) or previous (-1) match, wrapping around."""
        if not self.matches:
            if self.query_text:
                self._show_count()
            else:
                self.action_focus_find()
            return
        self.match_index = (self.match_index + step) % len(self.matches)
        start = self.matches[self.match_index]
        self._select(start, start + len(self.query_text))
        self._show_count()

    def _select(self, start: int, end: int) -> None:
        area = self.query_one("#pager-text", TextArea)
        document = area.document
        area.selection = Selection(
            document.get_location_from_index(start), document.get_location_from_index(end)
        )
        area.scroll_cursor_visible(center=True, animate=False)

    def _clear_selection(self) -> None:
        area = self.query_one("#pager-text", TextArea)
        area.selection = Selection.cursor(area.selection.end)

    def _show_count(self) -> None:
        count = self.query_one("#pager-count", Static)
        if not self.query_text:
            count.update("")
        elif not self.matches:
            count.update("no matches")
        else:
            count.update(f"{self.match_index + 1} of {len(self.matches)}")

    @property
    def selected_text(self) -> str:
        """The text currently selected (the current match while searching)."""
        return self.query_one("#pager-text", TextArea).selected_text

"""A read-only, virtualised view of a long text: wrapped rows drawn on demand, with find.

Only the visible rows are rendered (line API), so a transcript of tens of thousands of
lines opens quickly. Find highlights every match and marks the current one; the view
scrolls to keep the current match in the middle. Mouse selection and copy work as in
Textual's ``Log``; shift+down / shift+up select whole rows from the keyboard.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import ClassVar, NamedTuple

from rich.cells import cell_len, chop_cells
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Offset, Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip

from smith_tui.terminal_text import visible

TAB_SIZE = 4


class TextMatch(NamedTuple):
    """One find match: source line and character offsets within it."""

    line: int
    start: int
    end: int


def clean_line(line: str) -> str:
    """Tabs expanded and control characters made visible (see :func:`visible`)."""
    if "\t" in line:
        line = line.expandtabs(TAB_SIZE)
    return visible(line)


def wrap_offsets(line: str, width: int) -> list[tuple[int, int]]:
    """``(start, end)`` character ranges of ``line`` as rows of at most ``width`` cells.

    ASCII lines break after the last space of a row when there is one in its second
    half, else mid-word; other lines are cut by cell width.
    """
    if width <= 0:
        return [(0, len(line))]
    if line.isascii():
        if len(line) <= width:
            return [(0, len(line))]
        rows: list[tuple[int, int]] = []
        start = 0
        while len(line) - start > width:
            cut = line.rfind(" ", start + width // 2, start + width)
            end = cut + 1 if cut >= 0 else start + width
            rows.append((start, end))
            start = end
        rows.append((start, len(line)))
        return rows
    if cell_len(line) <= width:
        return [(0, len(line))]
    rows = []
    start = 0
    for piece in chop_cells(line, width):
        rows.append((start, start + len(piece)))
        start += len(piece)
    return rows or [(0, 0)]


def find_in_lines(lines: list[str], query: str) -> list[TextMatch]:
    """Every case-insensitive, non-overlapping match of ``query``, in reading order."""
    if not query:
        return []
    needle = query.casefold()
    found: list[TextMatch] = []
    for number, line in enumerate(lines):
        haystack = line.casefold()
        probe = needle
        if len(haystack) != len(line):  # casefold changed lengths (ß → ss)
            haystack, probe = line.lower(), query.lower()
        start = haystack.find(probe)
        while start >= 0 and probe:
            found.append(TextMatch(number, start, start + len(probe)))
            start = haystack.find(probe, start + len(probe))
    return found


class TextPager(ScrollView, can_focus=True):
    """Read-only text, soft-wrapped to the width, with find and highlighted matches."""

    ALLOW_SELECT = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("shift+down", "select_rows(1)", "Select down", show=False),
        Binding("shift+up", "select_rows(-1)", "Select up", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "text-pager--heading",
        "text-pager--match",
        "text-pager--current",
    }
    DEFAULT_CSS = """
    TextPager {
        background: $surface;
        color: $text;
        overflow-x: hidden;
        overflow-y: scroll;
        &:focus { background-tint: $foreground 5%; }
        & > .text-pager--heading { color: $accent; text-style: bold; }
        & > .text-pager--match { background: $warning 35%; }
        & > .text-pager--current { background: $warning; color: $background; text-style: bold; }
    }
    """

    def __init__(
        self,
        text: str = "",
        *,
        heading_prefix: str | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.heading_prefix = heading_prefix
        """Lines starting with this are drawn as headings."""
        self.lines: list[str] = []
        self._rows: list[tuple[int, int, int]] = []
        self._first_row: list[int] = []
        self._wrap_width = 0
        self.matches: list[TextMatch] = []
        self._matches_by_line: dict[int, list[int]] = {}
        self.current_index = -1
        self._select_anchor = 0
        self._select_cursor = 0
        self.load_text(text)

    # -- content --------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The text shown (tabs expanded, control characters replaced)."""
        return "\n".join(self.lines)

    def load_text(self, text: str) -> None:
        """Replace the text; clears find."""
        # Shown before the split, so a "\r\n" line end is a line end.
        self.lines = [clean_line(line) for line in visible(text).split("\n")]
        self.matches = []
        self._matches_by_line = {}
        self.current_index = -1
        self._wrap_width = 0
        self._rewrap()
        self.scroll_to(0, 0, animate=False)

    def _width(self) -> int:
        width = self.scrollable_content_region.width if self.is_mounted else 0
        return width if width > 0 else 80

    def _rewrap(self) -> None:
        width = self._width()
        rows: list[tuple[int, int, int]] = []
        first_row: list[int] = []
        for number, line in enumerate(self.lines):
            first_row.append(len(rows))
            rows.extend((number, start, end) for start, end in wrap_offsets(line, width))
        self._rows = rows
        self._first_row = first_row
        self._wrap_width = width
        self.virtual_size = Size(width, len(rows))
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        """Wrap again for a new width, keeping the top line in view."""
        if self._width() == self._wrap_width:
            return
        top = self._rows[int(self.scroll_y)][0] if self._rows else 0
        self._rewrap()
        self.scroll_to(y=self._first_row[top] if self._first_row else 0, animate=False)

    @property
    def row_count(self) -> int:
        """How many rows the wrapped text takes."""
        return len(self._rows)

    def row_of(self, line: int, column: int = 0) -> int:
        """The row showing character ``column`` of source ``line``."""
        first = self._first_row[line]
        last = self._first_row[line + 1] if line + 1 < len(self._first_row) else len(self._rows)
        starts = [self._rows[row][1] for row in range(first, last)]
        return first + max(0, bisect_right(starts, column) - 1)

    # -- find -----------------------------------------------------------------------------

    def find(self, query: str) -> int:
        """Highlight every match of ``query`` (case ignored); returns how many there are."""
        self.matches = find_in_lines(self.lines, query)
        self._matches_by_line = {}
        for index, match in enumerate(self.matches):
            self._matches_by_line.setdefault(match.line, []).append(index)
        self.current_index = -1
        self.refresh()
        return len(self.matches)

    def find_next(self, step: int = 1) -> TextMatch | None:
        """Make the next (``step`` 1) or previous (-1) match current, wrapping; scroll to it."""
        if not self.matches:
            return None
        self.current_index = (self.current_index + step) % len(self.matches)
        match = self.matches[self.current_index]
        row = self.row_of(match.line, match.start)
        self.scroll_to(y=max(0, row - self.scrollable_content_region.height // 2), animate=False)
        self.refresh()
        return match

    @property
    def current_match(self) -> TextMatch | None:
        """The current match, if any."""
        if 0 <= self.current_index < len(self.matches):
            return self.matches[self.current_index]
        return None

    @property
    def current_text(self) -> str:
        """The text of the current match ("" when there is none)."""
        match = self.current_match
        return self.lines[match.line][match.start : match.end] if match else ""

    # -- rendering ------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        """Draw one visible row."""
        width = self.scrollable_content_region.width
        base = self.rich_style
        index = int(self.scroll_y) + y
        if index >= len(self._rows):
            return Strip.blank(width, base)
        number, start, end = self._rows[index]
        line = self.lines[number]
        text = Text(line[start:end], style=base, no_wrap=True, end="")
        if self.heading_prefix and line.startswith(self.heading_prefix):
            text.stylize(self.get_component_rich_style("text-pager--heading"))
        for match_index in self._matches_by_line.get(number, ()):
            match = self.matches[match_index]
            lo, hi = max(match.start, start), min(match.end, end)
            if lo < hi:
                name = (
                    "text-pager--current"
                    if match_index == self.current_index
                    else "text-pager--match"
                )
                text.stylize(self.get_component_rich_style(name), lo - start, hi - start)
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(index)) is not None:
            lo, hi = span
            hi = len(text) if hi == -1 else hi
            text.stylize(self.screen.get_component_rich_style("screen--selection"), lo, hi)
        strip = Strip(text.render(self.app.console), text.cell_len)
        return strip.crop_extend(0, width, base).apply_offsets(0, index)

    # -- keyboard selection -----------------------------------------------------------------

    def action_select_rows(self, step: int) -> None:
        """Select whole rows from the keyboard: the first press selects the current match's
        row (else the top row in view), the next ones grow or shrink the selection."""
        if not self._rows:
            return
        if self.text_selection is None:
            match = self.current_match
            row = self.row_of(match.line, match.start) if match else int(self.scroll_y)
            self._select_anchor = self._select_cursor = row
        else:
            last = len(self._rows) - 1
            self._select_cursor = max(0, min(last, self._select_cursor + step))
        lo, hi = sorted((self._select_anchor, self._select_cursor))
        self.screen.selections = {self: Selection(Offset(0, lo), Offset(0, hi + 1))}
        height = self.scrollable_content_region.height
        cursor = self._select_cursor
        if cursor < self.scroll_y:
            self.scroll_to(y=cursor, animate=False)
        elif cursor >= self.scroll_y + height:
            self.scroll_to(y=cursor - height + 1, animate=False)

    @property
    def selected_text(self) -> str:
        """The selected text (empty when nothing is selected)."""
        selection = self.text_selection
        extracted = self.get_selection(selection) if selection is not None else None
        return extracted[0] if extracted else ""

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text (rows as drawn)."""
        rows = "\n".join(self.lines[n][s:e] for n, s, e in self._rows)
        return selection.extract(rows), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        """Redraw the selection."""
        self.refresh()

"""Parts of a streamed answer drawn as lines, with no Markdown block widget mounted.

Mounting a part's blocks (styling, composing and laying out several widgets per part)
was most of what showing a streamed answer cost. While an answer streams, its parts are
instead :class:`LinePart` widgets that draw the lines :func:`line_markdown.part_lines`
computes from the styles of template blocks: a few small hidden parts (:class:`LineTemplates`)
mounted once per long answer, at the same place in the CSS tree, so every theme, focus and
style rule applies to them as to the real blocks and the lines match cell for cell.

A line part becomes real widgets when the pointer enters it (selection, links, copying
code need them) and, once the answer ends, when it is near the view (far ones are parked);
parts the templates cannot draw (a code block in a list item, for instance) are built as widgets from the start.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.app import ComposeResult
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from smith_tui.widgets.transcript.answer_parts import MarkdownPart, ParkedPart
from smith_tui.widgets.transcript.line_markdown import Templates, Unsupported, part_lines

#: Every kind of block that can open a part. A part's first block has its own styles (its
#: top margin depends on the part before, see StreamingMarkdown): one template part holds
#: them all, each tagged as a first block (no style rule depends on a block's position).
FIRST_BLOCKS = (
    "# a\n",
    "## a\n",
    "### a\n",
    "#### a\n",
    "##### a\n",
    "###### a\n",
    "a *b* **c** `d` ~~e~~ [f](g)\n",
    "- a\n- b\n",
    "1. a\n2. b\n",
    "- a\n  - b\n  1. c\n",
    "1. a\n   1. b\n   - c\n",
    "- a\n\n  b\n- c\n",
    "```python\nx = 1\n```\n",
    "| a | b |\n|---|---|\n| c | d |\n",
    "> a\n",
    "***\n",
)

#: Every kind of block once, after a first one: the styles of blocks inside a part.
CATALOG = "\n".join(("a\n", *FIRST_BLOCKS))

Draw = Callable[[str, int, bool], list[Strip]]


class _FirstBlocks(MarkdownPart):
    """A template part whose every block is tagged as a part's first block."""

    def mark_first_block(self) -> None:
        """Tag every block, not only the first."""
        for child in self.children:
            child.add_class("-first")


class LineTemplates(Widget):
    """Two hidden parts whose blocks lend their styles to the lines of :class:`LinePart`.

    Templates are those of a part that follows another: an answer's first part is frozen
    before the templates are mounted, so it is always built (drawing it raises Unsupported).
    """

    DEFAULT_CSS = """
    LineTemplates {
        display: none;
        height: auto;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._firsts = _FirstBlocks("\n".join(FIRST_BLOCKS), follows=True)
        self._catalog = MarkdownPart(CATALOG, follows=True)
        self.templates: Templates | None = None
        """The blocks' styles by path, once both template parts have rendered."""

    def compose(self) -> ComposeResult:
        """The template parts."""
        yield self._firsts
        yield self._catalog

    @property
    def ready(self) -> bool:
        """True once both template parts have rendered (their blocks are then indexed)."""
        if self.templates is None:
            if not (self._firsts.has_rendered and self._catalog.has_rendered):
                return False
            # A path is indexed from the first part holding it: each kind's ``-first``
            # block from the first part, the others from the catalog.
            self.templates = Templates([self._firsts, self._catalog])
        return True

    def draw(self, text: str, width: int, follows: bool) -> list[Strip]:
        """The lines of a part holding ``text`` (raises Unsupported before ready)."""
        if self.templates is None:
            raise Unsupported("templates not ready")
        if not follows:
            raise Unsupported("no templates for an answer's first part")
        return part_lines(self.templates, text, width)


class LinePart(ParkedPart):
    """A part of a streamed answer drawn from lines (it counts as a part not built).

    ``draw(text, width, follows)`` gives its lines; they are kept per width and drawn
    again when the text, the theme or the background below changes.
    """

    DEFAULT_CSS = """
    LinePart {
        height: auto;
    }
    """

    def __init__(self, text: str, lines: list[Strip], width: int, *, follows: bool, draw: Draw):
        super().__init__(text, len(lines), follows=follows)
        self._draw = draw
        self._shown = text
        """What the lines show: ``text``, or a growing part's finished lines (set_text)."""
        self._lines = lines
        self._width = width
        # What the lines were drawn for (width, theme, backgrounds below); None: drawn just
        # now at ``_width`` with today's styles, adopted on the next look.
        self._key: tuple[object, ...] | None = None
        self._stale = False
        self.on_enter_build: Callable[[LinePart], None] | None = None
        """Called when the pointer enters: the owner builds the part's widgets."""

    @classmethod
    def drawn(cls, text: str, width: int, *, follows: bool, draw: Draw) -> LinePart:
        """A part showing ``text`` at ``width`` (raises Unsupported)."""
        return cls(text, draw(text, width, follows), width, follows=follows, draw=draw)

    def set_text(self, text: str, *, follows: bool | None = None, growing: bool = False) -> None:
        """Show ``text`` instead (raises Unsupported, keeping what it showed).

        A ``growing`` part (the tail of a stream) whose last, unfinished line makes a
        block the templates lack (``  -`` under ``- x`` is a heading's underline in an
        item) shows its finished lines until that line goes on; it raises only if those
        fail too.
        """
        follows = self.follows if follows is None else follows
        if text == self.text and text == self._shown and follows == self.follows:
            return
        shown = text
        try:
            self._lines = self._draw(text, self._width, follows)
        except Unsupported:
            shown = text[: text.rfind("\n") + 1]
            if not growing or not shown:
                raise
            self._lines = self._draw(shown, self._width, follows)
        self.text, self._shown, self.follows = text, shown, follows
        self.parked_height = len(self._lines)
        self._key = None
        self.refresh(layout=True)

    def on_mount(self) -> None:
        """Draw again after a theme change (once the templates have restyled)."""
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        self.call_after_refresh(self._redraw)

    def _redraw(self) -> None:
        self._stale = True
        self.refresh(layout=True)

    def _lines_at(self, width: int) -> list[Strip]:
        if width <= 0:
            return self._lines
        key = (width, self.app.theme, *self.background_colors)
        if self._key is None and width == self._width and not self._stale:
            self._key = key
        elif key != self._key or self._stale:
            try:
                self._lines = self._draw(self._shown, width, self.follows)
            except Unsupported:
                pass  # keep the last lines; the owner builds widgets when it can
            self._width, self._key, self._stale = width, key, False
            self.parked_height = len(self._lines)
        return self._lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """As many rows as the lines at ``width``."""
        return len(self._lines_at(width))

    def render_lines(self, crop: Region) -> list[Strip]:
        """Check the lines are current once per paint, then draw as any widget."""
        self._lines_at(self.size.width)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the part."""
        lines = self._lines
        return lines[y] if 0 <= y < len(lines) else Strip.blank(self.size.width)

    def on_enter(self, _event: events.Enter) -> None:
        """The pointer is over the part: the owner builds its widgets."""
        if self.on_enter_build is not None:
            self.on_enter_build(self)

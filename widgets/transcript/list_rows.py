"""List rows drawn by one widget each.

Textual's Markdown builds every list item from four widgets (a row, its bullet, a column
and the paragraph in it). Most items of a model's answer are one paragraph, and every
widget on screen costs style matching when mounted and a visit on each layout, so long
lists were most of what a streamed answer mounted. A :class:`ListRow` draws the bullet
and the paragraph's text with a hanging indent itself; items holding anything else
(several paragraphs, a nested list, code) keep Textual's widgets.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from smith_tui.widgets.textual_compat import block_origin, pending_children

# Not exported by name; the public BLOCKS table has it.
_Paragraph = Markdown.BLOCKS["paragraph_open"]


class ListRow(_Paragraph):  # type: ignore[misc,valid-type]
    """A list item holding one paragraph: ``symbol`` then the text, wrapped under itself."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {*_Paragraph.COMPONENT_CLASSES, "list-row--bullet"}
    DEFAULT_CSS = """
    ListRow > .list-row--bullet {
        color: $text-primary;
    }
    ListRow:light > .list-row--bullet {
        color: $text-secondary;
    }
    """

    def __init__(self, paragraph: MarkdownBlock, symbol: str) -> None:
        markdown, token, text = block_origin(paragraph)
        super().__init__(markdown, token, paragraph.source_range)
        self.symbol = symbol
        self._text = text
        self._wrapped: tuple[int, list[Content]] | None = None
        self.set_content(text)

    def set_content(self, content: Content) -> None:
        """Show ``content`` after the bullet."""
        self._text = content
        self._wrapped = None
        super().set_content(content)

    def _lines(self, width: int) -> list[Content]:
        """The text wrapped to ``width`` minus the bullet (cached per width)."""
        if self._wrapped is None or self._wrapped[0] != width:
            text_width = max(1, width - cell_len(self.symbol))
            self._wrapped = (width, self._text.wrap(text_width) or [Content("")])
        return self._wrapped[1]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One row per wrapped line of the text."""
        return len(self._lines(width)) if width else 0

    def render(self) -> Content:
        """The bullet, then the text with its later lines indented under the first."""
        return self.content_at(self.content_size.width)

    def content_at(self, width: int) -> Content:
        """What :meth:`render` draws when the row is ``width`` cells wide."""
        lines = self._lines(width)
        bullet = Content.styled(self.symbol, ".list-row--bullet")
        indent = Content(" " * cell_len(self.symbol))
        return Content("\n").join(
            (bullet if index == 0 else indent) + line for index, line in enumerate(lines)
        )


def flattened(row: Widget) -> Widget:
    """``row`` as composed by Textual's list (a bullet beside a column of blocks), or a
    :class:`ListRow` in its place when the column holds exactly one paragraph."""
    parts = pending_children(row)
    if len(parts) != 2:
        return row
    symbol = getattr(parts[0], "symbol", None)
    blocks = pending_children(parts[1])
    if not isinstance(symbol, str) or len(blocks) != 1 or type(blocks[0]) is not _Paragraph:
        return row
    paragraph = blocks[0]
    assert isinstance(paragraph, MarkdownBlock)
    return ListRow(paragraph, symbol)

"""A Markdown part's lines drawn from template styles, with no block widget mounted.

:class:`Templates` indexes the blocks of mounted (hidden) parts by their CSS path: each
node's class name and classes, from the part down. :func:`part_lines` builds the blocks of a
source with Textual's own builder (``Markdown._build_from_source``, which makes widgets but
does not mount them), composes containers as mounting would, and draws every node with the
styles of the template at the same path, the way ``Widget.render_lines`` does
(``Visual.to_strips``, then ``StylesCache.render`` for padding and background), stacking
children vertically with their margins collapsed as Textual's vertical layout does. A node
whose path has no template, or a container laid out other than vertically (tables, list
items that are not one paragraph), raises :class:`Unsupported`.
``tests/app/test_line_markdown.py`` checks the lines against Textual's compositor.

A streamed answer's growing part is drawn again at every flush. Its text up to its last
safe boundary (``block_split``: the blocks there are those of the whole) only grows, so
:class:`Templates` keeps those blocks' drawn rows and a draw parses and draws only the text
after them: the blocks still growing, not the whole part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.style import Style as RichStyle
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget

from smith_tui.widgets.textual_compat import StylesCache, build_blocks
from smith_tui.widgets.transcript.block_split import boundaries
from smith_tui.widgets.transcript.list_rows import ListRow

Node = tuple[str, frozenset[str], str | None]
Path = tuple[Node, ...]

#: A line that may define a link reference (``[x]: url``), which a link anywhere in the
#: part may use (also matched inside a code block: drawing such a part whole is only slower).
_REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:", re.MULTILINE)


class Unsupported(Exception):
    """The source holds a block the templates cannot draw."""


def _node(widget: Widget) -> Node:
    # A fence's code label is told apart by its id (its classes are those of any Label);
    # other ids name one heading and say nothing of its styles.
    code = widget.id if widget.id == "code-content" else None
    return type(widget).__name__, frozenset(widget.classes), code


class _Head:
    """The drawn top-level blocks of a part's text up to a safe boundary.

    ``rows`` are the stacked rows (``None`` for a margin row, filled in at the end) and
    ``bottom`` the last block's bottom margin, which collapses with the next block's top
    (``None`` while no block is drawn: the next one is the part's ``-first``).
    """

    __slots__ = ("bottom", "key", "rows", "source", "width")

    def __init__(
        self, source: str, width: int, key: object, rows: list[Strip | None], bottom: int | None
    ) -> None:
        self.source = source
        self.width = width
        self.key = key
        self.rows = rows
        self.bottom = bottom


class Templates:
    """Mounted blocks, by their path below a part; the first of ``parts`` is the part."""

    def __init__(self, parts: Iterable[Widget]) -> None:
        parts = list(parts)
        self.part = parts[0]
        self.by_path: dict[Path, Widget] = {}
        for part in parts:
            self._index(part, ())
        self._head: _Head | None = None

    def _index(self, widget: Widget, path: Path) -> None:
        for child in widget.children:
            below = (*path, _node(child))
            self.by_path.setdefault(below, child)
            self._index(child, below)

    def stacked(self, source: str, width: int) -> list[Strip]:
        """The part's blocks for ``source`` stacked ``width`` cells wide (or Unsupported).

        The rows up to the last safe boundary are kept for the next call, whose source
        usually starts with them (a growing part). A reference definition (``[x]: url``)
        may give a link before the boundary its target, so a source holding one is drawn
        whole.
        """
        part = self.part
        key = (part.app.theme, part.background_colors)
        cuts = [] if _REFERENCE.search(source) else boundaries(source)
        cut = cuts[-1] if cuts else 0
        head = self._head
        if (
            head is None
            or head.width != width
            or head.key != key
            or not source.startswith(head.source)
            or (head.source and len(head.source) not in cuts)  # (a boundary of this source)
        ):
            head = _Head("", width, key, [], None)
        if cut > len(head.source):
            rows = list(head.rows)
            bottom = self._stack_source(source[len(head.source) : cut], width, head, rows)
            head = _Head(source[:cut], width, key, rows, bottom)
            self._head = head
        rows = list(head.rows)
        bottom = self._stack_source(source[len(head.source) :], width, head, rows)
        return _filled(rows, bottom, part, width)

    def _stack_source(
        self, source: str, width: int, head: _Head, rows: list[Strip | None]
    ) -> int | None:
        """Stack the blocks of ``source`` after ``head``'s onto ``rows``; the bottom margin."""
        if not source:
            return head.bottom
        blocks: list[Widget] = [*build_blocks(self.part, source)]  # type: ignore[arg-type]
        if blocks and head.bottom is None:
            blocks[0].add_class("-first")  # as StreamingMarkdown marks a part's first block
        return _stack_rows(blocks, self.part, width, self, (), rows, head.bottom)


def part_lines(templates: Templates, source: str, width: int) -> list[Strip]:
    """The lines of a part holding ``source``, ``width`` cells wide (or Unsupported)."""
    return _boxed(templates.part, width, lambda inner: templates.stacked(source, inner))


def _boxed(template: Widget, width: int, content: object) -> list[Strip]:
    """``template``'s box (padding, background) around the lines ``content(inner width)``."""
    styles = template.styles
    gutter = styles.gutter
    inner = max(1, width - gutter.width)
    lines: list[Strip] = content(inner)  # type: ignore[operator]
    height = len(lines) + gutter.height
    base_background, background = template.background_colors
    return StylesCache().render(
        styles, Size(width, height), base_background, background,
        lambda y: lines[y] if y < len(lines) else Strip.blank(inner),
        template.get_line_filters(), None, None, content_size=Size(inner, len(lines)),
        padding=styles.padding, crop=Region(0, 0, width, height), opacity=template.opacity,
        ansi_theme=template.app.ansi_theme, native_ansi=template.app.native_ansi_color,
    )  # fmt: skip


def _drawn(
    node: Widget, template: Widget, width: int, templates: Templates, path: Path
) -> list[Strip]:
    kids = list(node.compose())  # what mounting would give it (consumes a block's items)

    def content(inner: int) -> list[Strip]:
        if kids:
            return _stack(kids, template, inner, templates, path)
        # A ListRow wraps at its laid-out width, which an unmounted row does not have.
        visual = node.content_at(inner) if isinstance(node, ListRow) else node.render()
        return Visual.to_strips(
            template, visualize(template, visual, markup=False), inner, None, template.visual_style
        )

    return _boxed(template, width, content)


def _stack(
    kids: list[Widget], container: Widget, width: int, templates: Templates, path: Path
) -> list[Strip]:
    rows: list[Strip | None] = []
    bottom = _stack_rows(kids, container, width, templates, path, rows, None)
    return _filled(rows, bottom, container, width)


def _filled(
    rows: list[Strip | None], bottom: int | None, container: Widget, width: int
) -> list[Strip]:
    """``rows`` with the last bottom margin added and every margin row ``container``'s blank."""
    rows.extend([None] * (bottom or 0))
    blank = Strip.blank(width, RichStyle(bgcolor=container.visual_style.rich_style.bgcolor))
    return [row if row is not None else blank for row in rows]


def _stack_rows(
    kids: list[Widget],
    container: Widget,
    width: int,
    templates: Templates,
    path: Path,
    out: list[Strip | None],
    previous_bottom: int | None,
) -> int | None:
    """Stack ``kids`` onto ``out`` (``None``: a margin row) below a block whose bottom
    margin is ``previous_bottom`` (``None``: none above); returns the last bottom margin."""
    layout = container.styles.layout
    if layout is not None and layout.name not in ("vertical", "stream"):
        raise Unsupported(f"{type(container).__name__}: {layout.name} layout")
    blank = RichStyle(bgcolor=container.visual_style.rich_style.bgcolor)
    for kid in kids:
        below = (*path, _node(kid))
        template = templates.by_path.get(below)
        if template is None:
            raise Unsupported(f"no template for {below[-1]}")
        margin = template.styles.margin
        out.extend(
            [None] * (margin.top if previous_bottom is None else max(margin.top, previous_bottom))
        )
        for strip in _drawn(kid, template, width - margin.left - margin.right, templates, below):
            if margin.left or margin.right:
                strip = Strip.join(
                    [Strip.blank(margin.left, blank), strip, Strip.blank(margin.right, blank)]
                )
            out.append(strip)
        previous_bottom = margin.bottom
    return previous_bottom

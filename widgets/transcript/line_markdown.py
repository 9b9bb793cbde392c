"""A Markdown part's lines drawn from template styles, with no block widget mounted.

:class:`Templates` indexes the blocks of mounted (hidden) parts by their CSS path: each
node's class name and classes, from the part down. :func:`part_lines` builds the blocks of a
source with Textual's own builder (``Markdown._build_from_source``, which makes widgets but
does not mount them), composes containers as mounting would, and draws every node with the
styles of the template at the same path, the way ``Widget.render_lines`` does
(``Visual.to_strips``, then ``StylesCache.render`` for padding and background), stacking
children vertically with their margins collapsed as Textual's vertical layout does, a
list item that is not one paragraph as its horizontal layout places its bullet and blocks,
and a table's cells as its grid layout places them, with the keylines around each. A node
whose path has no template (a code block in a list item), or a container laid out
otherwise, raises :class:`Unsupported`.
``tests/app/test_line_markdown.py`` checks the lines against Textual's compositor.

A streamed answer's growing part is drawn again at every flush. Its text up to its last
safe boundary (``block_split``: the blocks there are those of the whole) only grows, so
:class:`Templates` keeps those blocks' drawn rows and a draw parses and draws only the text
after them: the blocks still growing, not the whole part. The part's own box (padding,
background, the line filters) is drawn again only around the rows the last draw did not
have, and each template's ``background_colors`` is worked out once per draw.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

from rich.style import Style as RichStyle
from textual.canvas import Canvas, Rectangle
from textual.color import Color
from textual.css.scalar import Unit
from textual.geometry import Region, Size
from textual.layouts.grid import GridLayout
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget
from textual.widgets.markdown import MarkdownBlock

from smith_tui.widgets.textual_compat import (
    StylesCache,
    build_blocks,
    grid_tracks,
    pending_children,
)
from smith_tui.widgets.transcript.block_split import boundaries
from smith_tui.widgets.transcript.list_rows import ListRow

if TYPE_CHECKING:
    from textual.css.styles import RulesMap

Node = tuple[str, frozenset[str], str | None]
Path = tuple[Node, ...]

#: A line that may define a link reference (``[x]: url``), which a link anywhere in the
#: part may use (also matched inside a code block: drawing such a part whole is only slower).
_REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:", re.MULTILINE)


class Unsupported(Exception):
    """The source holds a block the templates cannot draw."""


#: A table cell's row class (``row3``): no style rule tells rows apart, so every row's
#: cells share the template of the first.
_ROW_CLASS = re.compile(r"row\d+")


def _node(widget: Widget) -> Node:
    # A fence's code label is told apart by its id (its classes are those of any Label);
    # other ids name one heading and say nothing of its styles.
    code = widget.id if widget.id == "code-content" else None
    classes = frozenset(c for c in widget.classes if not _ROW_CLASS.fullmatch(c))
    return type(widget).__name__, classes, code


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
        self._boxed: dict[int, tuple[Strip, Strip]] = {}
        """The part's boxed rows of the last draw, by the id of the row they box."""
        self._boxed_key: object = None
        self._colors: dict[int, tuple[Color, Color]] = {}
        """Templates' ``background_colors`` during one draw (each walks the ancestors)."""

    def colors(self, template: Widget) -> tuple[Color, Color]:
        """``template.background_colors``, worked out once per draw."""
        colors = self._colors.get(id(template))
        if colors is None:
            colors = self._colors[id(template)] = template.background_colors
        return colors

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
        key = (part.app.theme, self.colors(part))
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
    templates._colors.clear()
    part = templates.part
    height = part.styles.height
    if height is not None and not height.is_auto:
        return _boxed(part, width, lambda inner: templates.stacked(source, inner), templates)
    rows = templates.stacked(source, max(1, width - part.styles.gutter.width))
    return _boxed_rows(templates, width, rows)


def _boxed_rows(templates: Templates, width: int, rows: list[Strip]) -> list[Strip]:
    """The part's box around ``rows``, boxing only the rows the last draw did not have.

    A row between the box's top and bottom edges is drawn from its content row alone
    (``StylesCache.render_line``: padding, borders and background beside it, then the
    filters), so the rows kept from the last draw (the part's head, see ``stacked``) keep
    their boxed rows, and only the growing blocks' rows are boxed again.
    """
    part = templates.part
    key = (width, part.app.theme, templates.colors(part))
    if key != templates._boxed_key:
        templates._boxed, templates._boxed_key = {}, key
    cache = templates._boxed
    missing = list({id(row): row for row in rows if id(row) not in cache}.values())
    gutter = part.styles.gutter
    if missing:
        boxed = _boxed_at(part, width, len(missing) + gutter.height, missing, templates)
        for row, line in zip(missing, boxed[gutter.top : gutter.top + len(missing)], strict=True):
            cache[id(row)] = (row, line)
    edges = _boxed_at(part, width, gutter.height, [], templates) if gutter.height else []
    # Only this draw's rows are kept; each entry holds its row, so no other row can take
    # its id while it is cached.
    templates._boxed = {id(row): cache[id(row)] for row in rows}
    return [*edges[: gutter.top], *(cache[id(row)][1] for row in rows), *edges[gutter.top :]]


def _boxed(template: Widget, width: int, content: object, templates: Templates) -> list[Strip]:
    """``template``'s box (padding, background) around the lines ``content(inner width)``."""
    styles = template.styles
    gutter = styles.gutter
    lines: list[Strip] = content(max(1, width - gutter.width))  # type: ignore[operator]
    height = len(lines) + gutter.height
    fixed = styles.height
    if fixed is not None and not fixed.is_auto:  # a rule: ``height: 1``
        if fixed.unit is not Unit.CELLS:
            raise Unsupported(f"{type(template).__name__}: height {fixed}")
        # The box holds its padding and border whatever its height (Textual's box model).
        content_box = styles.box_sizing == "content-box"
        height = (
            int(fixed.value) + gutter.height
            if content_box
            else max(int(fixed.value), gutter.height)
        )
    return _boxed_at(template, width, height, lines, templates)


def _drawn(
    node: Widget, template: Widget, width: int, templates: Templates, path: Path
) -> list[Strip]:
    # What mounting would give it: the children it was made with, then those it composes
    # (which consumes a block's items).
    kids = [*pending_children(node), *node.compose()]

    def content(inner: int) -> list[Strip]:
        layout = template.styles.layout
        if kids and layout is not None and layout.name == "grid":
            return _grid(node, kids, template, inner, templates, path)
        if kids and layout is not None and layout.name == "horizontal":
            return _row(kids, template, inner, templates, path)
        if not kids and template.styles.layout is not None:
            return []  # an empty container (an empty item's column) has no rows
        if kids:
            wide = _scrolled_width(kids, template, inner, templates, path)
            if wide > inner:  # scrolled sideways, at its start: what is wider runs out of view
                return [
                    strip.crop(0, inner) for strip in _stack(kids, template, wide, templates, path)
                ]
            return _stack(kids, template, inner, templates, path)
        # A ListRow wraps at its laid-out width, which an unmounted row does not have.
        visual = node.content_at(inner) if isinstance(node, ListRow) else node.render()
        return Visual.to_strips(
            template, visualize(template, visual, markup=False), inner, None, template.visual_style
        )

    return _boxed(template, width, content, templates)


def _scrolled_width(
    kids: list[Widget], container: Widget, width: int, templates: Templates, path: Path
) -> int:
    """How wide ``container`` lays out ``kids`` when it scrolls sideways (a fence): as wide
    as its widest kid's unwrapped text, or ``width`` for a container that does not scroll."""
    if container.styles.overflow_x not in ("scroll", "auto"):
        return width
    wide = width
    for kid in kids:
        template = templates.by_path.get((*path, _node(kid)))
        if template is None:
            raise Unsupported(f"no template for {_node(kid)}")
        styles = template.styles
        if styles.width is not None and not styles.width.is_auto:
            raise Unsupported(f"{type(kid).__name__}: a sized block in a scrolling one")
        visual = visualize(template, kid.render(), markup=False)
        text = visual.get_optimal_width(_rules(template), width)
        wide = max(wide, text + styles.gutter.width + styles.margin.width)
    return wide


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
    blank = _container_blank(container, width)
    return [row if row is not None else blank for row in rows]


def _container_blank(container: Widget, width: int) -> Strip:
    """A row of ``container`` where no child is. A block (a quote) is a Static whose empty
    text is drawn in its text style; a part (a Markdown widget) draws only its background."""
    if isinstance(container, MarkdownBlock):
        return Strip.blank(width, container.visual_style.rich_style)
    return Strip.blank(width, RichStyle(bgcolor=container.visual_style.rich_style.bgcolor))


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
    for kid in kids:
        below = (*path, _node(kid))
        template = templates.by_path.get(below)
        if template is None:
            raise Unsupported(f"no template for {below[-1]}")
        margin = template.styles.margin
        out.extend(
            [None] * (margin.top if previous_bottom is None else max(margin.top, previous_bottom))
        )
        left, right = (
            _container_blank(container, margin.left),
            _container_blank(container, margin.right),
        )
        for strip in _drawn(kid, template, width - margin.left - margin.right, templates, below):
            if margin.left or margin.right:
                strip = Strip.join([left, strip, right])
            out.append(strip)
        previous_bottom = margin.bottom
    return previous_bottom


def _row(
    kids: list[Widget], container: Widget, width: int, templates: Templates, path: Path
) -> list[Strip]:
    """``kids`` side by side as Textual's horizontal layout places them: a list item's
    bullet as wide as its symbol, its blocks in the rest (``auto`` widths first, then
    the one ``fr`` kid; anything else, or a margin, raises Unsupported)."""
    sized: list[tuple[Widget, Widget, Path, int | None]] = []
    fixed = 0
    for kid in kids:
        below = (*path, _node(kid))
        template = templates.by_path.get(below)
        if template is None:
            raise Unsupported(f"no template for {below[-1]}")
        styles = template.styles
        if styles.margin.width or styles.margin.height:
            raise Unsupported(f"{type(kid).__name__}: a margin in a row")
        scalar = styles.width
        if scalar is None or scalar.unit is Unit.FRACTION:
            sized.append((kid, template, below, None))
        elif scalar.is_auto and not pending_children(kid):
            visual = visualize(template, kid.render(), markup=False)
            own = visual.get_optimal_width(_rules(template), width) + styles.gutter.width
            fixed += own
            sized.append((kid, template, below, own))
        else:
            raise Unsupported(f"{type(kid).__name__}: width {scalar} in a row")
    if sum(own is None for *_, own in sized) > 1:
        raise Unsupported("a row of several fr widths")  # (Textual's rounding not copied)
    rest = max(0, width - fixed)
    columns: list[list[Strip]] = []
    widths: list[int] = []
    for kid, template, below, given in sized:
        own = rest if given is None else given
        widths.append(own)
        columns.append(_drawn(kid, template, own, templates, below))
    # The row is as tall as its ``auto`` kids; the others (a bullet) are stretched or cut to
    # it, drawn blank in their own style below their text. Below a shorter ``auto`` kid:
    # the row's background.
    autos = [
        template.styles.height is not None and template.styles.height.is_auto
        for _, template, _, _ in sized
    ]
    height = max((len(c) for c, auto in zip(columns, autos, strict=True) if auto), default=0)
    fillers: list[Strip] = []
    for (_kid, template, _below, _own), own, auto, column in zip(
        sized, widths, autos, columns, strict=True
    ):
        styles = template.styles
        if auto:
            fillers.append(_container_blank(container, own))
        elif not styles.gutter.height and (styles.min_height, styles.max_height) == (None, None):
            fillers.append(Strip.blank(own, template.visual_style.rich_style))
            del column[height:]
        else:
            raise Unsupported(f"{type(template).__name__}: a stretched block with a box")
    rows: list[Strip] = []
    for y in range(height):
        pieces = [
            column[y] if y < len(column) else filler
            for column, filler in zip(columns, fillers, strict=True)
        ]
        rows.append(Strip.join(pieces))
    return rows


def _grid(
    node: Widget,
    kids: list[Widget],
    template: Widget,
    width: int,
    templates: Templates,
    path: Path,
) -> list[Strip]:
    """A table's cells placed as Textual's grid layout places them (auto columns and rows,
    keylines around every cell), each cell drawn with its template's styles."""
    headers = getattr(node, "headers", None)
    styles = template.styles
    layout = GridLayout()
    template.pre_layout(layout)
    scalars = [*(styles.grid_columns or ()), *(styles.grid_rows or ())]
    if (
        not isinstance(headers, list)
        or not headers
        or str(styles.keyline[0]) == "none"
        or not scalars
        or not all(scalar.is_auto for scalar in scalars)
        or layout.min_column_width is not None
        or layout.max_column_width is not None
    ):
        raise Unsupported(f"{type(node).__name__}: a grid other than a table's")
    count = len(headers)
    viewport = template.app.viewport_size
    size = Size(max(0, width - 2), 0)  # inside the keylines
    cells: list[tuple[Visual, Widget]] = []
    for kid in kids:
        cell = templates.by_path.get((*path, _node(kid)))
        if cell is None:
            raise Unsupported(f"no template for {_node(kid)}")
        cell_styles = cell.styles
        limits = (cell_styles.min_width, cell_styles.max_width)
        if limits != (None, None) or (cell_styles.min_height, cell_styles.max_height) != (
            None,
            None,
        ):
            raise Unsupported("a table cell with size limits")
        cells.append((visualize(cell, kid.render(), markup=False), cell))
    widths = [0] * count
    minimums = [1] * count
    for index, (visual, cell) in enumerate(cells):
        column = index % count
        gutter = cell.styles.gutter.width
        widths[column] = max(
            widths[column], visual.get_optimal_width(_rules(cell), size.width) + gutter
        )
        if layout.auto_minimum and layout.shrink:
            minimums[column] = max(
                minimums[column], visual.get_minimal_width(_rules(cell)) + gutter
            )
    columns = grid_tracks(
        widths, size.width, styles.grid_gutter_vertical, size, viewport,
        expand=layout.expand, shrink=layout.shrink,
        minimums=minimums if layout.auto_minimum and layout.shrink else None,
    )  # fmt: skip
    heights: list[int] = []
    naturals: list[int] = []  # each cell's text height in its column
    for index, (visual, cell) in enumerate(cells):
        column, row = index % count, index // count
        gutter_width, gutter_height = cell.styles.gutter.totals
        naturals.append(visual.get_height(_rules(cell), columns[column][1] - gutter_width))
        height = naturals[-1] + gutter_height
        if row == len(heights):
            heights.append(height)
        else:
            heights[row] = max(heights[row], height)
    rows = grid_tracks(heights, 0, styles.grid_gutter_horizontal, size, viewport)
    total = rows[-1][0] + rows[-1][1] + 2
    stretch = layout.stretch_height and len(kids) > 1
    regions: list[Region] = []
    drawn: list[list[Strip]] = []
    for index, (visual, cell) in enumerate(cells):
        (x, cell_width), (y, row_height) = columns[index % count], rows[index // count]
        gutter_width, gutter_height = cell.styles.gutter.totals
        inner = cell_width - gutter_width
        height = row_height if stretch else naturals[index] + gutter_height
        content_height = height - gutter_height
        strips = Visual.to_strips(cell, visual, inner, content_height, cell.visual_style)
        # A stretched cell's rows below its text are blank in its style (``render_line``).
        blank = Strip.blank(inner, cell.visual_style.rich_style)
        strips.extend([blank] * (content_height - len(strips)))
        drawn.append(_boxed_at(cell, cell_width, height, strips, templates))
        regions.append(Region(x + 1, y + 1, cell_width, height))
    line_style, color = styles.keyline
    if color:
        color = templates.colors(template)[0] + color
    canvas = Canvas(width, total)
    rectangles = [
        Rectangle(region.offset - (1, 1), region.width + 2, region.height + 2, color, line_style)
        for region in regions
    ]
    base = Visual.to_strips(
        template, visualize(template, canvas.render(rectangles, template.rich_style)), width,
        total, template.visual_style,
    )  # fmt: skip
    out = list(base)
    for region, strips in zip(regions, drawn, strict=True):
        for offset, strip in enumerate(strips):
            y = region.y + offset
            line = out[y]
            out[y] = Strip.join(
                [line.crop(0, region.x), strip, line.crop(region.right, line.cell_length)]
            )
    return out


def _rules(widget: Widget) -> RulesMap:
    """``widget``'s styles as the visuals' measures take them (as Textual passes them)."""
    return cast("RulesMap", widget.styles)


def _boxed_at(
    template: Widget, width: int, height: int, lines: list[Strip], templates: Templates
) -> list[Strip]:
    """``template``'s box, ``width`` by ``height``, around the content ``lines``."""
    styles = template.styles
    inner = max(1, width - styles.gutter.width)
    base_background, background = templates.colors(template)
    return StylesCache().render(
        styles, Size(width, height), base_background, background,
        lambda y: lines[y] if y < len(lines) else Strip.blank(inner),
        template.get_line_filters(), None, None, content_size=Size(inner, len(lines)),
        padding=styles.padding, crop=Region(0, 0, width, height), opacity=template.opacity,
        ansi_theme=template.app.ansi_theme, native_ansi=template.app.native_ansi_color,
    )  # fmt: skip

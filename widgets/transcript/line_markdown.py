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
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style as RichStyle
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget

from smith_tui.widgets.textual_compat import StylesCache, build_blocks
from smith_tui.widgets.transcript.list_rows import ListRow

Node = tuple[str, frozenset[str], str | None]
Path = tuple[Node, ...]


class Unsupported(Exception):
    """The source holds a block the templates cannot draw."""


def _node(widget: Widget) -> Node:
    # A fence's code label is told apart by its id (its classes are those of any Label);
    # other ids name one heading and say nothing of its styles.
    code = widget.id if widget.id == "code-content" else None
    return type(widget).__name__, frozenset(widget.classes), code


class Templates:
    """Mounted blocks, by their path below a part; the first of ``parts`` is the part."""

    def __init__(self, parts: Iterable[Widget]) -> None:
        parts = list(parts)
        self.part = parts[0]
        self.by_path: dict[Path, Widget] = {}
        for part in parts:
            self._index(part, ())

    def _index(self, widget: Widget, path: Path) -> None:
        for child in widget.children:
            below = (*path, _node(child))
            self.by_path.setdefault(below, child)
            self._index(child, below)


def part_lines(templates: Templates, source: str, width: int) -> list[Strip]:
    """The lines of a part holding ``source``, ``width`` cells wide (or Unsupported)."""
    part = templates.part
    blocks: list[Widget] = [*build_blocks(part, source)]  # type: ignore[arg-type]
    if blocks:
        blocks[0].add_class("-first")  # as StreamingMarkdown marks a part's first block
    return _boxed(part, width, lambda inner: _stack(blocks, part, inner, templates, ()))


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
    layout = container.styles.layout
    if layout is not None and layout.name not in ("vertical", "stream"):
        raise Unsupported(f"{type(container).__name__}: {layout.name} layout")
    blank = RichStyle(bgcolor=container.visual_style.rich_style.bgcolor)
    out: list[Strip | None] = []
    previous_bottom: int | None = None
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
    out.extend([None] * (previous_bottom or 0))
    return [strip if strip is not None else Strip.blank(width, blank) for strip in out]

"""Where the rain strip sits and how many pixels it takes.

The strip covers ~40% of the terminal width from its left edge; every glyph column is
stretched over two terminal cells and every glyph row over one, and both counts are
capped, so the canvas stays the same size in pixels on a wide terminal as on a huge one.
"""

from __future__ import annotations

from dataclasses import dataclass

CELL_WIDTH_PX = 6
"""Canvas pixels per glyph column (a 5-pixel glyph plus a 1-pixel gap)."""
CELL_HEIGHT_PX = 8
"""Canvas pixels per glyph row (a 7-pixel glyph plus a 1-pixel gap)."""
CELLS_PER_GLYPH_COLUMN = 2
"""Terminal cells one glyph column is stretched across."""
MAX_GLYPH_COLUMNS = 48
"""Default cap on glyph columns."""
MAX_GLYPH_ROWS = 40
"""Default cap on glyph rows."""
STRIP_FRACTION = 0.4
"""Default share of the terminal width the strip covers."""


@dataclass(frozen=True)
class StripLayout:
    """The strip's place on screen (in cells) and its canvas (in glyphs and pixels).

    ``column`` is the 0-based terminal column of the strip's left edge; ``cells_wide`` and
    ``cells_high`` are the placement box (Kitty ``c``/``r``).
    """

    column: int
    cells_wide: int
    cells_high: int
    glyph_columns: int
    glyph_rows: int
    cell_width_px: int = CELL_WIDTH_PX
    cell_height_px: int = CELL_HEIGHT_PX

    @property
    def width_px(self) -> int:
        """Canvas width in pixels."""
        return self.glyph_columns * self.cell_width_px

    @property
    def height_px(self) -> int:
        """Canvas height in pixels."""
        return self.glyph_rows * self.cell_height_px


def strip_layout(
    terminal_columns: int,
    rows: int,
    *,
    column: int = 0,
    fraction: float = STRIP_FRACTION,
    max_glyph_columns: int = MAX_GLYPH_COLUMNS,
    max_glyph_rows: int = MAX_GLYPH_ROWS,
) -> StripLayout:
    """Size the strip for a terminal ``terminal_columns`` wide and ``rows`` cells high.

    Raises ValueError (with what to fix) for sizes that leave no room for one glyph column.
    """
    if terminal_columns < CELLS_PER_GLYPH_COLUMN:
        raise ValueError(
            f"the rain needs a terminal at least {CELLS_PER_GLYPH_COLUMN} columns wide, "
            f"got {terminal_columns}"
        )
    if rows < 1:
        raise ValueError(f"the rain strip needs at least one row, got {rows}")
    if not 0 < fraction <= 1:
        raise ValueError(f"the strip fraction must be in (0, 1], got {fraction}")
    if max_glyph_columns < 1 or max_glyph_rows < 1:
        raise ValueError("the glyph column and row caps must be at least 1")
    if column < 0:
        raise ValueError(f"the strip column must be 0 or more, got {column}")
    cells = int(terminal_columns * fraction)
    glyph_columns = max(1, min(max_glyph_columns, cells // CELLS_PER_GLYPH_COLUMN))
    return StripLayout(
        column=column,
        cells_wide=glyph_columns * CELLS_PER_GLYPH_COLUMN,
        cells_high=rows,
        glyph_columns=glyph_columns,
        glyph_rows=min(rows, max_glyph_rows),
    )

"""The rain model: columns of falling glyph trails, rendered to an RGBA canvas.

A :class:`RainField` holds one :class:`RainColumn` per glyph column. Each tick (``step``)
every head falls by its own speed and writes fresh glyphs into the rows it enters; a few
trail glyphs flicker. A column whose tail has left the bottom starts again above the top
with a new speed and length. All randomness comes from one ``random.Random(seed)``, so a
seed fixes the whole animation.

Rendering builds the canvas from pre-tinted tiles (one per glyph and brightness level),
joined row by row into one ``bytes`` object: no per-pixel Python work per frame.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from smith_tui.widgets.rain.glyphs import GLYPH_HEIGHT, GLYPH_WIDTH, GLYPHS, Glyph
from smith_tui.widgets.rain.layout import CELL_HEIGHT_PX, CELL_WIDTH_PX

RGB = tuple[int, int, int]

TRAIL_LEVELS = 6
"""Brightness levels of a trail; level ``TRAIL_LEVELS`` is the glyph right behind the head."""
HEAD_LEVEL = TRAIL_LEVELS + 1
"""The level of the head glyph (the brightest, lightened toward white)."""
HEAD_WHITENESS = 0.6
"""How far the head colour is blended from the tint toward white."""
DEFAULT_TINT = "#00FF41"
"""The classic phosphor green, for callers without a role tint."""

_MIN_SPEED, _MAX_SPEED = 0.3, 0.9  # rows per tick
_FLICKER = 0.15  # chance per column and tick that one trail glyph changes
_HEX = re.compile(r"#?([0-9a-fA-F]{6})")


def parse_tint(tint: str | Sequence[int]) -> RGB:
    """Turn ``"#RRGGBB"`` (or an ``(r, g, b)`` triple) into an RGB triple; ValueError if bad."""
    if isinstance(tint, str):
        match = _HEX.fullmatch(tint.strip())
        if match is None:
            raise ValueError(f"a rain tint must look like '#RRGGBB', got {tint!r}")
        value = int(match.group(1), 16)
        return (value >> 16 & 0xFF, value >> 8 & 0xFF, value & 0xFF)
    parts = tuple(tint)
    if len(parts) != 3 or not all(isinstance(p, int) and 0 <= p <= 255 for p in parts):
        raise ValueError(f"a rain tint triple needs three integers 0-255, got {tint!r}")
    return (parts[0], parts[1], parts[2])


def head_colour(tint: RGB) -> RGB:
    """The head's colour: the tint blended toward white."""
    r, g, b = tint
    return (
        round(r + (255 - r) * HEAD_WHITENESS),
        round(g + (255 - g) * HEAD_WHITENESS),
        round(b + (255 - b) * HEAD_WHITENESS),
    )


def level_alpha(level: int) -> int:
    """Opacity of a glyph at ``level`` (1 faintest trail … ``HEAD_LEVEL`` head)."""
    if level >= HEAD_LEVEL:
        return 255
    return 40 + (230 - 40) * (level - 1) // (TRAIL_LEVELS - 1)


@dataclass
class RainColumn:
    """One falling trail: ``head`` is the head's row (negative while waiting above the top)."""

    head: float
    speed: float
    length: int
    glyphs: list[int] = field(default_factory=list)

    @property
    def head_row(self) -> int:
        """The integer row of the head."""
        return int(self.head // 1)


class RainField:
    """A ``columns`` × ``rows`` grid of glyph cells with falling trails.

    ``seed`` fixes every random choice; ``tint`` is the role colour (``"#RRGGBB"``).
    Each cell is ``cell_px`` pixels (the 5×7 glyph sits in its top-left corner).
    """

    def __init__(
        self,
        columns: int,
        rows: int,
        *,
        seed: int | None = 0,
        tint: str | Sequence[int] = DEFAULT_TINT,
        cell_px: tuple[int, int] = (CELL_WIDTH_PX, CELL_HEIGHT_PX),
    ) -> None:
        if columns < 1 or rows < 1:
            raise ValueError(f"a rain field needs at least 1×1 cells, got {columns}×{rows}")
        cell_w, cell_h = cell_px
        if cell_w < GLYPH_WIDTH or cell_h < GLYPH_HEIGHT:
            raise ValueError(
                f"rain cells must be at least {GLYPH_WIDTH}×{GLYPH_HEIGHT} pixels, "
                f"got {cell_w}×{cell_h}"
            )
        self.columns = columns
        self.rows = rows
        self.cell_width_px = cell_w
        self.cell_height_px = cell_h
        self.tick = 0
        self._random = random.Random(seed)
        self._tint = parse_tint(tint)
        self._tiles = _tint_tiles(self._tint, cell_w, cell_h)
        self._empty_tile = (bytes(cell_w * 4),) * cell_h
        self.trails: list[RainColumn] = [self._new_column(first=True) for _ in range(columns)]

    @property
    def natural_size(self) -> tuple[int, int]:
        """The canvas size in pixels at one pixel per glyph pixel."""
        return (self.columns * self.cell_width_px, self.rows * self.cell_height_px)

    @property
    def tint(self) -> RGB:
        """The trail colour."""
        return self._tint

    def set_tint(self, tint: str | Sequence[int]) -> None:
        """Recolour the rain (the animation itself goes on unchanged)."""
        rgb = parse_tint(tint)
        if rgb != self._tint:
            self._tint = rgb
            self._tiles = _tint_tiles(rgb, self.cell_width_px, self.cell_height_px)

    def heads(self) -> list[int]:
        """The integer head row of every column (may lie above or below the grid)."""
        return [trail.head_row for trail in self.trails]

    def step(self) -> None:
        """Advance the rain by one tick (a tenth of a second at 10 fps)."""
        rnd = self._random
        count = len(GLYPHS)
        self.tick += 1
        for index, trail in enumerate(self.trails):
            before = trail.head_row
            trail.head += trail.speed
            after = trail.head_row
            for row in range(max(before + 1, 0), min(after, self.rows - 1) + 1):
                trail.glyphs[row] = rnd.randrange(count)
            if 0 <= after < self.rows:
                trail.glyphs[after] = rnd.randrange(count)
            if rnd.random() < _FLICKER:
                row = after - rnd.randrange(1, trail.length)
                if 0 <= row < self.rows:
                    trail.glyphs[row] = rnd.randrange(count)
            if after - trail.length >= self.rows:
                self.trails[index] = self._new_column(first=False)

    def levels(self) -> list[list[int]]:
        """Brightness level of every cell, ``[row][column]``: 0 empty, ``HEAD_LEVEL`` head."""
        grid = [[0] * self.columns for _ in range(self.rows)]
        for column, trail in enumerate(self.trails):
            for row, level in self._column_levels(trail):
                grid[row][column] = level
        return grid

    def render_rgba(self, width_px: int | None = None, height_px: int | None = None) -> bytes:
        """The current frame as straight-alpha RGBA bytes, row-major, ``width_px*height_px*4`` long.

        The canvas is drawn at :attr:`natural_size`; any other size is scaled to it with
        nearest-neighbour sampling (the Kitty path sends the natural size and lets the
        terminal stretch it, so that costs nothing there).
        """
        natural_w, natural_h = self.natural_size
        width = natural_w if width_px is None else width_px
        height = natural_h if height_px is None else height_px
        if width < 1 or height < 1:
            raise ValueError(f"a rain frame needs a positive size, got {width}×{height}")
        empty = self._empty_tile
        grid: list[list[tuple[bytes, ...]]] = [[empty] * self.columns for _ in range(self.rows)]
        tiles = self._tiles
        for column, trail in enumerate(self.trails):
            glyphs = trail.glyphs
            for row, level in self._column_levels(trail):
                grid[row][column] = tiles[level][glyphs[row]]
        parts: list[bytes] = []
        for cells in grid:
            for y in range(self.cell_height_px):
                parts.extend([tile[y] for tile in cells])
        data = b"".join(parts)
        if (width, height) == (natural_w, natural_h):
            return data
        from PIL import Image

        image = Image.frombuffer("RGBA", (natural_w, natural_h), data, "raw", "RGBA", 0, 1)
        return image.resize((width, height), Image.Resampling.NEAREST).tobytes()

    def _column_levels(self, trail: RainColumn) -> list[tuple[int, int]]:
        head = trail.head_row
        length = trail.length
        out = []
        top = max(0, head - length + 1)
        for row in range(top, min(head, self.rows - 1) + 1):
            distance = head - row
            if distance == 0:
                level = HEAD_LEVEL
            else:
                # distance 1 (right behind the head) → TRAIL_LEVELS, the tail end → 1
                level = 1 + (TRAIL_LEVELS - 1) * (length - distance) // max(1, length - 1)
            out.append((row, level))
        return out

    def _new_column(self, *, first: bool) -> RainColumn:
        rnd = self._random
        rows = self.rows
        length = rnd.randint(max(2, rows // 4), max(3, rows * 3 // 4))
        head = rnd.uniform(-rows, rows) if first else -rnd.uniform(1, rows)
        speed = rnd.uniform(_MIN_SPEED, _MAX_SPEED)
        glyphs = [rnd.randrange(len(GLYPHS)) for _ in range(rows)]
        return RainColumn(head=head, speed=speed, length=length, glyphs=glyphs)


def _tint_tiles(tint: RGB, cell_w: int, cell_h: int) -> list[list[tuple[bytes, ...]]]:
    """``tiles[level][glyph]``: the cell's pixel rows as RGBA bytes, one list per level."""
    head = head_colour(tint)
    tiles: list[list[tuple[bytes, ...]]] = [[]]  # level 0 is never drawn
    for level in range(1, HEAD_LEVEL + 1):
        r, g, b = head if level == HEAD_LEVEL else tint
        on = bytes((r, g, b, level_alpha(level)))
        tiles.append([_glyph_tile(glyph, on, cell_w, cell_h) for glyph in GLYPHS])
    return tiles


def _glyph_tile(glyph: Glyph, on: bytes, cell_w: int, cell_h: int) -> tuple[bytes, ...]:
    off = bytes(4)
    rows = []
    for y in range(cell_h):
        pixels = [
            on if y < GLYPH_HEIGHT and x < GLYPH_WIDTH and glyph.lit(x, y) else off
            for x in range(cell_w)
        ]
        rows.append(b"".join(pixels))
    return tuple(rows)

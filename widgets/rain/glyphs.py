"""5×7 bitmap glyphs for the Matrix rain: digit-, symbol- and katakana-like shapes.

Every glyph is drawn here as seven rows of five characters (``#`` lit, ``.`` dark) and
parsed once at import into a :class:`Glyph` of row bit masks. Mirror images of the
asymmetric katakana-like shapes are added as extra glyphs, as long as they differ from
every drawn one, so the set stays free of duplicates.
"""

from __future__ import annotations

from dataclasses import dataclass

GLYPH_WIDTH = 5
"""Width of every glyph in pixels."""
GLYPH_HEIGHT = 7
"""Height of every glyph in pixels."""


@dataclass(frozen=True)
class Glyph:
    """One bitmap glyph: ``rows`` holds seven 5-bit masks, bit 4 is the leftmost pixel."""

    name: str
    rows: tuple[int, ...]

    def lit(self, x: int, y: int) -> bool:
        """Whether the pixel at column ``x`` (0-4) and row ``y`` (0-6) is lit."""
        return bool(self.rows[y] >> (GLYPH_WIDTH - 1 - x) & 1)

    def mirrored(self) -> Glyph:
        """The glyph flipped left to right."""
        flipped = tuple(
            sum(1 << x for x in range(GLYPH_WIDTH) if row >> (GLYPH_WIDTH - 1 - x) & 1)
            for row in self.rows
        )
        return Glyph(f"{self.name}~", flipped)

    def art(self) -> str:
        """The glyph as seven lines of ``#`` and ``.`` (handy in test failures)."""
        return "\n".join(
            "".join("#" if self.lit(x, y) else "." for x in range(GLYPH_WIDTH))
            for y in range(GLYPH_HEIGHT)
        )


def parse_glyph(name: str, art: str) -> Glyph:
    """Build a glyph from whitespace-separated rows of ``#``/``.``; ValueError if malformed."""
    rows = art.split()
    if len(rows) != GLYPH_HEIGHT or any(len(row) != GLYPH_WIDTH for row in rows):
        raise ValueError(
            f"glyph {name!r} must be {GLYPH_HEIGHT} rows of {GLYPH_WIDTH} characters, got {rows!r}"
        )
    masks = []
    for row in rows:
        if set(row) - {"#", "."}:
            raise ValueError(f"glyph {name!r} may only use '#' and '.', got {row!r}")
        masks.append(int(row.replace("#", "1").replace(".", "0"), 2))
    if not any(masks):
        raise ValueError(f"glyph {name!r} has no lit pixel")
    return Glyph(name, tuple(masks))


_DIGITS = {
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ..##. .#... #.... #####",
    "3": "####. ....# ....# .###. ....# ....# ####.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. ..#.. .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ...#. .##..",
}

_SYMBOLS = {
    "colon": "..... ..#.. ..#.. ..... ..#.. ..#.. .....",
    "equals": "..... ..... ##### ..... ##### ..... .....",
    "plus": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    "star": "..... #.#.# .###. ##### .###. #.#.# .....",
    "less": "...#. ..#.. .#... #.... .#... ..#.. ...#.",
    "greater": ".#... ..#.. ...#. ....# ...#. ..#.. .#...",
    "broken-bar": "..#.. ..#.. ..#.. ..... ..#.. ..#.. ..#..",
    "diamond": "..#.. .#.#. #...# .#.#. ..#.. ..... .....",
    "dagger": "..#.. ##### ..#.. ..#.. ..#.. ..#.. .....",
    "dots": "#...# ..... ..#.. ..... #...# ..... ..#..",
}

_KATAKANA = {
    "a": "##### ....# ..##. ..#.. ..#.. .#... #....",
    "i": "....# ...#. ..##. .#.#. #..#. ...#. ...#.",
    "u": "..#.. ##### #...# ....# ...#. ..#.. ##...",
    "e": "..... ##### ..#.. ..#.. ..#.. ..#.. #####",
    "o": "...#. ##### ...#. ..##. .#.#. #..#. ..##.",
    "ka": ".#... ##### .#..# .#..# .#..# #...# #..#.",
    "ki": "..#.. ##### ..#.. ##### ..#.. ..#.. ..#..",
    "ku": ".#... .#### #...# ....# ...#. ..#.. ##...",
    "ke": ".#... .#### #..#. ...#. ...#. ..#.. .#...",
    "ko": "..... ##### ....# ....# ....# ##### .....",
    "sa": ".#.#. ##### .#.#. .#.#. ...#. ..#.. .#...",
    "shi": "#.... .#..# #...# ....# ...#. ..#.. ##...",
    "su": "##### ....# ...#. ..#.. .#.#. #...# .....",
    "se": ".#... .#... ##### .#..# .#.#. .#... .####",
    "so": "#...# #...# .#..# ....# ...#. ..#.. ##...",
    "ta": ".#... .#### #...# .##.# ...#. ..#.. ##...",
    "chi": "...## ###.. ..#.. ##### ..#.. ..#.. .#...",
    "tsu": "#.#.# #.#.# ....# ....# ...#. ..#.. ##...",
    "te": ".###. ..... ##### ..#.. ..#.. .#... #....",
    "na": "..#.. ##### ..#.. ..#.. ..#.. .#... #....",
    "ni": "..... .###. ..... ..... ..... ##### .....",
    "nu": "##### ....# .#.#. ..#.. .#.#. #.... .....",
    "ne": "..#.. ##### ...#. ..#.. .###. #.#.# ..#..",
    "ha": "..... .#.#. .#..# #...# #...# #...# .....",
    "hi": "#.... #..## ###.. #.... #.... #.... .####",
    "fu": "##### ....# ....# ...#. ..#.. .#... #....",
    "ho": "..#.. ##### ..#.. #.#.# #.#.# ..#.. ..#..",
    "ma": "##### ....# ...#. #.#.. .#... ..#.. .....",
    "mi": ".##.. ...## ..... .##.. ...## .##.. ...##",
    "mu": "..#.. ..#.. .#... .#... #..#. #...# #####",
    "me": "....# #..#. .##.. ..#.. .#.#. #...# .....",
    "mo": "##### ..#.. ##### ..#.. ..#.. ..#.. ...##",
    "ya": ".#... .#.## ####. .#.#. ..#.. ..#.. ..#..",
    "yu": "..... .###. ...#. ...#. ...#. ##### .....",
    "yo": "##### ....# ....# ##### ....# ....# #####",
    "ra": ".###. ..... ##### ....# ...#. ..#.. ##...",
    "ri": "#...# #...# #...# #...# ....# ...#. ..#..",
    "ru": ".#.#. .#.#. .#.#. .#.#. .#.#. #..## #..#.",
    "re": "#.... #.... #.... #.... #...# #..#. ###..",
    "ro": "..... ##### #...# #...# #...# ##### .....",
    "wa": "##### #...# ....# ....# ...#. ..#.. ##...",
    "n": "#.... .#... ....# ....# ...#. ..#.. ##...",
}


def _build() -> tuple[Glyph, ...]:
    drawn = [
        parse_glyph(f"{group}:{name}", art)
        for group, table in (("digit", _DIGITS), ("symbol", _SYMBOLS), ("kana", _KATAKANA))
        for name, art in table.items()
    ]
    seen = {glyph.rows for glyph in drawn}
    mirrors = []
    for glyph in drawn:
        if not glyph.name.startswith("kana:"):
            continue
        mirror = glyph.mirrored()
        if mirror.rows not in seen:
            seen.add(mirror.rows)
            mirrors.append(mirror)
    return (*drawn, *mirrors)


GLYPHS: tuple[Glyph, ...] = _build()
"""Every rain glyph: digits, symbols, katakana-like shapes and their mirror images."""

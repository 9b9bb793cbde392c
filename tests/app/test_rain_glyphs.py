"""The rain's 5×7 bitmap glyphs."""

from __future__ import annotations

import pytest

from smith_tui.widgets.rain.glyphs import GLYPH_HEIGHT, GLYPH_WIDTH, GLYPHS, parse_glyph


def test_every_glyph_is_five_by_seven_and_lit() -> None:
    for glyph in GLYPHS:
        assert len(glyph.rows) == GLYPH_HEIGHT == 7, glyph.name
        assert all(0 <= row < 1 << GLYPH_WIDTH for row in glyph.rows), glyph.name
        assert GLYPH_WIDTH == 5
        assert any(glyph.rows), glyph.name
        lines = glyph.art().splitlines()
        assert [len(line) for line in lines] == [5] * 7


def test_glyphs_are_distinct_and_cover_digits_symbols_and_kana() -> None:
    bitmaps = [glyph.rows for glyph in GLYPHS]
    assert len(set(bitmaps)) == len(bitmaps)
    assert len({glyph.name for glyph in GLYPHS}) == len(GLYPHS)
    groups = {glyph.name.split(":")[0] for glyph in GLYPHS}
    assert groups == {"digit", "symbol", "kana"}
    assert sum(glyph.name.startswith("digit:") for glyph in GLYPHS) == 10
    assert sum(glyph.name.startswith("kana:") for glyph in GLYPHS) > 40
    assert any(glyph.name.endswith("~") for glyph in GLYPHS)  # mirrored kana


def test_pixels_and_mirror() -> None:
    glyph = parse_glyph("t", "#.... ..... ..... ..... ..... ..... ....#")
    assert glyph.lit(0, 0) and glyph.lit(4, 6)
    assert not glyph.lit(4, 0) and not glyph.lit(0, 6)
    mirror = glyph.mirrored()
    assert mirror.lit(4, 0) and mirror.lit(0, 6) and not mirror.lit(0, 0)
    assert mirror.mirrored().rows == glyph.rows


@pytest.mark.parametrize(
    ("art", "message"),
    [
        ("##### ##### #####", "7 rows of 5"),
        ("###### ..... ..... ..... ..... ..... .....", "7 rows of 5"),
        ("##x## ..... ..... ..... ..... ..... .....", "only use"),
        ("..... ..... ..... ..... ..... ..... .....", "no lit pixel"),
    ],
)
def test_malformed_glyph_art_is_rejected(art: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_glyph("bad", art)

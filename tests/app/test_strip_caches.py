"""Strips make their caches when first used, and behave as Textual's own strips do."""

from __future__ import annotations

import tracemalloc

import pytest
from rich.segment import Segment
from textual.color import Color
from textual.filter import DimFilter
from textual.strip import Strip
from textual.style import Style

from smith_tui.widgets import textual_compat as compat
from smith_tui.widgets import textual_fixes

SEGMENTS = [Segment("def load(path):", Style(bold=True).rich_style), Segment("  # the loader")]


def eager(segments: list[Segment], cell_length: int | None = None) -> Strip:
    """A strip made by Textual's own ``__init__`` (all seven caches at once)."""
    strip = Strip.__new__(Strip)
    compat.ORIGINAL_STRIP_INIT(strip, segments, cell_length)
    return strip


def slot_is_set(strip: Strip, name: str) -> bool:
    try:
        object.__getattribute__(strip, name)
    except AttributeError:
        return False
    return True


def test_a_new_strip_has_no_caches_until_one_is_used() -> None:
    textual_fixes.apply()
    strip = Strip(SEGMENTS)
    assert not any(slot_is_set(strip, name) for name in compat.STRIP_CACHES)
    strip.crop(2, 9)
    assert [name for name in compat.STRIP_CACHES if slot_is_set(strip, name)] == ["_crop_cache"]
    assert all(slot_is_set(eager(SEGMENTS), name) for name in compat.STRIP_CACHES)


def test_lazy_strips_give_what_eager_ones_give_and_cache_it() -> None:
    textual_fixes.apply()
    style = Style(background=Color.parse("#102030"))
    dim = DimFilter()
    operations = [
        ("divide", lambda s: s.divide([3, 8, 40])),
        ("crop", lambda s: s.crop(2, 11)),
        ("apply_style", lambda s: s.apply_style(style)),
        ("adjust_cell_length", lambda s: s.adjust_cell_length(40, style)),
        ("crop_extend", lambda s: s.crop_extend(1, 35, style)),
        ("apply_offsets", lambda s: s.apply_offsets(4, 2)),
        ("apply_filter", lambda s: s.apply_filter(dim, Color(0, 0, 0))),
    ]
    for name, operation in operations:
        lazy, reference = Strip(SEGMENTS), eager(SEGMENTS)
        got, expected = operation(lazy), operation(reference)
        assert got == expected, name
        assert operation(lazy) is got, f"{name}: the second call is answered from its cache"
        assert lazy.text == reference.text and lazy.cell_length == reference.cell_length


def test_an_unknown_attribute_is_still_an_attribute_error() -> None:
    textual_fixes.apply()
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = Strip(SEGMENTS).nope  # type: ignore[attr-defined]
    assert not hasattr(Strip(SEGMENTS), "__rich__")


def test_lazy_strips_take_a_fraction_of_the_memory() -> None:
    textual_fixes.apply()

    def bytes_per_strip(make: object) -> float:
        tracemalloc.start()
        try:
            kept = [make(SEGMENTS) for _ in range(2_000)]  # type: ignore[operator]
            size = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        assert len(kept) == 2_000
        return size / 2_000

    lazy, reference = bytes_per_strip(Strip), bytes_per_strip(eager)
    assert lazy < reference / 3, (lazy, reference)

"""RainField: deterministic falling trails and their RGBA rendering; the strip layout."""

from __future__ import annotations

import time

import pytest

from smith_tui.widgets.rain.frames import (
    HEAD_LEVEL,
    RainField,
    head_colour,
    parse_tint,
)
from smith_tui.widgets.rain.layout import strip_layout

ROLE_TINTS = {"Tank": "#FFB000", "Link": "#00E5FF", "Niobe": "#FF4FD8"}


def _pixels(data: bytes) -> list[tuple[int, int, int, int]]:
    return [tuple(data[i : i + 4]) for i in range(0, len(data), 4)]  # type: ignore[misc]


def _stepped(seed: int, steps: int, **kwargs: object) -> RainField:
    field = RainField(24, 16, seed=seed, **kwargs)  # type: ignore[arg-type]
    for _ in range(steps):
        field.step()
    return field


def test_same_seed_same_rain_other_seed_other_rain() -> None:
    a, b, c = _stepped(7, 25), _stepped(7, 25), _stepped(8, 25)
    assert a.heads() == b.heads()
    assert a.render_rgba() == b.render_rgba()
    assert a.render_rgba() != c.render_rgba()


def test_heads_move_down_until_a_trail_starts_over() -> None:
    field = RainField(30, 20, seed=3)
    moved = restarted = 0
    for _ in range(60):
        before = [(trail, trail.head) for trail in field.trails]
        field.step()
        for (trail, head), now in zip(before, field.trails, strict=True):
            if now is trail:
                assert now.head > head
                moved += 1
            else:  # the old trail fell off the bottom; the new one starts above the top
                assert trail.head_row - trail.length >= field.rows
                assert now.head < 0
                restarted += 1
    assert moved and restarted


def test_heads_are_the_brightest_and_trails_fade_upwards() -> None:
    field = _stepped(5, 30)
    grid = field.levels()
    checked = 0
    for column, trail in enumerate(field.trails):
        head = trail.head_row
        if not 0 <= head < field.rows:
            continue
        assert grid[head][column] == HEAD_LEVEL
        above = [grid[row][column] for row in range(head - 1, max(-1, head - trail.length), -1)]
        above = [level for level in above if level]
        assert all(level < HEAD_LEVEL for level in above)
        assert above == sorted(above, reverse=True)
        checked += 1
    assert checked


def test_render_size_natural_and_scaled() -> None:
    field = _stepped(1, 10)
    assert field.natural_size == (24 * 6, 16 * 8)
    assert len(field.render_rgba()) == 144 * 128 * 4
    assert len(field.render_rgba(144, 128)) == 144 * 128 * 4
    scaled = field.render_rgba(288, 64)
    assert len(scaled) == 288 * 64 * 4
    with pytest.raises(ValueError, match="positive size"):
        field.render_rgba(0, 10)


@pytest.mark.parametrize("role", sorted(ROLE_TINTS))
def test_lit_pixels_use_the_role_colour(role: str) -> None:
    tint = parse_tint(ROLE_TINTS[role])
    head = head_colour(tint)
    field = _stepped(11, 20, tint=ROLE_TINTS[role])
    pixels = _pixels(field.render_rgba())
    lit = [p for p in pixels if p[3]]
    assert lit, "the rain drew nothing"
    assert {p[:3] for p in lit} == {tint, head}
    assert all(p == (0, 0, 0, 0) for p in pixels if not p[3])
    assert {p[3] for p in lit if p[:3] == head} == {255}
    assert max(p[3] for p in lit if p[:3] == tint) < 255
    assert sum(head) > sum(tint)


def test_retint_recolours_the_same_rain() -> None:
    field = _stepped(2, 15, tint="#FFB000")
    amber = field.render_rgba()
    field.set_tint("#00E5FF")
    cyan = field.render_rgba()
    assert amber != cyan
    assert [p[3] for p in _pixels(amber)] == [p[3] for p in _pixels(cyan)]
    assert {p[:3] for p in _pixels(cyan) if p[3]} == {(0, 229, 255), head_colour((0, 229, 255))}


@pytest.mark.parametrize("bad", ["amber", "#FFB00", "#GGGGGG", (1, 2), (0, 0, 256)])
def test_bad_tints_say_what_to_fix(bad: object) -> None:
    with pytest.raises(ValueError, match="tint"):
        parse_tint(bad)  # type: ignore[arg-type]


def test_bad_field_sizes_are_rejected() -> None:
    with pytest.raises(ValueError, match="at least 1×1"):
        RainField(0, 5)
    with pytest.raises(ValueError, match="at least 5×7"):
        RainField(5, 5, cell_px=(4, 8))


def test_strip_is_forty_percent_with_a_capped_pixel_budget() -> None:
    narrow = strip_layout(100, 12)
    assert (narrow.glyph_columns, narrow.cells_wide, narrow.cells_high) == (20, 40, 12)
    wide = strip_layout(300, 30)
    huge = strip_layout(1000, 30)
    assert wide.glyph_columns == huge.glyph_columns == 48
    assert wide.cells_wide == 96  # two cells per glyph column
    assert (wide.width_px, wide.height_px) == (huge.width_px, huge.height_px) == (288, 240)
    assert strip_layout(300, 200).glyph_rows == 40
    assert strip_layout(3, 1).glyph_columns == 1
    for args, message in [((1, 5), "2 columns wide"), ((80, 0), "at least one row")]:
        with pytest.raises(ValueError, match=message):
            strip_layout(*args)
    with pytest.raises(ValueError, match="fraction"):
        strip_layout(80, 5, fraction=1.5)


def test_frame_render_speed_is_printed() -> None:
    layout = strip_layout(300, 30)
    field = RainField(layout.glyph_columns, layout.glyph_rows, seed=4, tint="#FF4FD8")
    width, height = field.natural_size
    for _ in range(10):
        field.step()
    frames = 100
    started = time.perf_counter()
    for _ in range(frames):
        field.step()
        data = field.render_rgba(width, height)
    per_frame_ms = (time.perf_counter() - started) / frames * 1000
    assert len(data) == width * height * 4
    print(
        f"\nrain frame {layout.glyph_columns}x{layout.glyph_rows} glyphs = {width}x{height} px: "
        f"{per_frame_ms:.2f} ms per step+render"
    )

"""Markdown parts drawn as lines (``line_markdown.part_lines``) match Textual's compositor
over the same built part, text and style of every cell."""

from __future__ import annotations

from typing import Any

import pytest
from textual._compositor import Compositor
from textual.geometry import Size
from textual.strip import Strip

from smith_tui.widgets.transcript import line_markdown
from smith_tui.widgets.transcript.line_markdown import Templates, Unsupported, part_lines
from smith_tui.widgets.transcript.streaming_markdown import MarkdownPart
from tests.app.test_line_parts import stream
from tests.support.transcript_app import TranscriptApp, sample_markdown

TEXT = (
    "## Step 1\n\nIt changes `a.py` so that **every** caller gets *one* value, "
    "~~not two~~, and [a link](https://example.com) too; long enough to wrap.\n\n"
    "# Big title\n\nAnother paragraph.\n\n### Third\n\n#### Fourth\n\n"
    "1. first\n2. second, which is a longer item so that it wraps under itself\n\n"
    "> A quoted paragraph with **bold**, long enough to wrap inside the quote's border.\n"
    "> Its second line.\n\n***\n\nAfter a rule.\n\n"
    "- an item\n  - nested in it, long enough to wrap beside its bullet at sixty columns\n"
    "  1. and numbered\n- a loose item\n\n  with a second paragraph\n\n"
    "1. one\n   1. inner\n   - inner bullet\n2. two\n\n"
    "-\n\n#\n\n- an item\n-\n- after an empty item\n\n" + sample_markdown(3)
)

Cells = list[list[tuple[str, object]]]


def composited(part: MarkdownPart) -> list[Strip]:
    """What Textual's compositor draws for ``part`` on its own, at its laid-out width."""
    gutter = part.styles.gutter
    outer = part.outer_size
    inner = Size(outer.width - gutter.width, outer.height - gutter.height)
    size = Size(outer.width, part.arrange(inner).total_region.bottom + gutter.height)
    compositor = Compositor()
    compositor.reflow(part, size)
    return compositor.render_strips(size)


def cells(strips: list[Strip]) -> Cells:
    """Every cell's character and style."""
    return [[(c, s.style) for s in strip for c in s.text] for strip in strips]


async def drawn_both_ways(text: str, width: int, theme: str) -> list[tuple[Cells, Cells]]:
    """For each built part of an answer holding ``text``: (compositor cells, our cells)."""
    app = TranscriptApp()
    out: list[tuple[Cells, Cells]] = []
    async with app.run_test(size=(width, 60)) as pilot:
        app.theme = theme
        transcript = app.transcript
        await transcript.load_messages(  # given whole: built as widgets, not streamed
            [
                {"role": "user", "content": "q", "position": 0},
                {"role": "assistant", "content": text, "position": 1},
            ]
        )
        await transcript.settle()
        await pilot.pause()
        parts = list(transcript.query(MarkdownPart))
        assert parts
        for part in parts:
            templates = Templates([part] + [p for p in parts if p.follows == part.follows])
            want = cells(composited(part))
            got = cells(part_lines(templates, part.text, part.outer_size.width))
            out.append((want, got))
    return out


@pytest.mark.parametrize("width", [60, 157])
@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_lines_match_textuals_widgets_cell_for_cell(width: int, theme: str) -> None:
    for want, got in await drawn_both_ways(TEXT, width, theme):
        assert len(got) == len(want)
        for row, (a, b) in enumerate(zip(want, got, strict=True)):
            assert a == b, f"row {row} differs"


TABLE = (
    "Before the table.\n\n| key | type | default |\n|---|---|---|\n"
    "| `timeout_1` | float | `1.5` |\n"
    "| `retries` | int, with a description long enough to wrap inside its cell | `3` |\n"
    '| `mode` | str | `"auto"` |\n\nAfter it.\n\n'
)


@pytest.mark.parametrize("width", [60, 157])
@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_a_table_is_drawn_as_the_grid_lays_it_out(width: int, theme: str) -> None:
    """Columns shared and expanded as the grid does, a wrapped cell stretching its row,
    keylines around every cell, the header's colours: cell for cell."""
    compared = await drawn_both_ways(TABLE + TEXT, width, theme)
    assert any("┼" in "".join(c for c, _ in row) for _, got in compared for row in got)
    for want, got in compared:
        assert len(got) == len(want)
        for row, (a, b) in enumerate(zip(want, got, strict=True)):
            assert a == b, f"row {row} differs"


async def test_a_growing_part_draws_only_its_blocks_after_the_last_boundary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Drawn prefix by prefix, as a streamed part grows, each draw gives the cells a fresh
    draw of that prefix gives (whole texts match the compositor, above), and parses only
    the text after the blocks it kept and boxes (the part's padding and background) only
    the rows it did not box before."""
    code = "```python\ndef load(path: str) -> dict[str, int]:\n    return {}\n```\n\n"
    text = code + TEXT + "A last paragraph.\n\nAnd [a reference][r] link.\n\n[r]: https://x.y\n"
    app = TranscriptApp()
    async with app.run_test(size=(100, 60)) as pilot:
        message = await stream(pilot, sample_markdown(24))  # long enough for templates
        widget = message.body._templates
        assert widget is not None and widget.ready and widget.templates is not None
        growing = widget.templates
        width = message.body._tail.size.width

        def fresh() -> Templates:
            return Templates([widget._firsts, widget._catalog])

        parsed: list[int] = []
        real_build = line_markdown.build_blocks

        def counting(markdown: object, source: str) -> object:
            parsed.append(len(source))
            return real_build(markdown, source)  # type: ignore[arg-type]

        boxed: list[int] = []  # rows boxed in the part's box, per call
        real_box = line_markdown._boxed_at

        def counting_box(template: Any, width: int, height: int, lines: Any, t: Any) -> Any:
            if template is growing.part:
                boxed.append(len(lines))
            return real_box(template, width, height, lines, t)

        prefixes = [text[:end] for end in range(7, len(text), 7)] + [text]
        drawn = rows = 0
        for prefix in prefixes:
            try:
                want: Cells | None = cells(part_lines(fresh(), prefix, width))
            except Unsupported:
                want = None
            with monkeypatch.context() as patch:
                patch.setattr(line_markdown, "build_blocks", counting)
                patch.setattr(line_markdown, "_boxed_at", counting_box)
                try:
                    got: Cells | None = cells(part_lines(growing, prefix, width))
                except Unsupported:
                    got = None
            assert got == want, f"{len(prefix)} characters drawn differently"
            drawn += got is not None
            rows += len(got or ())
        assert drawn > len(prefixes) * 0.9  # (a lone "1" or "-" cannot be drawn yet)
        whole = sum(len(p) for p in prefixes)
        assert sum(parsed) < whole / 3, (sum(parsed), whole)
        assert boxed and sum(boxed) < rows / 3, (sum(boxed), rows)
        # A theme change draws the kept blocks again in the new styles.
        before = cells(part_lines(growing, TEXT, width))
        app.theme = "textual-light"
        await pilot.pause()
        await pilot.pause()
        after = cells(part_lines(growing, TEXT, width))
        assert after == cells(part_lines(fresh(), TEXT, width)) != before


WIDE_CODE = (
    "A fence whose code is wider than the part:\n\n"
    "```python\nresult = compute_the_value(first_argument, second_argument, third)\n"
    "short = 1\n```\n\nAfter it.\n"
)


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_a_code_line_wider_than_its_fence_is_cut_as_the_fence_scrolls_it(
    theme: str,
) -> None:
    """A fence scrolls its code sideways: a wide line runs out of view, it does not wrap."""
    for want, got in await drawn_both_ways(WIDE_CODE, 30, theme):
        assert got == want

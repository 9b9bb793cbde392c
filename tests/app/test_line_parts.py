"""A streamed answer's parts drawn as lines (``line_part``): what shows is what the built
widgets show, cell for cell; the pointer, the answer's end and a theme change build them."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widget import Widget

from smith_tui.widgets.transcript.assistant_message import AssistantMessage
from smith_tui.widgets.transcript.line_part import LinePart, LineTemplates
from smith_tui.widgets.transcript.streaming_markdown import MarkdownPart, ParkedPart
from tests.support.pilot import screen_text, wait_for_still_screen, wait_until
from tests.support.transcript_app import SIZE, TranscriptApp, chunks, sample_markdown


def screen_cells(app: App[None]) -> list[list[tuple[str, object]]]:
    """Every cell on screen: its character and its style."""
    strips: list[Strip] = app.screen._compositor.render_strips()
    return [[(c, s.style) for s in strip for c in s.text] for strip in strips]


def kinds(message: AssistantMessage) -> list[str]:
    """The kind of each part of the answer, in order."""
    return [type(child).__name__ for child in message.body.children if child.display]


async def stream(
    pilot: Pilot[None], text: str, piece: int = 61, *, message: AssistantMessage | None = None
) -> AssistantMessage:
    """Stream ``text`` as an answer (not ended), every piece written before the next.

    Once the answer is long enough for templates, wait until they are ready and the
    answer has been laid out (a part is drawn at the answer's width; with none yet it is
    built): the parts frozen before that are built (that moment depends on the machine's
    load), the ones after are lines, so what a test sees does not depend on how busy the
    machine is. Pieces written faster than the screen lays out could otherwise all be
    frozen at width 0 and built.
    """
    transcript = pilot.app.transcript  # type: ignore[attr-defined]
    if message is None:
        transcript.add_user("Explain the steps")
    for chunk in chunks(text, piece):
        transcript.append_text(chunk)
        await transcript.settle()
        await asyncio.sleep(0)
        body = transcript.query_one(AssistantMessage).body
        templates = body._templates
        if templates is not None and not (templates.ready and body.size.width):
            await wait_until(
                pilot,
                lambda t=templates, b=body: t.ready and b.size.width > 0,
                "the templates ready and the answer laid out",
            )
    return transcript.query_one(AssistantMessage)


@pytest.mark.parametrize("every_block", [False, True], ids=["plain", "every-block"])
async def test_streamed_parts_are_lines_that_look_like_the_built_widgets(
    every_block: bool,
) -> None:
    text = sample_markdown(24, every_block=every_block)
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        message = await stream(pilot, text)
        assert "LinePart" in kinds(message)
        if every_block:  # the parts that hold a table, a quote, a rule, a nested list are lines too
            lines = [c for c in message.body.children if isinstance(c, LinePart)]
            for block in ("| file |", "> Step", "***", "  - the loader"):
                assert any(block in part.text for part in lines), block
        assert message.body.children[-1] is message.body._tail  # the growing part
        await pilot.pause()
        if every_block:
            assert "test_24.py" in screen_text(app)  # the last table is on screen
        drawn = screen_cells(app)
        app.transcript.end_assistant()
        await app.transcript.settle()
        body = message.body
        # Its end built the parts near the view and parked the far ones; no line is left.
        await wait_until(
            pilot,
            lambda: not body.query(LinePart) and not body.query(LineTemplates),
            "lines replaced by widgets",
        )
        await pilot.pause()
        assert any(isinstance(child, MarkdownPart) for child in body.children)
        assert screen_cells(app) == drawn


async def test_a_short_answer_is_built_as_before() -> None:
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        message = await stream(pilot, "A short answer with `code` and **bold**.\n")
        assert kinds(message) == ["MarkdownPart"]
        assert not message.body.query(LineTemplates)


async def test_an_answer_of_a_few_parts_is_built_as_before() -> None:
    """The templates cost about what a few parts do: a 3 KB answer never mounts them."""
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        message = await stream(pilot, sample_markdown(12))
        assert message.body.part_count > 3
        assert "LinePart" not in kinds(message)
        assert not message.body.query(LineTemplates)


async def test_the_pointer_builds_the_part_it_enters_and_the_stream_goes_on() -> None:
    text = sample_markdown(50)
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        half = len(text) // 2
        message = await stream(pilot, text[:half])
        body = message.body

        # Parts before the tail: lines, or parked when far (near again, they are lines).
        def frozen() -> list[ParkedPart]:
            return [c for c in body.children if isinstance(c, ParkedPart) and c is not body._tail]

        assert frozen() and isinstance(body._tail, LinePart), kinds(message)[-5:]
        # A part frozen far above is mounted unmeasured (no height) until a parking pass
        # builds it; the screen places it at its next layout. Only then can the view
        # scroll to it (before, scroll_to_widget finds no region and the view stays).
        await wait_until(
            pilot,
            lambda: not body.unmeasured and frozen()[-1].virtual_region.height > 0,
            "the frozen parts measured and placed",
        )
        # The reader scrolls up to a frozen part (a part is taller than this screen) and
        # points at it.
        app.transcript.scroll_to_widget(frozen()[-1], animate=False, top=True)
        point = (10, SIZE[1] // 2)

        def pointed() -> Widget:
            return app.screen.get_widget_at(*point)[0]

        await wait_until(
            pilot,
            lambda: isinstance(pointed(), LinePart) and pointed() is not body._tail,
            "a frozen part under the pointer",
        )
        # Parts above may still be swapped in (parked -> lines) and shift the one under the
        # point; the hover first lets the app run, so it would enter another part than the
        # one picked. Once the screen is still, the part under the point stays there.
        await wait_for_still_screen(pilot)
        assert isinstance(pointed(), LinePart) and pointed() is not body._tail
        part = pointed()
        await pilot.hover(None, offset=point)
        await wait_until(pilot, lambda: part.parent is None, "the part built")
        # The screen's next layout places the built part under the pointer (until then the
        # compositor's map still holds the line part it replaced).
        await wait_until(
            pilot,
            lambda: any(isinstance(node, MarkdownPart) for node in pointed().ancestors_with_self),
            "the built part under the pointer",
        )
        assert isinstance(body._tail, LinePart)  # the others stay lines
        # Back at the bottom, the pointer over the growing part builds it too.
        app.transcript.scroll_end(animate=False, immediate=True)
        await wait_until(
            pilot, lambda: body._tail in pointed().ancestors_with_self, "the tail under the pointer"
        )
        await pilot.hover(None, offset=point)
        await wait_until(pilot, lambda: isinstance(body._tail, MarkdownPart), "the tail built")
        for chunk in chunks(text[half:], 61):
            app.transcript.append_text(chunk)
            await app.transcript.settle()
        app.transcript.end_assistant()
        await app.transcript.settle()
        assert message.entry.text == text
        parts = [c for c in body.children if isinstance(c, MarkdownPart | ParkedPart)]
        assert "".join(part.text for part in parts) == text


async def test_a_theme_change_draws_the_lines_again() -> None:
    text = sample_markdown(24)
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        message = await stream(pilot, text)
        dark = screen_cells(app)
        app.theme = "textual-light"
        await pilot.pause()
        await pilot.pause()
        light = screen_cells(app)
        assert light != dark
        app.transcript.end_assistant()
        await app.transcript.settle()
        body = message.body
        await wait_until(pilot, lambda: not body.query(LinePart), "lines replaced by widgets")
        await pilot.pause()
        assert screen_cells(app) == light


async def test_a_part_the_lines_cannot_draw_is_built() -> None:
    head = sample_markdown(24)
    nested = "- a NESTED-CODE\n\n  ```\n  x = 1\n  ```\n\n"  # no template: code in an item
    rest = sample_markdown(6, marker="THE-END")
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        message = await stream(pilot, head + nested)
        body = message.body
        # before the item with code: lines
        assert isinstance(body.children[-2], LinePart), [
            (type(c).__name__, getattr(c, "text", "")[:20]) for c in body.children
        ]
        holding = [c for c in body.children if "NESTED-CODE" in getattr(c, "text", "")]
        assert len(holding) == 1 and isinstance(
            holding[0], MarkdownPart
        )  # the item with code: built
        await stream(pilot, rest, message=message)
        assert isinstance(body._tail, LinePart)  # after it: lines again
        app.transcript.end_assistant()
        await app.transcript.settle()
        await wait_until(pilot, lambda: "THE-END" in screen_text(app), "the end shown")
        parts = [c for c in body.children if isinstance(c, MarkdownPart | ParkedPart)]
        assert "".join(part.text for part in parts) == head + nested + rest


async def test_an_unfinished_line_the_lines_cannot_draw_waits_for_its_end() -> None:
    """``  -`` under an item (``- x``) is a heading's underline until the line goes on (a
    setext heading in a list item has no template): the growing part shows its finished
    lines until then, and stays lines."""
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        message = await stream(pilot, sample_markdown(24))
        body = message.body
        tail = body._tail
        assert isinstance(tail, LinePart)
        for piece, shows in (
            ("\n- x\n  -", None),
            (" WAITED\n", "WAITED"),
            ("\n#", None),
            (" TITLE", "TITLE"),
        ):
            app.transcript.append_text(piece)
            await app.transcript.settle()
            assert body._tail is tail, piece
            if shows is not None:
                await wait_until(pilot, lambda s=shows: s in screen_text(app), shows)
        app.transcript.append_text("\n\n- y\n  -")
        app.transcript.end_assistant()
        await app.transcript.settle()
        last = body.children[-1]  # the held-back line is shown: built, as lines cannot
        assert isinstance(last, MarkdownPart) and last.text.endswith("TITLE\n\n- y\n  -")
        assert message.entry.text.endswith("TITLE\n\n- y\n  -")


async def test_a_view_following_the_stream_draws_each_part_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At the bottom, what is below the view is what was written since it last scrolled to
    the end, which it is about to show: it is not parked (parked, a part was drawn again as
    lines a flush later, over and over at the window's edge)."""
    drawn: Counter[str] = Counter()
    real = LinePart.drawn.__func__  # type: ignore[attr-defined]

    def counting(cls: type[LinePart], text: str, width: int, **kwargs: object) -> LinePart:
        drawn[text] += 1
        return real(cls, text, width, **kwargs)

    monkeypatch.setattr(LinePart, "drawn", classmethod(counting))
    windows: list[tuple[int, int]] = []  # what parking asked of the answer, rows below it
    real_park = AssistantMessage.park_outside

    async def recording(self: AssistantMessage, window: tuple[int, int]) -> bool:
        windows.append(window)
        return await real_park(self, window)

    monkeypatch.setattr(AssistantMessage, "park_outside", recording)
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        message = await stream(pilot, sample_markdown(60, every_block=True), piece=320)
        assert app.transcript.following
        # Every window reached past the answer's end (a part redrawn twice shows this
        # only when a pass came between a write and the scroll, in some runs).
        assert windows and all(end > message.outer_size.height for _, end in windows)
        parked = [c for c in message.body.children if type(c) is ParkedPart]
        assert len(parked) > 3  # far above the view: parked, as before
    assert len(drawn) > 10  # most parts were drawn as lines, each of them once
    assert drawn and max(drawn.values()) == 1, drawn.most_common(3)

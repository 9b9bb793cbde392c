"""A streamed answer's parts drawn as lines (``line_part``): what shows is what the built
widgets show, cell for cell; the pointer, the answer's end and a theme change build them."""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.strip import Strip

from smith_tui.widgets.transcript.assistant_message import AssistantMessage
from smith_tui.widgets.transcript.line_part import LinePart, LineTemplates
from smith_tui.widgets.transcript.streaming_markdown import MarkdownPart
from tests.support.pilot import wait_until
from tests.support.transcript_app import SIZE, TranscriptApp, chunks, sample_markdown


def screen_cells(app: App[None]) -> list[list[tuple[str, object]]]:
    """Every cell on screen: its character and its style."""
    strips: list[Strip] = app.screen._compositor.render_strips()
    return [[(c, s.style) for s in strip for c in s.text] for strip in strips]


def kinds(message: AssistantMessage) -> list[str]:
    """The kind of each part of the answer, in order."""
    return [type(child).__name__ for child in message.body.children if child.display]


async def stream(app: TranscriptApp, text: str, piece: int = 61) -> AssistantMessage:
    """Stream ``text`` as an answer (not ended), every piece written before the next."""
    transcript = app.transcript
    transcript.add_user("Explain the steps")
    for chunk in chunks(text, piece):
        transcript.append_text(chunk)
        await transcript.settle()
        await asyncio.sleep(0)
    return transcript.query_one(AssistantMessage)


async def test_streamed_parts_are_lines_that_look_like_the_built_widgets() -> None:
    text = sample_markdown(12)
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        message = await stream(app, text)
        assert "LinePart" in kinds(message), kinds(message)
        assert message.body.children[-1] is message.body._tail  # the growing part
        await pilot.pause()
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

"""A key typed while an answer streams is drawn without waiting for the transcript.

Each flush of streamed text writes into the transcript inside one screen update (a batch),
then Textual lays out and paints the whole screen. A key typed meanwhile used to wait for
all of it; the prompt now draws its own change at once (``textual_compat.paint_now``), and a
flush no longer asks for a layout of its own by awaiting the message's mount again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest
from rich.console import RenderableType
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import AwaitMount
from textual.widgets import Static

from smith_tui.widgets.prompt_input import PromptInput
from smith_tui.widgets.textual_compat import paint_now
from smith_tui.widgets.transcript import Transcript
from tests.support.pilot import screen_text, wait_until
from tests.support.transcript_app import SIZE, TranscriptApp, chunks, sample_markdown

TYPED = "zq"


class StreamAndPrompt(TranscriptApp):
    """A transcript above a focused prompt, as on the main screen."""

    CSS = "PromptInput { height: auto; } #cover { layer: over; width: 20; height: 3; }"

    def compose(self) -> ComposeResult:
        yield Transcript(**self.options)
        yield PromptInput(id="prompt")

    def on_mount(self) -> None:
        self.screen.styles.layers = ("base", "over")
        self.query_one(PromptInput).focus()


def record_displays(app: StreamAndPrompt) -> list[str]:
    """Patch ``app`` to record, as terminal text, every update it draws while ``held``."""
    drawn: list[str] = []
    original = app._display

    def display(screen: Screen[Any], renderable: RenderableType | None) -> None:
        if renderable is not None and getattr(app, "held", False):
            drawn.append(renderable.render_segments(app.console))  # type: ignore[union-attr]
        original(screen, renderable)

    app._display = display  # type: ignore[method-assign]
    return drawn


async def test_a_key_typed_while_the_screen_is_held_is_drawn_at_once() -> None:
    app = StreamAndPrompt()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        transcript.add_user("go")
        for piece in chunks(sample_markdown(6), 200):
            transcript.append_text(piece)
        await transcript.settle()
        await pilot.pause()
        drawn = record_displays(app)
        with app.batch_update():  # as a flush holds the screen while it writes
            app.held = True  # type: ignore[attr-defined]
            await pilot.press(*TYPED)
            await wait_until(pilot, lambda: app.query_one(PromptInput).text == TYPED, "the keys")
            await pilot.pause()
            app.held = False  # type: ignore[attr-defined]
        # (Nothing else is drawn while the batch holds the screen.)
        assert any(TYPED in text for text in drawn), "the keys waited for the batch to end"
        await pilot.pause()
        assert TYPED in screen_text(app).splitlines()[-2]  # the screen's own update as before


async def test_the_prompt_waits_when_it_changes_size_or_is_covered() -> None:
    app = StreamAndPrompt()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press("a")
        await pilot.pause()
        prompt.refresh()
        assert paint_now(prompt)  # its change alone, from the last layout
        assert not paint_now(prompt)  # nothing left to draw
        prompt.refresh(layout=True)  # (a new line: where things go changes)
        assert not paint_now(prompt)
        await pilot.pause()
        cover = Static("menu", id="cover")
        await app.mount(cover)
        cover.styles.offset = (0, prompt.region.y)
        await pilot.pause()
        assert cover.region.overlaps(prompt.region)
        prompt.refresh()
        assert not paint_now(prompt)  # a menu over it: the screen's update draws both


async def test_a_streamed_message_waits_for_its_mount_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each await of Textual's ``AwaitMount`` asks its parent for a layout of the whole
    screen; every flush used to await the streamed message's mount again."""
    app = TranscriptApp()
    async with app.run_test(size=SIZE):
        transcript = app.transcript
        awaited: list[AwaitMount] = []
        original = AwaitMount.__await__

        def counting(self: AwaitMount) -> Generator[None, None, None]:
            if self._parent is transcript:
                awaited.append(self)
            return original(self)

        monkeypatch.setattr(AwaitMount, "__await__", counting)
        pieces = chunks(sample_markdown(4), 120)
        transcript.append_text(pieces[0])
        await transcript.settle()
        first = len(awaited)  # (Textual awaits a mount once itself, after mounting)
        assert first >= 1
        for piece in pieces[1:]:
            transcript.append_text(piece)
            await transcript.settle()  # one flush each
            await asyncio.sleep(0)
        assert len(pieces) > 5
        assert len(awaited) == first  # not once more per flush
        transcript.end_assistant()
        await transcript.settle()
        assert len(awaited) == first

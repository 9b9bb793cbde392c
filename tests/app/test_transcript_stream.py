"""Streaming an answer into the transcript: text, reasoning, reset, parts and parking."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets import Collapsible, Markdown

from smith_tui.widgets.textual_compat import is_pruning, updates_held
from smith_tui.widgets.transcript.assistant_message import AssistantMessage
from smith_tui.widgets.transcript.streaming_markdown import (
    EAGER_CHARS,
    MarkdownPart,
    ParkedPart,
    StreamingMarkdown,
)
from tests.support.pilot import screen_text, wait_until
from tests.support.transcript_app import SIZE, TranscriptApp, chunks, sample_markdown


def shown_parts(message: AssistantMessage) -> list[str]:
    """The Markdown each part of the answer holds (live widgets and parked ones)."""
    return [
        part.text for part in message.body.children if isinstance(part, MarkdownPart | ParkedPart)
    ]


async def test_streamed_text_is_rendered_in_full() -> None:
    text = sample_markdown(20)
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        transcript.add_user("Explain the steps")
        for piece in chunks(text, 23):
            transcript.append_text(piece)
            await asyncio.sleep(0.001)
        await transcript.settle()
        message = transcript.query_one(AssistantMessage)
        assert message.source == text
        assert "".join(shown_parts(message)) == text
        assert message.body.part_count > 3  # split at block boundaries
        # every live part renders exactly its own text
        for part in message.body.query(MarkdownPart):
            assert part.source == part.text
        transcript.end_assistant()
        await transcript.settle()
        assert message.entry.text == text
        await pilot.pause()
        assert "LAST-LINE-MARKER" in screen_text(app)  # followed to the bottom


@pytest.mark.parametrize("piece", [5, 37, 161])
async def test_parts_render_like_one_markdown_document(piece: int) -> None:
    """Streamed in pieces of any size, the parts show exactly what one document shows."""
    text = sample_markdown(4)

    class SideBySide(App[None]):
        # (Only the two documents: a list row inside Textual's Markdown is a Horizontal too.)
        CSS = "#sides > * { width: 1fr; height: auto; }"

        def compose(self) -> ComposeResult:
            with Horizontal(id="sides"):
                yield StreamingMarkdown(part_chars=150)
                yield Markdown(text)

    app = SideBySide()
    async with app.run_test(size=(160, 120)) as pilot:
        split = app.query_one(StreamingMarkdown)
        for chunk in chunks(text, piece):
            split.write(chunk)
            await asyncio.sleep(0.001)
        await split.finish()
        assert split.part_count >= 4
        await pilot.pause()
        whole = app.query_one(Markdown)
        assert split.outer_size.height == whole.outer_size.height
        lines = screen_text(app).splitlines()[: whole.outer_size.height]
        assert [line[:80].rstrip() for line in lines] == [line[80:].rstrip() for line in lines]


async def test_reasoning_streams_into_a_collapsed_section() -> None:
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        transcript.begin_assistant("direct")
        for piece in chunks("First I look at the *files*, then I decide.", 6):
            transcript.append_reasoning(piece)
        transcript.append_text("The answer.")
        await transcript.settle()
        message = transcript.query_one(AssistantMessage)
        assert message.reasoning is not None
        collapsible = message.query_one(Collapsible)
        assert collapsible.collapsed
        assert message.reasoning.source == "First I look at the *files*, then I decide."
        await wait_until(pilot, lambda: "The answer." in screen_text(app), "the answer")
        assert "then I decide" not in screen_text(app)
        transcript.end_assistant()
        await transcript.settle()
        assert collapsible.title == "Reasoning"
        await pilot.pause()
        await pilot.click(collapsible.query_one("CollapsibleTitle"))
        assert not collapsible.collapsed
        await wait_until(pilot, lambda: "then I decide" in screen_text(app), "reasoning shown")
        assert message.entry.reasoning.startswith("First I look")


async def test_reset_stream_discards_the_partial_answer() -> None:
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        transcript.append_text("This partial answer will be retri")
        await transcript.settle()
        await wait_until(pilot, lambda: "partial answer" in screen_text(app), "partial answer")
        transcript.reset_stream()
        transcript.append_text("Second try, complete.")
        transcript.end_assistant()
        await transcript.settle()
        await pilot.pause()
        messages = list(transcript.query(AssistantMessage))
        assert [m.source for m in messages] == ["Second try, complete."]
        text = screen_text(app)
        assert "partial answer" not in text and "Second try, complete." in text


async def test_empty_answer_leaves_nothing_behind() -> None:
    app = TranscriptApp()
    async with app.run_test(size=SIZE):
        transcript = app.transcript
        transcript.begin_assistant("direct")
        transcript.end_assistant()
        await transcript.settle()
        assert not transcript.query(AssistantMessage)


async def test_far_parts_are_parked_and_rebuilt_when_scrolled_back() -> None:
    text = sample_markdown(30)
    app = TranscriptApp(part_chars=300)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        for piece in chunks(text, 97):
            transcript.append_text(piece)
            await asyncio.sleep(0.002)
        transcript.end_assistant()
        await transcript.settle()
        message = transcript.query_one(AssistantMessage)
        body = message.body

        def live_parts() -> int:
            return len([p for p in body.children if isinstance(p, MarkdownPart)])

        # most of the answer gets parked, and parking keeps every part's text
        await wait_until(
            pilot,
            lambda: (
                live_parts() < body.part_count // 2 and isinstance(body.children[0], ParkedPart)
            ),
            "parts parked",
        )
        assert "".join(shown_parts(message)) == text
        transcript.scroll_home(animate=False)
        await wait_until(
            pilot, lambda: isinstance(body.children[0], MarkdownPart), "first part rebuilt"
        )
        assert "## Step 1" in message.body.children[0].text
        await wait_until(pilot, lambda: "Step 1 changes" in screen_text(app), "top of the answer")


def settled_parts(message: AssistantMessage) -> list[str]:
    """What :func:`shown_parts` gives, without the parts a swap is removing."""
    return [
        part.text
        for part in message.body.children
        if isinstance(part, MarkdownPart | ParkedPart) and not is_pruning(part)
    ]


async def test_a_long_write_builds_its_end_first_and_the_rest_by_parking() -> None:
    """An answer arriving faster than the screen updates (one write of 13 KB): only its
    newest parts are built at once and its end is on screen before the rest is built;
    parking then builds the rest a few parts per pass, newest first, and parks far ones."""
    text = sample_markdown(50)
    assert len(text) > 4 * EAGER_CHARS
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        transcript.add_user("Explain the steps")
        transcript.append_text(text)
        transcript.end_assistant()
        await wait_until(pilot, lambda: "LAST-LINE-MARKER" in screen_text(app), "the end shown")
        message = transcript.query_one(AssistantMessage)
        body = message.body
        assert message.entry.text == text
        assert "".join(settled_parts(message)) == text
        assert body.unmeasured > 0  # (a pass builds 2,400 characters; 10,000 wait here)
        assert isinstance(body.children[0], ParkedPart)  # the oldest parts are built last
        built = [p for p in body.children if isinstance(p, MarkdownPart) and not is_pruning(p)]
        assert sum(len(p.text) for p in built) < 2 * EAGER_CHARS
        await wait_until(pilot, lambda: body.unmeasured == 0, "every part built", within=60)
        await transcript.settle()
        assert "".join(shown_parts(message)) == text
        await wait_until(
            pilot,
            lambda: len([p for p in body.children if isinstance(p, MarkdownPart)]) < 12,
            "far parts parked",
        )
        assert transcript.following
        assert "LAST-LINE-MARKER" in screen_text(app)
        transcript.scroll_home(animate=False)
        await wait_until(pilot, lambda: "Step 1 changes" in screen_text(app), "top of the answer")


async def test_a_flush_never_waits_for_a_paint_it_holds_back() -> None:
    """A flush holds screen updates while it writes and parks. Parking waits for a paint
    between passes that build a long answer's parts; inside a flush no paint can come (the
    wait returns on idle with nothing painted), so there it schedules the next pass."""
    text = sample_markdown(50)
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        waits_while_held: list[bool] = []
        flushes_while_building: list[bool] = []
        next_refresh, flush = transcript._next_refresh, transcript._flush

        async def recording_next_refresh() -> None:
            waits_while_held.append(updates_held(app))
            await next_refresh()

        async def recording_flush() -> None:
            # Counted once done: a flush still waiting for its message to mount takes any
            # text written meanwhile with it, so counting at its start could wait forever.
            messages = transcript.query(AssistantMessage)
            building = any(m.body.unmeasured for m in messages)
            await flush()
            flushes_while_building.append(building)

        # Parking passes outside flushes are held back until the answer's lines are in, so
        # only the flushes build its parts (a few at a time): the flushes after the first
        # find parts still to build however fast this machine builds them.
        schedule_parking = transcript._schedule_parking
        held_back: list[float] = []

        def holding_schedule_parking(delay: float = 0.2, *, recheck: bool = False) -> None:
            held_back.append(delay)

        transcript._next_refresh = recording_next_refresh  # type: ignore[method-assign]
        transcript._flush = recording_flush  # type: ignore[method-assign]
        transcript._schedule_parking = holding_schedule_parking  # type: ignore[method-assign]
        transcript.add_user("Explain the steps")
        transcript.append_text(text)  # one write far longer than a flush builds at once
        await wait_until(pilot, lambda: len(flushes_while_building) >= 1, "the first flush")
        for step in range(6):  # the answer goes on while its older parts are being built
            flushes = len(flushes_while_building)
            transcript.append_text(f"\n\nAnd one more line, number {step}.\n")
            await wait_until(pilot, lambda n=flushes: len(flushes_while_building) > n, "a flush")
        assert any(flushes_while_building[1:])  # the case happened
        transcript._schedule_parking = schedule_parking  # type: ignore[method-assign]
        if held_back:
            schedule_parking(0.02, recheck=True)
        transcript.end_assistant()
        await transcript.settle()
        # No wait for a paint while updates were held. (Waits outside flushes happen only
        # when parts are left to build once the lines are in, which a slow machine's flushes
        # may not leave: the case that matters is the flushes above that built parts.)
        assert True not in waits_while_held
        assert "".join(shown_parts(transcript.query_one(AssistantMessage))) == (
            text + "".join(f"\n\nAnd one more line, number {s}.\n" for s in range(6))
        )

"""Reopening a stored conversation costs what the screen shows, not what the answer weighs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smith_tui.engine.persistence import message_dict
from smith_tui.store import Store
from smith_tui.widgets.transcript.assistant_message import AssistantMessage
from smith_tui.widgets.transcript.streaming_markdown import MarkdownPart, ParkedPart
from tests.support.pilot import screen_text, wait_until
from tests.support.transcript_app import SIZE, TranscriptApp, sample_markdown


def long_answer_conversation() -> list[dict[str, Any]]:
    """A question and a ~25 KB answer (headings, lists, code blocks), with positions."""
    answer = sample_markdown(80, marker="THE-LAST-LINE")
    assert "Step 1\n" in answer and len(answer) > 20_000
    return [
        {"role": "user", "content": "Question", "position": 0},
        {"role": "assistant", "content": answer, "position": 1},
    ]


def parts(app: TranscriptApp) -> tuple[list[MarkdownPart], list[ParkedPart]]:
    body = app.transcript.query_one(AssistantMessage).body
    built = [child for child in body.children if isinstance(child, MarkdownPart)]
    parked = [child for child in body.children if isinstance(child, ParkedPart)]
    return built, parked


async def test_a_long_stored_answer_opens_at_its_end_with_its_top_parked() -> None:
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        await transcript.load_messages(long_answer_conversation())
        built, parked = parts(app)  # as mounted (before any parking pass)
        assert parked, "the answer's top is not built on open"
        assert len(built) < len(parked)  # a screenful of ~40 parts
        await wait_until(pilot, lambda: "THE-LAST-LINE" in screen_text(app), "the last line")
        assert (
            transcript.query_one(AssistantMessage).source
            == (long_answer_conversation()[1]["content"])
        )
        # Scrolling to the top builds what is there: the answer's first lines and the question
        # (a rebuilt part keeps the view where it was: scroll home again until both show).
        transcript.release_anchor()

        def at_top() -> bool:
            transcript.scroll_home(animate=False)
            text = screen_text(app)
            return "Question" in text and "Step 1 changes" in text

        await wait_until(pilot, at_top, "the answer's first lines, built", within=30.0)


async def test_end_stops_a_home_that_is_still_loading_older_pages(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "smith.db")
    try:
        conv = store.conversations.create("project")
        messages: list[dict[str, Any]] = []
        for n in range(300):
            messages.append({"role": "user", "content": f"Question {n}"})
            messages.append({"role": "assistant", "content": f"Answer {n}\n\n- a\n- b"})
        store.conversations.append_messages(conv, messages)

        def loader(before: int, limit: int) -> list[dict[str, Any]]:
            found = store.conversations.list_messages(conv, before_position=before, limit=limit)
            return [message_dict(m) for m in found]

        recent = [message_dict(m) for m in store.conversations.tail_messages(conv, 20)]
        app = TranscriptApp(loader=loader, page_size=16, first_page=16)
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            await transcript.load_messages(recent)
            await wait_until(pilot, lambda: "Answer 299" in screen_text(app), "the last answer")
            transcript.scroll_to_start()
            await wait_until(pilot, lambda: not transcript.following, "home pressed")
            transcript.follow()  # End, while older pages are still coming in
            await transcript.settle()
            await pilot.pause()
            assert transcript.has_older, "Home stopped before the start of the conversation"
            assert transcript.following
            await wait_until(pilot, lambda: "Answer 299" in screen_text(app), "still at the end")
            mounted = [e.position for e in transcript.entries if e.position is not None]
            assert mounted == list(range(min(mounted), 600)), "no entry lost or repeated"
    finally:
        store.close()

"""Long conversations: a bounded window of widgets, older pages on scroll-to-top, anchoring."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget

from smith_tui.engine import events as ev
from smith_tui.engine.persistence import message_dict
from smith_tui.store import Store
from smith_tui.widgets.transcript import Transcript
from smith_tui.widgets.transcript import transcript as transcript_module
from smith_tui.widgets.transcript.assistant_message import AssistantMessage
from smith_tui.widgets.transcript.history_window import HistoryWindow, Loader
from smith_tui.widgets.transcript.parking import Placeholder, child_offsets
from smith_tui.widgets.transcript.transcript import ParkedEntry
from smith_tui.widgets.transcript.user_message import UserMessage
from smith_tui.widgets.transcript.view_anchor import ViewAnchor
from tests.support.pilot import screen_text, wait_until
from tests.support.transcript_app import SIZE, TranscriptApp


def conversation(count: int) -> list[dict[str, Any]]:
    """``count`` stored messages: questions and Markdown answers, with positions."""
    out = []
    for position in range(count):
        if position % 2 == 0:
            out.append({"role": "user", "content": f"Question {position}", "position": position})
        else:
            answer = f"Answer {position}\n\n- a point\n- another\n\n`code` and **bold**."
            out.append({"role": "assistant", "content": answer, "position": position})
    return out


@contextlib.contextmanager
def stored_conversation(
    tmp_path: Path, count: int
) -> Iterator[tuple[Callable[[int], list[dict[str, Any]]], Loader, list[tuple[int, int]]]]:
    """A real store holding ``conversation(count)``: ``recent(n)`` gives its newest ``n``
    messages, ``loader`` pages older ones (each call recorded in ``calls``)."""
    store = Store.open(tmp_path / "smith.db")
    try:
        conv = store.conversations.create("project")
        stored = [{k: v for k, v in m.items() if k != "position"} for m in conversation(count)]
        store.conversations.append_messages(conv, stored)
        calls: list[tuple[int, int]] = []

        def loader(before: int, limit: int) -> list[dict[str, Any]]:
            calls.append((before, limit))
            found = store.conversations.list_messages(conv, before_position=before, limit=limit)
            return [message_dict(m) for m in found]

        def recent(n: int) -> list[dict[str, Any]]:
            return [message_dict(m) for m in store.conversations.tail_messages(conv, n)]

        yield recent, loader, calls
    finally:
        store.close()


def first_position(transcript: Transcript) -> int:
    return transcript.entry_widgets[0].entry.position  # type: ignore[attr-defined]


async def test_widget_count_stays_bounded_and_older_entries_come_back() -> None:
    app = TranscriptApp(max_widgets=120, page_size=40)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        await transcript.load_messages(conversation(1000))
        assert len(transcript.entry_widgets) == 40
        assert first_position(transcript) == 960
        assert transcript.has_older
        for i in range(300):  # a long live session at the bottom
            transcript.add_user(f"live {i}")
            if i % 50 == 0:
                await pilot.pause()
        await transcript.settle()
        await pilot.pause()
        assert len(transcript.entry_widgets) <= 120
        assert "live 299" in screen_text(app)
        # far entries are parked: the DOM stays small whatever the history
        await wait_until(pilot, lambda: transcript.query(Placeholder), "parked entries")
        assert len(list(app.screen.walk_children())) < 200
        # scrolling to the top brings the pruned entries back, newest first
        oldest_before = transcript.entries[0]
        # Laid out, with somewhere to scroll from: scrolling home from the top already would
        # not change scroll_y, and nothing would load (the cause of a timeout at load 20).
        await wait_until(pilot, lambda: transcript.scroll_y > 0, "a laid-out view")
        transcript.scroll_home(animate=False)
        await wait_until(  # 40 entries: seconds on a loaded machine
            pilot,
            lambda: len(transcript.entries) > 40 and transcript.entries[40] is oldest_before,
            "a page of 40 older entries",
            within=40.0,
        )
        # the view stays on what the user was reading
        await wait_until(pilot, lambda: transcript.scroll_y > 0, "the view kept in place")


async def test_older_pages_come_from_the_loader_until_the_first_message(tmp_path: Path) -> None:
    with stored_conversation(tmp_path, 200) as (recent_of, loader, calls):
        recent = recent_of(50)
        app = TranscriptApp(loader=loader, page_size=50, max_widgets=100)
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            await transcript.load_messages(recent)
            assert first_position(transcript) == 150
            for expected in (100, 50, 0):
                # Laid out, with somewhere to scroll from: scrolling home from the top
                # already would not change scroll_y, and nothing would load.
                await wait_until(pilot, lambda: transcript.scroll_y > 0, "a laid-out view")
                transcript.scroll_home(animate=False)
                await wait_until(  # 50 Markdown entries: seconds on a loaded machine
                    pilot,
                    lambda e=expected: first_position(transcript) == e,
                    f"page from {expected}",
                    within=40.0,
                )
                await transcript.settle()  # the page is in and the view put back
                await pilot.pause()
            assert calls == [(150, 50), (100, 50), (50, 50)]
            transcript.scroll_home(animate=False)
            await wait_until(pilot, lambda: not transcript.has_older, "the start of the history")
            assert calls[-1] == (0, 50)
            transcript.scroll_home(animate=False)
            await wait_until(pilot, lambda: "Question 0" in screen_text(app), "the first message")


async def test_view_follows_the_stream_until_the_user_scrolls_up() -> None:
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        await transcript.load_messages(conversation(30))
        await pilot.pause()
        transcript.focus()
        assert transcript.following
        for i in range(40):
            transcript.append_text(f"Streaming line {i}.\n\n")
        await transcript.settle()
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y
        assert "Streaming line 39." in screen_text(app)

        await pilot.press("pageup")
        await pilot.pause()
        assert not transcript.following
        where = transcript.scroll_y
        for i in range(40, 60):
            transcript.append_text(f"Streaming line {i}.\n\n")
        await transcript.settle()
        await pilot.pause()
        assert transcript.scroll_y == where  # the reader is not dragged along
        assert "Streaming line 59." not in screen_text(app)

        await pilot.press("end")
        await pilot.pause()
        assert transcript.following
        for i in range(60, 70):
            transcript.append_text(f"Streaming line {i}.\n\n")
        transcript.end_assistant()
        await transcript.settle()
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y
        assert "Streaming line 69." in screen_text(app)


def test_history_window_pages_memory_then_loader() -> None:
    stored = conversation(30)
    asked: list[tuple[int, int]] = []

    def loader(before: int, limit: int) -> list[dict[str, Any]]:
        asked.append((before, limit))
        return [m for m in stored if m["position"] < before][-limit:]

    window = HistoryWindow(loader)
    shown = window.open(stored[20:], shown=4)  # positions 20..29 were loaded
    assert [e.position for e in shown] == [26, 27, 28, 29]
    assert [e.position for e in window.take_page(4)] == [22, 23, 24, 25]
    assert [e.position for e in window.take_page(4)] == [20, 21]  # memory runs out
    assert asked == []
    assert [e.position for e in window.take_page(8)] == list(range(12, 20))
    window.push_pruned([])
    assert window.take_page(100) and asked == [(20, 8), (12, 100)]
    assert window.take_page(100) == [] and not window.has_older


async def test_end_while_an_older_page_loads_keeps_following(tmp_path: Path) -> None:
    # Reaching the top starts loading an older page; pressing End before it is in must
    # leave the view at the bottom, following what streams next.
    store = Store.open(tmp_path / "smith.db")
    try:
        conv = store.conversations.create("project")
        stored = [{k: v for k, v in m.items() if k != "position"} for m in conversation(300)]
        store.conversations.append_messages(conv, stored)

        def loader(before: int, limit: int) -> list[dict[str, Any]]:
            found = store.conversations.list_messages(conv, before_position=before, limit=limit)
            return [message_dict(m) for m in found]

        recent = [message_dict(m) for m in store.conversations.tail_messages(conv, 50)]
        app = TranscriptApp(loader=loader, page_size=50)
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            await transcript.load_messages(recent)
            await pilot.pause()
            transcript.focus()
            await pilot.press("home")  # the top: a page of older entries is queued
            assert not transcript.following
            await pilot.press("end")  # before that page is in
            await transcript.settle()
            await pilot.pause()
            assert first_position(transcript) == 200, "the older page loaded"
            assert transcript.following
            for i in range(30):
                transcript.append_text(f"Streaming line {i}.\n\n")
            transcript.append_text("THE-LAST-LINE\n")
            await transcript.settle()
            await wait_until(pilot, lambda: "THE-LAST-LINE" in screen_text(app), "the stream")
    finally:
        store.close()


def wordy_conversation(count: int) -> list[dict[str, Any]]:
    """Messages whose height depends on the width (long paragraphs that wrap)."""
    words = " ".join(f"word{n}" for n in range(60))
    return [
        {
            "role": "user" if position % 2 == 0 else "assistant",
            "content": f"Message {position}: {words}",
            "position": position,
        }
        for position in range(count)
    ]


def top_live_entry(transcript: Transcript) -> tuple[Widget, int]:
    """The live entry under the view's top row and its row relative to that top."""
    top = round(transcript.scroll_y)
    for child, y, height in child_offsets(transcript.children):
        if y <= top < y + height:
            assert not isinstance(child, Placeholder), "the view's top row is a placeholder"
            return child, y - top
    raise AssertionError("no entry at the top of the view")


async def test_rebuilt_entries_above_keep_the_view_in_place_after_a_resize() -> None:
    """Entries parked at one width are rebuilt at another (taller): what the reader looks
    at does not move."""
    app = TranscriptApp(page_size=80, max_widgets=200)
    async with app.run_test(size=(120, 30)) as pilot:
        transcript = app.transcript
        await transcript.load_messages(wordy_conversation(80))
        await transcript.settle()
        transcript.scroll_to(y=transcript.max_scroll_y // 2, animate=False, immediate=True)
        await wait_until(pilot, lambda: transcript.query(ParkedEntry), "entries parked")
        await pilot.pause(0.3)
        await pilot.resize_terminal(60, 30)
        await pilot.pause(0.5)
        parked_above = [
            (child, y + height)
            for child, y, height in child_offsets(transcript.children)
            if isinstance(child, ParkedEntry) and y < transcript.scroll_y
        ]
        assert parked_above, "the test needs entries parked above the view"
        # scroll up until the nearest placeholder above meets the parking window (away from
        # the bottom: a screen and a half above the view): it is rebuilt at the new width,
        # taller than it was
        nearest, bottom = parked_above[-1]
        height = transcript.scrollable_content_region.height
        target = min(transcript.scroll_y - 1, bottom + height // 2 + height - 2)
        transcript.scroll_to(y=target, animate=False, immediate=True)
        entry, offset = top_live_entry(transcript)
        await wait_until(
            pilot,
            lambda: nearest._pruning or not nearest.parent,
            "a placeholder rebuilt",
            within=30.0,
        )
        await pilot.pause(0.3)
        assert top_live_entry(transcript) == (entry, offset)


async def test_a_short_recent_page_loads_older_ones_until_the_view_can_scroll(
    tmp_path: Path,
) -> None:
    """The newest page fits on screen: older pages come in by themselves (no scrolling
    could ask for them), and stop once there is something to scroll."""
    with stored_conversation(tmp_path, 200) as (recent_of, loader, calls):
        recent = recent_of(2)
        app = TranscriptApp(loader=loader, page_size=2, max_widgets=100)
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            await transcript.load_messages(recent)
            await wait_until(pilot, lambda: transcript.max_scroll_y > 0, "a view to scroll")
            await transcript.settle()
            await pilot.pause(0.2)
            assert transcript.has_older
            assert 0 < len(calls) < 20, calls  # enough to fill the view, not the whole history
            assert "Question 198" in screen_text(app)


async def test_a_prompt_sent_while_a_load_waits_in_the_queue_is_kept() -> None:
    """The app loads the (new, empty) conversation at start; a prompt typed before that
    load has run must not be swept away by it (seen in tmux: the user's line vanished)."""
    app = TranscriptApp()
    async with app.run_test(size=SIZE):
        transcript = app.transcript
        loaded = transcript.load_messages(conversation(3))
        transcript.add_user("typed before the load ran")
        await loaded
        await transcript.settle()
        users = list(transcript.query(UserMessage))
        texts = [w.entry.text for w in users]
        assert texts[-1] == "typed before the load ran"
        assert len(texts) == 1 + sum(1 for m in conversation(3) if m["role"] == "user")
        # the loaded history stays above what the live session added
        assert transcript.children[-1] is users[-1]


async def test_an_answer_streamed_while_a_load_waits_in_the_queue_is_kept() -> None:
    """The app loads the conversation when its panes are mounted and only then hands them
    the events held meanwhile: under load a whole first reply (an answer and the dispatch
    call it makes) comes in before that load has run. The answer must not be swept away by
    it (seen in tmux: Tank's answer above a dispatch row vanished from the live screen)."""
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        loaded = transcript.load_messages(conversation(3))
        answer = "I hand the reading to Niobe."
        for event in (
            ev.TurnStarted(
                role="orchestrator", turn_id="t1", conversation_id="c1", prompt="read the note"
            ),
            ev.TextDelta(role="orchestrator", turn_id="t1", text=answer),
            ev.AssistantMessage(role="orchestrator", turn_id="t1", content=answer),
            ev.ToolCallStarted(
                role="orchestrator", turn_id="t1", call_id="call_1", name="dispatch", arguments=""
            ),
        ):
            transcript.handle_event(event)
        await loaded
        await transcript.settle()  # (raised before: the answer was finished off the screen)
        await pilot.pause()
        kinds = [type(w).__name__ for w in transcript.entry_widgets]
        # the loaded history, then the live turn in the order it happened
        assert kinds[-3:] == ["UserMessage", "AssistantMessage", "ToolCallEntry"], kinds
        assert len(kinds) == 3 + len(conversation(3))
        message = transcript.entry_widgets[-2]
        assert isinstance(message, AssistantMessage) and message.entry.text == answer
        assert answer in screen_text(app)


async def test_a_notice_added_while_an_answer_streams_keeps_its_place_after_a_load() -> None:
    """A row appended while an answer streams sits above the answer; a load that waited in
    the queue keeps the live rows in that order (and the history above them all)."""
    app = TranscriptApp()
    async with app.run_test(size=SIZE):
        transcript = app.transcript
        loaded = transcript.load_messages(conversation(3))
        transcript.append_text("streaming answer")
        transcript.add_notice("a notice meanwhile")
        await loaded
        transcript.end_assistant()
        await transcript.settle()
        kinds = [type(w).__name__ for w in transcript.entry_widgets]
        assert kinds[-2:] == ["Notice", "AssistantMessage"], kinds
        assert len(kinds) == 2 + len(conversation(3))
        assert kinds[0] == "UserMessage"  # (the history's first question)


async def settled_view(pilot: Any, transcript: Transcript, within: float = 40.0) -> None:
    """Wait until the view has settled: the scroll asked for is applied, the older pages it
    asked for are mounted and nothing is waiting to be parked or rebuilt."""
    scrolled: list[bool] = []
    transcript.call_after_refresh(lambda: scrolled.append(True))  # after a deferred scroll
    await wait_until(pilot, lambda: scrolled, "the scroll applied", within)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    last: tuple[float, int] | None = None
    while True:
        await transcript.settle()
        await pilot.pause(0.01)  # a refresh: what waits for one runs
        busy = transcript._park_timer is not None or transcript._loading_older
        now = (transcript.scroll_y, len(transcript.children))
        if not busy and now == last:
            return
        last = None if busy else now
        if loop.time() > deadline:
            raise AssertionError(f"the view kept changing for {within} s")
        if busy:
            await pilot.pause(0.02)  # (the parking timer's delay)


async def test_paging_up_a_long_history_builds_each_entry_about_once_and_few_widgets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PageUp through a stored conversation: pages come from the store before the view
    reaches the top, each entry is built about once on the way (not once to measure it and
    again when the view gets there), and what the view left behind is parked in a few runs,
    so the transcript holds a handful of widgets however far the user pages.

    Each PageUp comes once the view has settled after the last one (a reader's pace): with
    a fixed pause instead, how far 40 PageUps got depended on how busy the machine was
    (PageUps that outran the loading stopped at the top)."""
    builds: Counter[int] = Counter()
    build = transcript_module.build_widget

    def counting_build(entry: Any, **options: Any) -> Widget:
        builds[id(entry)] += 1
        return build(entry, **options)

    monkeypatch.setattr(transcript_module, "build_widget", counting_build)
    with stored_conversation(tmp_path, 1000) as (recent_of, loader, calls):
        app = TranscriptApp(loader=loader, first_page=16)
        async with app.run_test(size=(160, 50)) as pilot:
            transcript = app.transcript
            await transcript.load_messages(recent_of(100))
            await transcript.settle()
            await pilot.pause(0.2)
            builds.clear()
            pages = 20
            for _ in range(pages):
                transcript.page(-1)
                await settled_view(pilot, transcript)
                assert len(transcript.children) < 40  # at every step, not only the last
            assert calls, "older pages came from the store"
            oldest = first_position(transcript)
            # (the bar of 40 PageUps at a fixed pace, in half as many settled ones)
            assert oldest < 900 - 4 * pages, "the view went up about a screen per PageUp"
            built = list(builds.values())
            assert len(built) > 80
            assert sum(built) <= 1.3 * len(built), sorted(built)[-10:]
            assert len(transcript.children) < 40
            assert len(transcript.query(ParkedEntry)) <= 3
            # every entry is still there to come back to
            entries = transcript.entries
            positions = [e.position for e in entries if e.position is not None]
            assert positions == sorted(positions) and positions[0] == oldest
            assert len(entries) > len(built)


async def test_a_view_anchor_taken_before_a_scroll_is_laid_out_sees_nothing_move() -> None:
    """A PageUp scrolls before the next layout. An anchor taken in between (parking after the
    end of an answer does) must not count the scroll as the content moving: restoring would
    scroll the view back where the user left it (to the bottom)."""
    app = TranscriptApp(page_size=80)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.transcript
        await transcript.load_messages(wordy_conversation(40))
        await transcript.settle()
        await pilot.pause(0.2)
        transcript.release_anchor()
        bottom = transcript.max_scroll_y
        assert bottom > 20
        taken: list[ViewAnchor | None] = []
        transcript.scroll_page_up(animate=False)  # scrolls after the next refresh...
        # ... and this runs right after it, before the screen is laid out again
        transcript.call_after_refresh(lambda: taken.append(ViewAnchor.take(transcript)))
        await wait_until(pilot, lambda: taken, "the anchor taken")
        anchor = taken[0]
        assert anchor is not None
        await pilot.pause(0.2)
        assert anchor.moved() == 0
        assert anchor.restore() == 0
        assert round(transcript.scroll_y) == bottom - transcript.scrollable_content_region.height


async def test_a_long_live_session_prunes_parked_entries_into_the_history() -> None:
    """Turn after turn (a question, a tool call, an answer) while following the bottom:
    the entries far above the view are parked in one placeholder, which holds more and more
    of them. The mounted entries (parked ones included) stay within ``max_widgets``: the
    oldest go to the history window (the soak saw one placeholder grow by a turn's rows
    every turn, and the layout's cost with it), and scrolling to the top brings every
    entry back, in order, once."""
    limit = 12
    app = TranscriptApp(max_widgets=limit, page_size=8)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        turns = 30
        parked_seen = False
        for turn in range(turns):
            transcript.add_user(f"question {turn}")
            transcript.add_tool_call(f"call_{turn}", "bash", {"command": f"echo {turn}"})
            transcript.finish_tool_call(f"call_{turn}", True, 0.1, f"printed {turn}")
            for line in range(10):  # (a few entries fill more than the parking window)
                transcript.append_text(f"Answer {turn}, paragraph {line}.\n\n")
            transcript.end_assistant()
            await transcript.settle()
            await pilot.pause()
            parked_seen = parked_seen or bool(transcript.query(ParkedEntry))
            mounted = len(transcript.entries)
            assert mounted <= limit, f"turn {turn}: {mounted} entries mounted"
            # none lost: what is not mounted waits in the history window
            assert mounted + transcript.history.above() == 3 * (turn + 1)
        assert parked_seen, "the test needs far entries parked"
        assert transcript.history.above() == 3 * turns - len(transcript.entries)
        assert f"Answer {turns - 1}, paragraph 9." in screen_text(app)

        while transcript.has_older:  # the reader scrolls up to the first question
            count = len(transcript.entries)
            await wait_until(pilot, lambda: transcript.scroll_y > 0, "a laid-out view")
            transcript.scroll_home(animate=False)
            await wait_until(
                pilot, lambda n=count: len(transcript.entries) > n, "an older page", within=40.0
            )
            await transcript.settle()
        expected: list[tuple[str, str]] = []
        for turn in range(turns):
            expected.append(("UserEntry", f"question {turn}"))
            expected.append(("ToolEntry", f"call_{turn}"))
            expected.append(("AssistantEntry", f"Answer {turn}, paragraph 0."))
        shown = [
            (type(e).__name__, getattr(e, "call_id", None) or getattr(e, "text", "").split("\n")[0])
            for e in transcript.entries
        ]
        assert shown == expected
        assert len({id(e) for e in transcript.entries}) == len(expected)
        transcript.scroll_home(animate=False)  # (the last page came in above the view)
        await wait_until(pilot, lambda: "question 0" in screen_text(app), "the first question")

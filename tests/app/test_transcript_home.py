"""``Home`` in a long conversation opens the transcript at its first messages (about a page
mounted), newer pages load as the reader scrolls down, and ``End`` or live output goes back
to the newest entries as a reopen shows them. Real SQLite store, Textual Pilot."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine.persistence import message_dict
from smith_tui.store import Store
from smith_tui.widgets.transcript import Transcript
from smith_tui.widgets.transcript.entries import Entry
from smith_tui.widgets.transcript.history import entries_from_messages
from smith_tui.widgets.transcript.history_window import page_end
from tests.app.app_harness import make_app, running, submit, wait_for_text
from tests.support.llm_server import text_reply
from tests.support.pilot import screen_text, wait_until
from tests.support.transcript_app import SIZE, TranscriptApp

PAGE = 16  # the app's page and first page


def rounds(count: int) -> list[dict[str, Any]]:
    """``count`` rounds of a coding session: a question, a tool call, its result, an answer."""
    out: list[dict[str, Any]] = []
    for n in range(count):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        out += [
            {"role": "user", "content": f"Question {n}"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "name": "bash", "content": f"out {n}"},
            {"role": "assistant", "content": f"Answer {n}\n\n- a point\n- another"},
        ]
    return out


class Stored:
    """A conversation in a real store, and the loaders the app gives its transcript."""

    def __init__(self, store: Store, conversation: str) -> None:
        self.store = store
        self.conversation = conversation
        self.before_calls: list[int] = []
        self.after_calls: list[int] = []

    def before(self, position: int, limit: int) -> list[dict[str, Any]]:
        self.before_calls.append(position)
        found = self.store.conversations.list_messages(
            self.conversation, before_position=position, limit=limit
        )
        return [message_dict(m) for m in found]

    def after(self, position: int, limit: int) -> list[dict[str, Any]]:
        self.after_calls.append(position)
        found = self.store.conversations.list_messages(
            self.conversation, after_position=position, limit=limit
        )
        return [message_dict(m) for m in found]

    def recent(self, limit: int = 200) -> list[dict[str, Any]]:
        """What the app opens with (``ActiveConversation.recent``): whole rounds."""
        tail = [
            message_dict(m)
            for m in self.store.conversations.tail_messages(self.conversation, limit)
        ]
        first_user = next(i for i, m in enumerate(tail) if m["role"] == "user")
        return tail[first_user:]

    def whole(self) -> list[dict[str, Any]]:
        return [message_dict(m) for m in self.store.conversations.list_messages(self.conversation)]


@contextlib.contextmanager
def stored(tmp_path: Path, count: int) -> Iterator[Stored]:
    """``count`` rounds stored as one conversation (``count * 4`` messages)."""
    store = Store.open(tmp_path / "smith.db")
    try:
        conversation = store.conversations.create("project")
        messages = rounds(count)
        for start in range(0, len(messages), 2000):
            store.conversations.append_messages(conversation, messages[start : start + 2000])
        yield Stored(store, conversation)
    finally:
        store.close()


def app_for() -> TranscriptApp:
    """The transcript as the app builds it (pages of 16), not wired to ``conv`` yet."""
    return TranscriptApp(page_size=PAGE, first_page=PAGE)


def wire(transcript: Transcript, conv: Stored) -> None:
    transcript.loader = conv.before
    transcript.newer_loader = conv.after


def key(entry: Entry) -> tuple[str, int | None, str]:
    """What identifies an entry on screen: its kind, position and text."""
    text = getattr(entry, "text", None) or getattr(entry, "content", "") or ""
    return type(entry).__name__, entry.position, text


async def reopened(pilot: Any, app: TranscriptApp, conv: Stored) -> list[tuple[Any, ...]]:
    """Open ``conv`` as the app does; the keys of the entries shown."""
    transcript = app.transcript
    wire(transcript, conv)
    await transcript.load_messages(conv.recent())
    await transcript.settle()
    last = conv.whole()[-1]["content"].splitlines()[0]
    await wait_until(pilot, lambda: last in screen_text(app), "the last answer")
    return [key(e) for e in transcript.entries]


async def test_home_shows_the_first_message_with_about_a_page_mounted(tmp_path: Path) -> None:
    with stored(tmp_path, 1000) as conv:  # 4,000 messages
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            await reopened(pilot, app, conv)
            conv.before_calls.clear()
            started = time.perf_counter()
            transcript.scroll_to_start()
            await wait_until(pilot, lambda: "Question 0" in screen_text(app), "the first message")
            took = time.perf_counter() - started
            await transcript.settle()
            assert transcript.detached
            assert transcript.scroll_y == 0
            # At most about a page: what fills the view from the first of the 16 stored
            # messages read (and the next page if they do not); never the thousands above.
            assert len(transcript.entries) <= 4 * PAGE, len(transcript.entries)
            assert conv.before_calls == [], "Home read the pages above the view"
            assert conv.after_calls[0] == -1 and len(conv.after_calls) <= 4
            assert transcript.entries[0].position == 0
            # Today's Home mounted 250 pages one after the other: minutes on a loaded core.
            assert took < 20.0, took


async def test_scrolling_down_loads_newer_pages_in_order_nothing_lost(tmp_path: Path) -> None:
    with stored(tmp_path, 90) as conv:  # 360 messages: 200 stored below, then the kept ones
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            shown = await reopened(pilot, app, conv)
            await transcript.scroll_to_start()
            await transcript.settle()
            assert transcript.detached
            for _ in range(200):  # down to the end, a screen at a time
                if not transcript.detached:
                    break
                transcript.scroll_to(y=transcript.max_scroll_y, animate=False, immediate=True)
                await transcript.settle()
                await pilot.pause()
            assert not transcript.detached, "the window never reached the newest entries"
            # Every entry of the conversation once, in order, across the boundary between
            # what was read from the store and what the reopen had in memory.
            expected = [key(e) for e in entries_from_messages(conv.whole())]
            assert [key(e) for e in transcript.entries] == expected
            assert [k for k in expected if k in shown] == shown
            # Parking keeps the widgets bounded (a run far from the view is one widget).
            await wait_until(
                pilot, lambda: len(transcript.entry_widgets) <= 3 * PAGE, "far entries parked"
            )
            # Down at the end it follows again: a live line shows below the last answer.
            transcript.scroll_end(animate=False, immediate=True)
            await wait_until(pilot, lambda: transcript.following, "following at the end")
            transcript.add_notice("LIVE-LINE")
            await transcript.settle()
            await wait_until(pilot, lambda: "LIVE-LINE" in screen_text(app), "the live line")
            assert [key(e) for e in transcript.entries][-2:-1] == expected[-1:]


async def test_end_after_home_shows_the_reopened_end_and_follows(tmp_path: Path) -> None:
    with stored(tmp_path, 1000) as conv:
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            shown = await reopened(pilot, app, conv)
            transcript.scroll_to_start()
            await wait_until(pilot, lambda: "Question 0" in screen_text(app), "the first message")
            transcript.scroll_to(y=transcript.max_scroll_y, animate=False, immediate=True)
            await transcript.settle()  # (a newer page or two loaded)
            transcript.follow()  # End
            await transcript.settle()
            await wait_until(pilot, lambda: "Answer 999" in screen_text(app), "the last answer")
            assert not transcript.detached and transcript.following
            assert [key(e) for e in transcript.entries] == shown, "not what the reopen showed"
            assert "Question 0" not in screen_text(app)
            # End with the pane itself focused does the same (not the window's bottom).
            transcript.scroll_to_start()
            await wait_until(pilot, lambda: "Question 0" in screen_text(app), "the start again")
            transcript.focus()
            await pilot.press("end")
            await transcript.settle()
            await wait_until(pilot, lambda: "Answer 999" in screen_text(app), "the end again")
            assert not transcript.detached and transcript.following
            assert [key(e) for e in transcript.entries] == shown
            # Paging up from there reads the same older pages a reopen would.
            assert transcript.has_older
            transcript.add_notice("AFTER-END")
            await transcript.settle()
            await wait_until(pilot, lambda: "AFTER-END" in screen_text(app), "the live line")
            assert transcript.scroll_y == transcript.max_scroll_y


async def test_live_output_after_home_goes_to_the_end_never_into_the_start(
    tmp_path: Path,
) -> None:
    with stored(tmp_path, 1000) as conv:
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            shown = await reopened(pilot, app, conv)
            await transcript.scroll_to_start()
            assert transcript.detached
            # A turn starts while the start is shown: its prompt and answer stream in.
            user = transcript.add_user("A NEW PROMPT")
            assert not user.display, "shown inside the window opened at the start"
            transcript.begin_assistant("direct")
            transcript.append_text("THE LIVE ANSWER")
            transcript.end_assistant()
            await transcript.settle()
            await wait_until(pilot, lambda: "THE LIVE ANSWER" in screen_text(app), "the answer")
            assert user.display and transcript.following and not transcript.detached
            keys = [key(e) for e in transcript.entries]
            assert keys[: len(shown)] == shown
            assert [k[0] for k in keys[len(shown) :]] == ["UserEntry", "AssistantEntry"]
            assert keys[-2][2] == "A NEW PROMPT" and keys[-1][2] == "THE LIVE ANSWER"
            assert "Question 0" not in screen_text(app)


async def test_live_output_right_after_home_calls_the_open_at_the_start_off(
    tmp_path: Path,
) -> None:
    with stored(tmp_path, 1000) as conv:
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            shown = await reopened(pilot, app, conv)
            opened = transcript.scroll_to_start()  # queued, not run yet
            transcript.add_notice("LIVE BEFORE THE OPEN")
            await opened
            await transcript.settle()
            assert not transcript.detached and transcript.following
            await wait_until(
                pilot, lambda: "LIVE BEFORE THE OPEN" in screen_text(app), "the live line"
            )
            assert [key(e) for e in transcript.entries][:-1] == shown


async def test_home_while_an_answer_streams_keeps_loading_pages_above(tmp_path: Path) -> None:
    with stored(tmp_path, 1000) as conv:
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            shown = await reopened(pilot, app, conv)
            transcript.begin_assistant("direct")
            transcript.append_text("STREAMING")
            transcript.scroll_to_start()  # a turn runs: not detached, pages load above
            await wait_until(pilot, lambda: len(conv.before_calls) >= 2, "pages above")
            assert not transcript.detached
            transcript.follow()
            transcript.append_text(" STILL")
            transcript.end_assistant()
            await transcript.settle()
            await wait_until(pilot, lambda: "STREAMING STILL" in screen_text(app), "the answer")
            keys = [key(e) for e in transcript.entries]
            assert keys[-1][2] == "STREAMING STILL" and keys[-1 - len(shown) : -1] == shown
            assert transcript.following


def test_a_newer_page_ends_between_rounds() -> None:
    messages = rounds(3)
    for position, message in enumerate(messages):
        message["position"] = position
    # 6 wanted: the page stops before the second question (a whole round), not inside it.
    assert page_end(messages, 6) == 4
    # Inside one long round: before an answer whose calls are all answered.
    call = {"id": "x", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    loop = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "x", "content": "ok"},
        {"role": "assistant", "content": "", "tool_calls": [{**call, "id": "y"}]},
        {"role": "tool", "tool_call_id": "y", "content": "ok"},
    ]
    assert page_end(loop, 4) == 3


async def test_home_in_the_app_then_a_turn_shows_at_the_end(runtime, llm_server) -> None:
    conversation = runtime.store.conversations.create(runtime.project_id, "Long")
    messages = rounds(600)  # 2,400 messages
    for start in range(0, len(messages), 2000):
        runtime.store.conversations.append_messages(conversation, messages[start : start + 2000])
    runtime.conversations.load(conversation)
    llm_server.enqueue(text_reply("A FRESH ANSWER"))
    app = make_app(runtime)
    async with running(app, size=(100, 30)) as pilot:
        transcript = app.screen.query_one("#transcript", Transcript)
        await wait_for_text(pilot, "Answer 599")
        await pilot.press("home")  # the empty prompt: the transcript scrolls
        await wait_for_text(pilot, "Question 0")
        assert transcript.detached and len(transcript.entries) <= 4 * PAGE
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: transcript.scroll_y > 0, what="a page down")
        await submit(pilot, "hello")
        await wait_for_text(pilot, "A FRESH ANSWER")
        await wait_until(pilot, lambda: transcript.following, what="following the turn")
        texts = [key(e)[2] for e in transcript.entries]
        at = texts.index("hello")
        assert texts[at - 1].startswith("Answer 599") and texts[-1] == "A FRESH ANSWER"
        assert "Question 0" not in texts


@pytest.mark.parametrize("pages_up", [0, 3])
def test_pages_from_the_start_meet_the_kept_entries_with_every_turn_mark(
    tmp_path: Path, pages_up: int
) -> None:
    """Turns longer than a page (tool loops), each with its file-change mark: read from the
    start a page at a time and joined to what a reopen had in memory (after ``pages_up``
    pages read above it, which end inside a turn), the entries are those of the whole
    conversation read at once up to there (no mark lost, repeated or out of its turn)."""
    from smith_tui.widgets.transcript.history_window import HistoryWindow

    messages: list[dict[str, Any]] = []
    for turn in range(40):
        turn_id = f"t{turn}"
        messages.append({"role": "user", "content": f"Question {turn}", "turn_id": turn_id})
        for step in range(1 + (turn % 3) * 6):  # 1, 7 or 13 tool rounds
            call_id = f"c{turn}-{step}"
            call = {
                "id": call_id,
                "type": "function",
                "function": {"name": "bash", "arguments": ""},
            }
            messages.append(
                {"role": "assistant", "content": "", "tool_calls": [call], "turn_id": turn_id}
            )
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": f"out {call_id}",
                    "turn_id": turn_id,
                }
            )
        messages.append({"role": "assistant", "content": f"Answer {turn}", "turn_id": turn_id})
    marks = {
        f"t{turn}": {
            "checkpoint": f"k{turn}",
            "files": [["M", f"f{turn}.py"]],
            "turn_id": f"t{turn}",
        }
        for turn in range(40)
    }
    with contextlib.closing(Store.open(tmp_path / "smith.db")) as store:
        conversation = store.conversations.create("project")
        store.conversations.append_messages(conversation, messages)
        conv = Stored(store, conversation)
        whole = conv.whole()
        expected = [key(e) for e in entries_from_messages(whole, marks=marks)]
        window = HistoryWindow(conv.before)
        window.newer = conv.after
        window.marks = lambda ids: {i: marks[i] for i in ids if i in marks}
        recent = conv.recent(100)
        shown = window.open(recent, PAGE)  # what stays mounted (kept by the transcript)
        for _ in range(pages_up):  # (mounted above it by paging up)
            shown = window.take_page(PAGE) + shown
        kept_from = min(e.position for e in shown if e.position is not None)
        if pages_up:  # the pages above ended inside a turn: up to there, as paging up cut it
            upto = [m for m in whole if m["position"] < kept_from]
            turn = next(m["turn_id"] for m in whole if m["position"] == kept_from)
            cut = entries_from_messages(
                upto, marks=marks, continued_turn=turn, drop_unanswered_calls=True
            )
            expected = [key(e) for e in cut] + [key(e) for e in shown]
        pages = [window.open_start(PAGE)]
        while window.has_newer:
            pages.append(window.take_newer(PAGE))
        assert all(pages) and len(pages) > 10
        window.reached_newest()
        assert not window.detached and not window.has_older
        read = [key(e) for page in pages for e in page] + [key(e) for e in shown]
        assert read == expected
        assert sum(k[0] == "ChangesEntry" for k in read) == 40
        assert [k for k in read if k[0] == "UserEntry"] == [
            ("UserEntry", m["position"], m["content"]) for m in whole if m["role"] == "user"
        ]

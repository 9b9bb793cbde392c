"""Snapshots of the history screen at 80x24 and 160x45 (issue 27): forks as a tree under
their source, and the filter's hits (a title match, then messages with their words).

No clock reaches the screen: every conversation's times are fixed in the store and shown
in UTC; the search box's cursor does not blink (the steady ``snap_compare``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from smith_tui.app.screens.history_screen import HistoryScreen
from smith_tui.engine import forks
from smith_tui.engine.runtime import Runtime
from tests.app.app_harness import wait_for_still_screen, wait_until
from tests.support.pilot import wait_for_history_hits
from tests.support.screen_host import ScreenHost, offline_runtime

SIZES = [(80, 24), (160, 45)]
IDS = ["80x24", "160x45"]
DAY = 1_767_225_600.0
"""2026-01-01 00:00 UTC: the conversations' times count from it."""


def _utc(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(stamp))


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    """A real runtime on tmp files, closed after the test."""
    opened = offline_runtime(tmp_path)
    try:
        yield opened
    finally:
        opened.store.close()


def _conversation(runtime: Runtime, title: str | None, turns: list[tuple[str, str]]) -> str:
    """A stored conversation with one turn per (prompt, answer)."""
    store = runtime.store
    conv = store.conversations.create(runtime.project_id, title)
    for prompt, answer in turns:
        turn = store.turns.start(conv, "direct")
        store.conversations.append_messages(
            conv,
            [
                {"role": "user", "content": prompt, "turn_id": turn},
                {"role": "assistant", "content": answer, "turn_id": turn},
            ],
        )
        store.usage.record(conv, turn, "direct", "m", 900, 100)
    return conv


def _at(runtime: Runtime, conv: str, hours: float) -> None:
    """Fix the conversation's times (``hours`` after ``DAY``)."""
    stamp = DAY + hours * 3600
    runtime.store._db.execute_sql(
        "UPDATE conversations SET created_at = ?, updated_at = ? WHERE id = ?",
        (stamp, stamp, conv),
    )


def _screen(runtime: Runtime) -> ScreenHost:
    return ScreenHost(lambda: HistoryScreen(runtime, time_format=_utc))


def _fork_tree(runtime: Runtime) -> None:
    store = runtime.store
    source = _conversation(
        runtime,
        "Fix the parser",
        [
            ("the parser breaks on tabs", "expanding tabs first fixes it"),
            ("now handle CRLF line endings", "CRLF is normalised before tokenizing"),
            ("add a test for both", "two tests added; both pass"),
        ],
    )
    _at(runtime, source, 1)
    turns = forks.turn_ids(store, source)
    first = forks.fork_conversation(store, source, through_turn=turns[0])
    _at(runtime, first, 2)
    second = forks.fork_conversation(store, source, through_turn=turns[1], title="Try a lexer")
    _at(runtime, second, 3)
    deeper = forks.fork_conversation(store, second, title="Lexer, generated")
    _at(runtime, deeper, 4)
    other = _conversation(runtime, "Release notes", [("draft the release notes", "done")])
    _at(runtime, other, 5)
    runtime.conversations.load(second)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_history_fork_tree(snap_compare, runtime: Runtime, size: tuple[int, int]) -> None:
    _fork_tree(runtime)

    async def run(pilot: Any) -> None:
        await wait_until(pilot, lambda: bool(getattr(pilot.app.screen, "rows", None)), "rows")
        await wait_for_still_screen(pilot)

    assert snap_compare(_screen(runtime), terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_history_content_search(snap_compare, runtime: Runtime, size: tuple[int, int]) -> None:
    parser = _conversation(
        runtime,
        "Fix the parser",
        [
            ("the parser breaks on tabs", "the tokenizer now expands tabs before it splits"),
            ("and CRLF?", "CRLF is normalised before the tokenizer runs"),
        ],
    )
    _at(runtime, parser, 1)
    docs = _conversation(
        runtime, None, [("write docs for the tokenizer module", "docs/tokenizer.md written")]
    )
    _at(runtime, docs, 2)
    titled = _conversation(runtime, "Tokenizer speed", [("profile it", "the hot loop is split()")])
    _at(runtime, titled, 3)
    runtime.conversations.load(parser)

    async def run(pilot: Any) -> None:
        screen = pilot.app.screen
        await wait_until(pilot, lambda: bool(getattr(screen, "rows", None)), "rows")
        screen.query_one("#history-search", Input).value = "tokenizer"
        await wait_for_history_hits(pilot, "tokenizer")
        await wait_for_still_screen(pilot)

    assert snap_compare(_screen(runtime), terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_fork_question(snap_compare, size: tuple[int, int]) -> None:
    """Inspect's ``f``: the question with its three answers, Cancel focused."""
    from smith_tui.app.screens.fork_question import ForkQuestion

    question = (
        "Fork the conversation into a new one up to the end of turn 2 of 3 (message #5)?"
        "\n\nAlso put the project's files back as turn 2 left them? Later turns' changes to "
        "them are undone (the checkpoints keep them)."
    )
    app = ScreenHost(lambda: ForkQuestion(question))

    async def still(pilot: Any) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ForkQuestion), "the question")
        await wait_for_still_screen(pilot)

    assert snap_compare(app, terminal_size=size, run_before=still)

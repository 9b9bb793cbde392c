"""The transcript's mark of a turn that changed files: focusable, its key shows the turn's diff,
rebuilt when the conversation is loaded again (a restart), and how it looks (snapshot)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.pilot import Pilot

from smith_tui.app.screens.help_screen import help_renderable
from smith_tui.app.screens.turn_diff_screen import TurnDiffScreen
from smith_tui.config.service_options import KeyBindings
from smith_tui.engine import events as ev
from smith_tui.engine.checkpoints import NOTICE_COMMAND
from smith_tui.widgets.transcript.entries import ChangesEntry
from smith_tui.widgets.transcript.history_window import HistoryWindow
from smith_tui.widgets.transcript.turn_changes import TurnChanges
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    submit,
    wait_for_still_screen,
    wait_for_text,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.pilot import screen_text, wait_until
from tests.support.transcript_app import TranscriptApp


def _enqueue_writing_turn(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(
        text_reply(
            tool_calls=[
                tool_call("write", {"path": "hello.py", "content": "print('hello, mark')\n"}),
                tool_call("write", {"path": "notes.md", "content": "# notes\n"}),
            ]
        ),
        text_reply("Wrote both files."),
    )


async def _open_diff(pilot: Pilot[Any], key: str) -> str:
    """Focus the (single) mark, press ``key``, return the diff screen's text."""
    app = pilot.app
    await wait_until(pilot, lambda: len(app.screen.query(TurnChanges)) == 1, "the mark")
    [mark] = list(app.screen.query(TurnChanges))
    mark.focus()
    await pilot.pause()
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, TurnDiffScreen), "the diff screen", 5)
    screen = app.screen
    await wait_until(pilot, lambda: screen.diff_text is not None, "the diff", 5)
    await wait_until(pilot, lambda: "+print('hello, mark')" in screen_text(app), "diff lines", 5)
    return screen_text(app)


async def test_the_mark_of_a_turn_that_wrote_files_opens_its_diff_now_and_after_a_reload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    _enqueue_writing_turn(llm_server)
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await submit(pilot, "write the two files")
            await wait_for_text(pilot, "Wrote both files.")
            await wait_until(pilot, lambda: not runtime.busy, "the turn to end")
            text = await wait_for_text(pilot, "2 files changed")
            assert "A hello.py" in text and "A notes.md" in text
            assert "enter / d: the turn's diff" in text
            # The mark replaces the notice: the files are not named twice.
            assert "this turn changed 2 files" not in text

            shown = await _open_diff(pilot, "enter")
            assert "+# notes" in shown
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "back", 5)
        conversation = runtime.conversation_id

    # A restart: a new runtime resumes the conversation from the store.
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as again:
        assert again.conversation_id == conversation
        app = make_app(again)
        async with running(app) as pilot:
            text = await wait_for_text(pilot, "2 files changed")
            assert "A hello.py" in text
            # Placed where the turn ended: after its answer.
            assert text.index("Wrote both files.") < text.index("2 files changed")
            shown = await _open_diff(pilot, "d")
            assert "+# notes" in shown


def test_help_names_the_marks_keys() -> None:
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(help_renderable(KeyBindings()))
    assert "files changed\" mark: the turn's combined diff" in console.export_text()


def test_the_mark_snapshot(snap_compare: Any) -> None:
    app = TranscriptApp()

    async def feed(pilot: Pilot[None]) -> None:
        transcript = app.transcript
        transcript.handle_event(
            ev.TurnStarted(turn_id="t1", conversation_id="c", prompt="Split the helpers")
        )
        transcript.handle_event(ev.AssistantMessage(turn_id="t1", content="Done: split in two."))
        transcript.handle_event(
            ev.CommandOutput(
                command=NOTICE_COMMAND,
                text="this turn changed 3 files: …",
                data={
                    "checkpoint": "0123abcd4567",
                    "turn_id": "t1",
                    "files": [["M", "src/app.py"], ["A", "src/helpers.py"], ["D", "old.py"]],
                },
            )
        )
        await transcript.settle()
        app.query_one(TurnChanges).focus()
        await wait_for_still_screen(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=feed)


def test_a_turn_cut_by_a_page_boundary_gets_one_mark_after_its_last_message() -> None:
    def message(position: int, turn: str, role: str = "assistant") -> dict[str, Any]:
        return {"role": role, "content": f"m{position}", "position": position, "turn_id": turn}

    stored = [
        message(1, "t1", "user"),
        message(2, "t1"),
        message(3, "t2", "user"),
        message(4, "t2"),
        message(5, "t2"),
        message(6, "t3", "user"),
    ]
    mark = {"checkpoint": "c2", "turn_id": "t2", "files": [["A", "x.py"]]}
    asked: list[list[str]] = []

    def marks(turn_ids: list[str]) -> dict[str, Any]:
        asked.append(turn_ids)
        return {"t2": mark} if "t2" in turn_ids else {}

    window = HistoryWindow(
        lambda before, limit: [m for m in stored if m["position"] < before][-limit:]
    )
    window.marks = marks
    # The open shows positions 5-6: the end of t2 (its mark after 5), then t3.
    shown = window.open(stored[4:], shown=10)
    assert [type(e).__name__ for e in shown] == ["AssistantEntry", "ChangesEntry", "UserEntry"]
    assert isinstance(shown[1], ChangesEntry) and shown[1].position == 5
    # The older page ends inside t2: no second mark there.
    page = window.take_page(4)
    assert not any(isinstance(e, ChangesEntry) for e in page)
    assert asked[-1] == ["t1", "t1", "t2", "t2"]

"""The transcript fed by the real runtime against the scripted Chat-Completions server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from smith_tui.widgets.transcript.assistant_message import AssistantMessage
from smith_tui.widgets.transcript.code_markdown import CopyableFence
from smith_tui.widgets.transcript.tool_call import ToolCallEntry
from tests.app.app_harness import app_runtime, isolate_environment
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.pilot import screen_text, wait_until
from tests.support.transcript_app import SIZE, TranscriptApp

ANSWER = "Found it:\n\n```python\nprint('matrix-42')\n```\n\nDone."


def kinds(app: TranscriptApp) -> list[str]:
    return [type(widget).__name__ for widget in app.transcript.entry_widgets]


async def test_a_real_turn_and_its_stored_messages_show_the_same(
    tmp_path: Path, monkeypatch: Any, llm_server: ScriptedLLMServer
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, api_url=llm_server.base_url)
    llm_server.enqueue(
        text_reply(
            "Let me look.",
            reasoning="The shell will tell.",
            tool_calls=[tool_call("bash", {"command": "echo matrix-$((6*7))"})],
        ),
        text_reply(ANSWER, chunk_chars=3),
    )
    try:
        app = TranscriptApp()
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            unsubscribe = runtime.bus.subscribe(transcript.handle_event)
            await runtime.submit("where is the spoon?")
            unsubscribe()
            await transcript.settle()
            await pilot.pause()
            live_kinds = kinds(app)
            assert live_kinds == [
                "UserMessage",
                "AssistantMessage",
                "ToolCallEntry",
                "AssistantMessage",
            ]
            first, last = transcript.query(AssistantMessage)
            assert first.source == "Let me look."
            assert first.entry.reasoning == "The shell will tell."
            assert last.source == ANSWER
            entry = transcript.query_one(ToolCallEntry)
            assert entry.entry.finished and entry.entry.ok
            assert "matrix-42" in entry.entry.content
            text = screen_text(app)
            assert "▸ bash  echo matrix-$((6*7))" in text
            assert "print('matrix-42')" in text
            await pilot.click(transcript.query_one(CopyableFence))
            assert app.clipboard == "print('matrix-42')"

        # the stored conversation rebuilds the same entries
        stored = TranscriptApp()
        async with stored.run_test(size=SIZE) as pilot:
            await stored.transcript.load_messages(list(runtime.conversations.messages))
            await pilot.pause()
            assert kinds(stored) == live_kinds
            await wait_until(pilot, lambda: "Done." in screen_text(stored), "the answer")
            rebuilt = stored.transcript.query_one(ToolCallEntry).entry
            assert rebuilt.ok and "matrix-42" in rebuilt.content
    finally:
        runtime.store.close()


async def test_an_attached_file_shows_as_a_marker_live_and_stored(
    tmp_path: Path, monkeypatch: Any, llm_server: ScriptedLLMServer
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(
        tmp_path, api_url=llm_server.base_url, config={"budget": {"turn_tokens": 1000}}
    )
    (runtime.options.cwd / "notes.txt").write_text("ATTACHED-BODY line\nsecond\nthird\n")
    llm_server.enqueue(text_reply("Read it.", usage={"prompt_tokens": 850, "completion_tokens": 0}))
    prompt = "summarise @notes.txt"
    marker = "📎 notes.txt (3 lines)"
    try:
        app = TranscriptApp()
        async with app.run_test(size=SIZE) as pilot:
            transcript = app.transcript
            unsubscribe = runtime.bus.subscribe(transcript.handle_event)
            await runtime.submit(prompt)
            unsubscribe()
            await transcript.settle()
            await pilot.pause()
            text = screen_text(app)
            assert prompt in text and marker in text
            assert "ATTACHED-BODY" not in text
            assert "Budget: 85% of the turn tokens budget used" in text

        stored = TranscriptApp()
        async with stored.run_test(size=SIZE) as pilot:
            await stored.transcript.load_messages(list(runtime.conversations.messages))
            await pilot.pause()
            await wait_until(pilot, lambda: marker in screen_text(stored), "the marker")
            assert "ATTACHED-BODY" not in screen_text(stored)
        # The model got the file's text.
        sent = [m for m in llm_server.chat_requests()[0]["messages"] if m["role"] == "user"]
        assert "ATTACHED-BODY line" in sent[-2]["content"]
    finally:
        runtime.store.close()


async def test_an_ignored_index_file_is_a_notice_in_the_transcript(
    tmp_path: Path, monkeypatch: Any, llm_server: ScriptedLLMServer
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, api_url=llm_server.base_url)
    os.mkfifo(runtime.options.cwd / "INDEX.md")
    llm_server.enqueue(text_reply("Answered anyway."))
    try:
        app = TranscriptApp()
        async with app.run_test(size=(160, 40)) as pilot:
            transcript = app.transcript
            unsubscribe = runtime.bus.subscribe(transcript.handle_event)
            await runtime.submit("hello")
            unsubscribe()
            await transcript.settle()
            await pilot.pause()
            text = " ".join(screen_text(app).split())
            assert "INDEX.md is a FIFO (named pipe), not a regular file; it was ignored" in text
            assert text.count("it was ignored") == 1
            assert "Answered anyway." in text
    finally:
        runtime.store.close()

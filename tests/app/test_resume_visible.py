"""Resuming is visible, and a reloaded conversation is the one left (issue 22).

Real runtimes on one SQLite file, the scripted server, the real app under Pilot at 80×24
and 160×45: plain ``smith`` (auto-resume) says which conversation it reopened, how long
and how old it is, and that ``/new`` starts fresh, in the transcript and the status line;
``auto_resume: false`` opens a fresh conversation instead; the role a conversation ran as
comes back with it; an edit saved in inspect (the same reload) keeps the notices.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine import events as ev
from smith_tui.widgets.status_line import StatusLine
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    running,
    wait_for_text,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply, truncate_after
from tests.support.pilot import screen_text, wait_until

SIZES = [(80, 24), (160, 45)]


async def _first_session(tmp_path: Path, url: str, *prompts: str, **config: Any) -> str:
    """Run ``prompts`` as turns in a session of their own; return the conversation id."""
    runtime = app_runtime(tmp_path, url, config=config or None)
    try:
        for prompt in prompts:
            await runtime.run_turn(prompt)
        assert runtime.conversations.conversation_id is not None
        return runtime.conversations.conversation_id
    finally:
        await runtime.aclose()
        runtime.store.close()


@pytest.mark.parametrize("size", SIZES)
async def test_plain_smith_says_which_conversation_it_resumed(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, size
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    llm_server.enqueue(text_reply("The test fails on a typo."))
    first = await _first_session(tmp_path, llm_server.base_url, "fix the failing test")

    runtime = app_runtime(tmp_path, llm_server.base_url)  # opened as plain `smith` does
    try:
        assert runtime.conversations.conversation_id == first
        async with running(make_app(runtime), size=size) as pilot:
            line = "Resumed ‘fix the failing test’ · 2 messages · just now — /new starts fresh"
            screen = await wait_for_text(pilot, "/new starts fresh")
            assert line in " ".join(screen.split()), screen  # (it may wrap at 80 columns)
            assert "The test fails on a typo." in screen
            status = pilot.app.screen.query_one(StatusLine)
            assert status.title == "resumed fix the failing test · just now"
            # The next turn is the conversation's own again: the status line says its title.
            llm_server.enqueue(text_reply("Fixed."))
            await runtime.run_turn("go on")
            await wait_for_text(pilot, "Fixed.")
            assert "resumed" not in status.title
    finally:
        await runtime.aclose()
        runtime.store.close()


async def test_auto_resume_false_opens_a_fresh_conversation(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    llm_server.enqueue(text_reply("Old answer."))
    first = await _first_session(tmp_path, llm_server.base_url, "an old question")

    runtime = app_runtime(tmp_path, llm_server.base_url, config={"auto_resume": False})
    try:
        assert runtime.conversations.conversation_id != first
        assert runtime.conversations.resumed is None
        async with running(make_app(runtime), size=(160, 45)) as pilot:
            await pilot.pause()
            screen = screen_text(pilot.app)
            assert "Resumed" not in screen and "Old answer." not in screen
            assert "resumed" not in pilot.app.screen.query_one(StatusLine).title
    finally:
        await runtime.aclose()
        runtime.store.close()


async def test_the_role_chosen_comes_back_with_the_conversation(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, llm_server.base_url)
    runtime.set_active_role("orchestrator")  # what /role orchestrator does
    runtime.store.close()

    again = app_runtime(tmp_path, llm_server.base_url)
    try:
        assert again.active_role == "orchestrator"
        async with running(make_app(again), size=(160, 45)) as pilot:
            await wait_for_text(pilot, "│  Tank")
    finally:
        again.store.close()
    # --role on the command line wins over the conversation's role.
    flagged = app_runtime(tmp_path, llm_server.base_url, ephemeral={"active_role": "direct"})
    try:
        assert flagged.active_role == "direct"
    finally:
        flagged.store.close()


async def test_an_edit_saved_in_inspect_keeps_the_notices(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(
        tmp_path, llm_server.base_url, config={"llm_config": {"retry_backoff_ms": [50]}}
    )
    try:
        async with running(make_app(runtime), size=(160, 45)) as pilot:
            from tests.support.llm_server import http_error

            llm_server.enqueue(
                http_error(503),
                truncate_after(5, text_reply("half an answer that stops short", chunk_chars=3)),
            )
            await runtime.run_turn("a long answer please")
            await wait_until(pilot, lambda: not runtime.busy, "the turn to end")
            live = await wait_for_text(pilot, "Error: the stream ended")
            assert "Retrying in" in live
            screen = pilot.app.screen
            shown: list[object] = []
            show = screen.show_conversation  # type: ignore[attr-defined]

            def counted() -> None:
                show()
                shown.append(screen._conversation_load)  # type: ignore[attr-defined]

            monkeypatch.setattr(screen, "show_conversation", counted)
            # What the inspect view does after saving an edit.
            runtime.conversations.reload()
            runtime.emit(
                ev.ConversationChanged(
                    conversation_id=runtime.conversations.conversation_id or "",
                    reason="edited",
                    role=runtime.active_role,
                )
            )
            # The event reaches the screen through the event bridge, which delivers once a
            # frame: the old screen already holds every line the reload brings back, so only
            # the reload itself, seen to run, says the text read next is the reloaded one.
            await wait_until(pilot, lambda: shown, "the reload to reach the screen")
            if shown[0] is not None:
                await shown[0]  # type: ignore[misc]
            await screen.query_one("#transcript").settle()  # type: ignore[attr-defined]
            reloaded = screen_text(pilot.app)
            for needle in ("(attempt 1): HTTP 503", "Error: the stream ended"):
                assert needle in reloaded, reloaded
            assert reloaded.index("Retrying in") < reloaded.index("half an answ")
            assert reloaded.index("half an answ") < reloaded.index("Error: the stream ended")
    finally:
        await runtime.aclose()
        runtime.store.close()

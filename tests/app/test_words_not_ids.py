"""People's words, not ids (issue 22): turns named "turn N · ‘first words’" in ``/undo``,
``/rewind`` and the diff title; ``/usage`` by role names with cost as the pane shows it;
``/models`` a picker marking the model in use; ``/model ID`` under ``--model`` says the flag
wins; the prompt's placeholder names the active role; ``/search`` hits open the pager at the
message. Real turns against the scripted server, driven by Pilot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smith_tui.app.screens.turn_diff_screen import TurnDiffScreen
from smith_tui.widgets.transcript.turn_changes import TurnChanges
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call

FIX = "please fix the failing test in the parser module today"


def _flat(app: Any) -> str:
    """The screen's text without borders and line breaks (rows may wrap)."""
    return " ".join(screen_text(app).replace("│", " ").replace("▏", " ").split())


async def _turn(pilot: Any, runtime: Any, text: str) -> None:
    await submit(pilot, text)
    await wait_until(pilot, lambda: not runtime.busy, what=f"the turn {text[:12]!r} to end")


async def test_turns_are_named_by_number_and_prompt_in_undo_rewind_and_the_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply("hello"),
        text_reply(tool_calls=[tool_call("write", {"path": "fix.py", "content": "x = 1\n"})]),
        text_reply("fixed"),
    )
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        label = "turn 2 · ‘please fix the failing test in the parser…’"
        async with running(app, size=(160, 45)) as pilot:
            await _turn(pilot, runtime, "say hello")
            await _turn(pilot, runtime, FIX)
            await wait_until(pilot, lambda: len(app.screen.query(TurnChanges)) == 1, "the mark")
            [mark] = list(app.screen.query(TurnChanges))
            mark.focus()
            await pilot.pause()
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, TurnDiffScreen), "the diff")
            assert app.screen.title_text == f"{label}: 1 file changed"
            await wait_for_text(pilot, "turn 2 · ‘please fix")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, TurnDiffScreen), "closed")

            out = await runtime.submit("/rewind")
            assert label in out.text and "(1 file)" in out.text
            turn_id = out.data["checkpoints"][0]["turn_id"]
            assert turn_id not in out.text

            await submit(pilot, "/undo")
            await wait_for_text(pilot, "restored 1 file")
            flat = _flat(app)
            assert f"restored 1 file to before {label}" in flat
            assert turn_id not in flat
        assert not (Path(runtime.options.cwd) / "fix.py").exists()

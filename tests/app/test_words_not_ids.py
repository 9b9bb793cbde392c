"""People's words, not ids (issue 22): turns named "turn N · ‘first words’" in ``/undo``,
``/rewind`` and the diff title; ``/usage`` by role names with cost as the pane shows it;
``/models`` a picker marking the model in use; ``/model ID`` under ``--model`` says the flag
wins; the prompt's placeholder names the active role; ``/search`` hits open the pager at the
message. Real turns against the scripted server, driven by Pilot."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from smith_tui.app.screens.rewind_screen import RewindScreen
from smith_tui.app.screens.turn_diff_screen import TurnDiffScreen
from smith_tui.engine.roles import role_display
from smith_tui.widgets.prompt_input import PromptInput
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
from widgets.usage_pane import UsagePane

FIX = "please fix the failing test in the parser module today"


def _flat(app: Any) -> str:
    """The screen's text without borders and line breaks (rows may wrap)."""
    return " ".join(screen_text(app).replace("│", " ").replace("▏", " ").split())


async def _turn(pilot: Any, runtime: Any, text: str) -> None:
    await submit(pilot, text)
    # Not busy also holds before the turn's worker has started (on a busy machine, after
    # submit returns): the prompt is stored when the turn starts.
    await wait_until(
        pilot,
        lambda: any(m.get("content") == text for m in runtime.conversations.messages),
        what=f"the turn {text[:12]!r} to start",
    )
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
            # /rewind without arguments also opens the checkpoints screen (its output's
            # action): it lists the turn by its words too; close it before typing /undo.
            await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen), "rewind")
            await wait_for_text(pilot, label)
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, RewindScreen), "closed")

            await submit(pilot, "/undo")
            await wait_for_text(pilot, "restored 1 file")
            flat = _flat(app)
            assert f"restored 1 file to before {label}" in flat
            assert turn_id not in flat
        assert not (Path(runtime.options.cwd) / "fix.py").exists()


async def test_usage_names_roles_and_shows_cost_as_the_pane_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    usage = {"prompt_tokens": 1_234, "completion_tokens": 56, "total_tokens": 1_290,
             "cost": 0.0042}  # fmt: skip
    llm_server.enqueue(text_reply("priced", usage=usage))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app, size=(160, 45)) as pilot:
            await _turn(pilot, runtime, "hello")
            pane = app.main_screen.query_one(UsagePane)
            await wait_until(pilot, lambda: pane.session_cost > 0, what="the pane's cost")
            assert "$0.0042" in pane.table_text().plain and "1.2k/56" in pane.table_text().plain
            out = await runtime.submit("/usage")
        lines = out.text.splitlines()
        assert lines[0] == "session:"
        assert lines[1].split() == ["Smith", "(direct)", "in", "1.2k", "out", "56", "$0.0042"]
        assert lines[2].split() == ["cost", "$0.0042"]
        assert "conversation:" in lines and "  Smith (direct)" in out.text


async def test_model_pin_under_the_model_flag_says_the_flag_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        runtime.options = dataclasses.replace(runtime.options, model="flag-model")
        app = make_app(runtime)
        async with running(app, size=(80, 24)) as pilot:
            await submit(pilot, "/model other-model")
            await wait_for_text(pilot, "pinned")
            flat = _flat(app)
        assert "model other-model pinned to this conversation" in flat
        assert "--model flag-model was given and wins for this run" in flat
        # Without the flag, no such warning.
        runtime.options = dataclasses.replace(runtime.options, model=None)
        out = await runtime.submit("/model third-model")
        assert out.text == "model third-model pinned to this conversation"


async def test_the_placeholder_names_the_active_role(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app, size=(80, 24)) as pilot:
            prompt = app.main_screen.query_one(PromptInput)
            await wait_until(pilot, lambda: prompt.role_shown == "Smith", what="Smith")
            assert str(prompt.placeholder).startswith("Ask Smith…")
            assert "Ask Smith…" in screen_text(app)
            await submit(pilot, "/role orchestrator")
            await wait_until(pilot, lambda: prompt.role_shown != "Smith", what="the new role")
            alias = role_display("orchestrator")[0]
            assert str(prompt.placeholder).startswith(f"Ask {alias}…")
            await wait_for_text(pilot, f"Ask {alias}…")

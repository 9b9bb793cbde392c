"""``/models`` is a picker marking the model in use (enter pins one, as ``/model ID`` does;
escape changes nothing), and ``/search`` hits open the pager at their message (issue 22).
Real turns against the scripted server, driven by Pilot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import OptionList

from smith_tui.app.screens.pager_screen import PagerScreen
from smith_tui.app.screens.picker_screen import PickerScreen
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply

CATALOG = {
    "object": "list",
    "data": [
        {"id": "scripted-model", "object": "model", "context_length": 32768},
        {"id": "other-model", "object": "model", "context_length": 8192},
        {"id": "third-model", "object": "model"},
    ],
}


async def _turn(pilot: Any, runtime: Any, text: str) -> None:
    await submit(pilot, text)
    await wait_until(pilot, lambda: not runtime.busy, what=f"the turn {text[:12]!r} to end")


async def test_models_is_a_picker_that_marks_the_model_in_use_and_pins_the_choice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    llm_server.catalog = CATALOG
    llm_server.enqueue(text_reply("hello"))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app, size=(120, 36)) as pilot:
            await _turn(pilot, runtime, "say hello")
            assert runtime.model == "scripted-model"
            await submit(pilot, "/models")
            await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), "the picker")
            text = await wait_for_text(pilot, "scripted-model  ctx 32768  (in use)")
            assert "● scripted-model" in text and "other-model  ctx 8192" in text
            assert "(in use)" not in text.split("other-model", 1)[1]
            options = app.screen.query_one(OptionList)
            assert options.highlighted == 0  # the model in use
            # Escape cancels: nothing pinned.
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "the picker closed")
            assert runtime.conversations.pinned_model is None
            # Again, and choose the second model: /model other-model runs.
            await submit(pilot, "/models")
            await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), "the picker")
            await pilot.press("down", "enter")
            await wait_for_text(pilot, "model other-model pinned to this conversation")
            assert app.screen is app.main_screen
            assert runtime.conversations.pinned_model == "other-model"
            assert runtime.model == "other-model"
            # The picker now marks the pinned model.
            await submit(pilot, "/models")
            await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), "the picker")
            await wait_for_text(pilot, "other-model  ctx 8192  (in use)")
            assert app.screen.query_one(OptionList).highlighted == 1


async def test_a_search_hit_opens_the_pager_at_its_message_with_the_match_in_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    filler = "\n".join(f"line {n} of a long answer" for n in range(80))
    llm_server.enqueue(
        text_reply(filler),
        text_reply(filler),
        text_reply(filler + "\nthe zanzibar parser is fixed\n" + filler),
        text_reply(filler),
    )
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app, size=(120, 36)) as pilot:
            for prompt in ("one", "two", "three", "four"):
                await _turn(pilot, runtime, prompt)
            await submit(pilot, "/search zanzibar")
            await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), "the hits")
            text = await wait_for_text(pilot, "#5 assistant  this conversation")
            assert "«zanzibar»" in text
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen), "the pager")
            pager = app.screen
            assert isinstance(pager, PagerScreen)
            await wait_until(
                pilot, lambda: pager.pager.current_match is not None, "the hit current"
            )
            match = pager.pager.current_match
            assert match is not None
            start, end = pager.message_lines(5) or (0, 0)
            assert start <= match.line < end
            assert pager.pager.current_text.lower() == "zanzibar"
            # On screen: the hit's line (the pager opened far from its top) and the count.
            text = screen_text(app)
            assert "the zanzibar parser is fixed" in text and "1 of 1" in text
            assert pager.pager.scroll_y > 80
            # The same search typed in the pager finds it too (find still works from here).
            await pilot.press("n")
            assert pager.pager.current_match == match

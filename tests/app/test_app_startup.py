"""The app paints its prompt before the runtime is open, queues early input, and reports
a runtime that cannot be opened."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from textual.widget import Widget
from textual.widgets import Static

from smith_tui.app import main_screen
from smith_tui.app.app import SmithApp
from smith_tui.config import ConfigError
from tests.app.app_harness import (
    SIZE,
    app_runtime,
    isolate_environment,
    make_app,
    running,
    wait_until,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply


async def test_prompt_paints_before_the_runtime_opens(
    tmp_path: Path, monkeypatch, llm_server: ScriptedLLMServer
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    llm_server.enqueue(text_reply("answer after opening"))
    gate = threading.Event()

    def opener():
        gate.wait(10)  # opening is slow: the prompt must not wait for it
        runtime = app_runtime(tmp_path, llm_server.base_url)
        runtime.conversations.new()
        return runtime

    app = SmithApp(opener=opener, animations=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.runtime is None
        prompt = app.query_one("#prompt")
        assert prompt.has_focus
        await pilot.press(*"early question")
        await pilot.press("enter")
        gate.set()
        await wait_until(pilot, llm_server.chat_requests, "the queued prompt's request")
        assert app.runtime is not None
        user = [m for m in llm_server.chat_requests()[0]["messages"] if m["role"] == "user"]
        assert user[0]["content"] == "early question"
        # The turn only: the transcript's work queue is a worker that runs until unmount
        # (and an empty list would wait for every worker: the turn may be over already).
        turn = [w for w in app.workers if w.group == "turn"]
        if turn:
            await app.workers.wait_for_complete(turn)
    await app.runtime.aclose()


async def test_runtime_that_cannot_open_exits_with_its_message(tmp_path: Path, monkeypatch) -> None:
    isolate_environment(monkeypatch, tmp_path)

    def opener():
        raise ConfigError("config.json line 3 column 5: expected ',' (fix the file)")

    app = SmithApp(opener=opener, animations=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.startup_error, "the startup error")
    assert app.return_code == 2
    assert "line 3 column 5" in (app.startup_error or "")


@pytest.mark.parametrize("quit_by", ["exit", "shutdown"])
async def test_quitting_while_the_panes_mount_is_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quit_by: str
) -> None:
    """The app closes in the moment the panes are being mounted (the user quits, or the
    test harness shuts it down): no error, clean exit."""
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, api_url="http://127.0.0.1:9/v1")
    runtime.conversations.new()
    mounting = asyncio.Event()
    release = asyncio.Event()

    class SlowUsage(Static):
        async def on_mount(self) -> None:
            mounting.set()
            await release.wait()

    def panes(refresh_s: float) -> dict[str, Widget]:
        made = real_make_panes(refresh_s)
        made["usage"] = SlowUsage(id="usage")
        return made

    real_make_panes = main_screen.make_panes
    monkeypatch.setattr(main_screen, "make_panes", panes)
    app = SmithApp(runtime, animations=False)
    async with app.run_test(size=SIZE):
        await asyncio.wait_for(mounting.wait(), 10)
        if quit_by == "exit":
            app.exit()
        asyncio.get_running_loop().call_later(0.05, release.set)
    runtime.store.close()
    assert app.return_code == (0 if quit_by == "exit" else None)  # None: no error either
    assert not app.main_screen.panes_ready


@pytest.mark.parametrize(("setting", "expected"), [(None, 0.1), (0.3, 0.3)])
async def test_the_transcript_updates_a_stream_at_the_configured_pace(
    tmp_path: Path, monkeypatch, setting: float | None, expected: float
) -> None:
    from smith_tui.widgets.transcript import Transcript

    isolate_environment(monkeypatch, tmp_path)
    config = {} if setting is None else {"services": {"ui": {"stream_refresh_s": setting}}}
    runtime = app_runtime(tmp_path, api_url="http://127.0.0.1:9/v1", config=config)
    async with running(make_app(runtime)) as pilot:
        assert pilot.app.main_screen.query_one(Transcript).flush_interval == expected


def test_a_stream_pace_out_of_range_is_refused_with_its_bounds() -> None:
    from smith_tui.config import check_config

    with pytest.raises(ConfigError) as refused:
        check_config({"services": {"ui": {"stream_refresh_s": 0}}})
    problems = [str(problem) for problem in refused.value.problems]
    assert any(p.startswith("services.ui.stream_refresh_s") and "0.02" in p for p in problems)

"""``/rewind`` in the real app (Textual Pilot): the list screen, keyboard-first restore."""

from __future__ import annotations

from pathlib import Path

from smith_tui.app.screens.rewind_screen import RewindScreen
from smith_tui.engine.checkpoints import runtime_checkpoints
from tests.app.app_harness import app_runtime, isolate_environment, make_app, running, submit
from tests.checkpoints.support import make_repo
from tests.support.pilot import screen_text, wait_until


async def test_rewind_opens_the_list_and_enter_restores_the_files(
    tmp_path: Path, monkeypatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    repo = make_repo(tmp_path / "project")
    runtime = app_runtime(tmp_path, api_url="http://127.0.0.1:9/v1")
    checkpoints = runtime_checkpoints(runtime)
    first = checkpoints.record_turn(
        "turn-7", runtime.conversations.conversation_id, "rename the helpers"
    )
    (repo / "src" / "util.py").write_text("changed by the turn\n")
    (repo / "src" / "extra.py").write_text("new\n")
    checkpoints.finish(first)

    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "/rewind")
        await wait_until(
            pilot, lambda: isinstance(app.screen, RewindScreen), "rewind screen", within=5
        )
        screen = app.screen
        await wait_until(pilot, lambda: len(screen.entries) == 1, "checkpoints loaded", within=5)
        text = screen_text(app)
        assert "a turn · ‘rename the helpers’" in text and "turn-7" not in text  # words, not ids
        assert "M src/util.py" in text and "A src/extra.py" in text

        await pilot.press("d")
        await wait_until(
            pilot, lambda: "+changed by the turn" in screen_text(app), "the diff", within=5
        )

        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is app.main_screen, "screen closed", within=5)
        await wait_until(pilot, lambda: "restored 2 files" in screen_text(app), "notice", within=5)

    assert (repo / "src" / "util.py").read_text() == "def helper():\n    pass\n"
    assert not (repo / "src" / "extra.py").exists()
    await runtime.aclose()


async def test_the_rewind_screen_says_when_there_are_no_checkpoints(
    tmp_path: Path, monkeypatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    runtime = app_runtime(tmp_path, api_url="http://127.0.0.1:9/v1")
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "/rewind")
        await wait_until(
            pilot, lambda: isinstance(app.screen, RewindScreen), "rewind screen", within=5
        )
        await wait_until(
            pilot, lambda: "No checkpoints yet" in screen_text(app), "empty message", within=5
        )
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main_screen, "closed", within=5)
    await runtime.aclose()

"""Shared helpers for the app tests: a real runtime in tmp dirs, screen text, waiting."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from smith_tui.app.app import SmithApp
from smith_tui.engine.runtime import Runtime
from tests.support.pilot import screen_text, wait_until
from tests.support.pilot import wait_for_still_screen as wait_for_still_screen  # (re-exported)
from tests.support.runtime import open_runtime

SIZE = (120, 36)


def isolate_environment(monkeypatch: Any, tmp_path: Path) -> None:
    """Point XDG dirs into ``tmp_path`` and drop smith's environment variables."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    for name in ("SMITH_API_URL", "SMITH_MODEL", "LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def app_runtime(
    tmp_path: Path,
    api_url: str | None = None,
    config: dict[str, Any] | None = None,
    ephemeral: dict[str, Any] | None = None,
) -> Runtime:
    """A runtime opened the way ``smith`` opens one (through :func:`open_runtime`): the
    configured model and retry backoffs, the last conversation resumed, a plain project
    folder, no recorder; with a conversation ready."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    runtime, _ = open_runtime(
        tmp_path,
        api_url,
        config=config,
        ephemeral=ephemeral,
        model=None,
        cwd=project,
        fast_retries=False,
        record=False,
        auto_resume=True,
    )
    runtime.conversations.ensure()
    return runtime


@contextlib.contextmanager
def isolated_runtime(
    tmp_path: Path,
    monkeypatch: Any,
    api_url: str | None = None,
    config: dict[str, Any] | None = None,
    ephemeral: dict[str, Any] | None = None,
) -> Iterator[Runtime]:
    """:func:`isolate_environment`, then :func:`app_runtime`; its store is closed on exit."""
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, api_url, config=config, ephemeral=ephemeral)
    try:
        yield runtime
    finally:
        runtime.store.close()


def make_app(runtime: Runtime) -> SmithApp:
    """The app with animations off (deterministic frames)."""
    return SmithApp(runtime, animations=False)


async def wait_for_text(pilot: Pilot[Any], text: str, within: float = 30.0) -> str:
    """Wait until ``text`` is on screen; return the screen text. A timeout says which screen
    was up and what it showed, so a failure shows its cause. (30 s: see ``wait_until``.)"""
    try:
        await wait_until(
            pilot, lambda: text in screen_text(pilot.app), f"{text!r} on screen", within
        )
    except AssertionError as timed_out:
        shown = f"{type(pilot.app.screen).__name__} showed:\n{screen_text(pilot.app)}"
        raise AssertionError(f"{timed_out}; {shown}") from None
    return screen_text(pilot.app)


@contextlib.asynccontextmanager
async def running(app: App[Any], size: tuple[int, int] = SIZE) -> AsyncIterator[Pilot[Any]]:
    """``app.run_test`` at the standard size with toasts shown (they are off by default),
    entered once the main screen's panes are mounted."""
    async with app.run_test(size=size, notifications=True) as pilot:
        main = getattr(app, "main_screen", None)
        if main is not None:
            # The panes come once the runtime opened in its thread: at load 15 under four
            # test workers that took over 10 s (the default ceiling of a wait).
            await wait_until(pilot, lambda: main.panes_ready, what="the panes", within=30.0)
        yield pilot


async def submit(pilot: Pilot[Any], text: str) -> None:
    """Put ``text`` in the prompt (without typing it key by key) and press enter."""
    from smith_tui.widgets.prompt_input import PromptInput

    prompt = pilot.app.screen.query_one(PromptInput)
    prompt.load_text(text)
    prompt.move_cursor(prompt.document.end)
    await pilot.pause()
    await pilot.press("enter")

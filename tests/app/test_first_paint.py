"""What the app's first frame holds and what it leaves for later (bench/first_paint.py).

The module imports are checked in tests/test_headless_imports.py; these check the screen.
"""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest
from textual.widgets._footer import FooterKey

from smith_tui import cli
from smith_tui.app import app as app_module
from smith_tui.app.app import SmithApp
from smith_tui.app.first_run import FirstRunScreen
from smith_tui.config import ConfigError
from smith_tui.llm import server_probe
from smith_tui.widgets.matrix_rain import MatrixRain
from smith_tui.widgets.todo_panel import TodoPanel
from tests.app.app_harness import SIZE, isolated_runtime, make_app, wait_until


async def test_the_footer_has_its_keys_before_the_runtime_and_the_first_refresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual's footer composes empty and fills itself one refresh later; Smith's has its
    keys from the start, so the ready prompt (footer included) is the first frame."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    gate = threading.Event()

    def opener() -> None:
        gate.wait(10)
        raise ConfigError("not opened in this test")

    app = SmithApp(opener=opener, animations=False)
    async with app.run_test(size=SIZE) as pilot:
        first = [key.action for key in app.main_screen.query(FooterKey)]
        assert app.runtime is None
        assert first[:3] == ["cancel_or_copy", "quit", "open_help"]
        await pilot.pause()
        # Focusing the prompt recomposes the footer: the same keys, in the same order.
        assert [key.action for key in app.main_screen.query(FooterKey)] == first
        gate.set()
        await wait_until(pilot, lambda: app.startup_error, "the startup error")


async def test_the_rain_and_todo_list_mount_after_the_first_frame_under_a_covering_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both are hidden while idle, so they are mounted with the panes; the welcome screen
    covers the main screen before that, and the rain mounted under it starts paused."""
    monkeypatch.setattr(server_probe, "LOCAL_SERVERS", ())
    with isolated_runtime(tmp_path, monkeypatch) as runtime:  # no server: the welcome screen
        app = make_app(runtime)
        async with app.run_test(size=SIZE) as pilot:
            main = app.main_screen
            assert not main.query(MatrixRain) and not main.query(TodoPanel)
            await wait_until(pilot, lambda: main.panes_ready, what="the panes")
            assert isinstance(app.screen, FirstRunScreen)
            rain = main.query_one(MatrixRain)
            assert rain.suspended
            column = main.query_one("#transcript-column")
            assert [child.id for child in column.children] == ["transcript-slot", "rain"]
            order = [child.id for child in main.children]
            assert order.index("body") < order.index("todo") < order.index("completion")
            app.pop_screen()
            await pilot.pause()
            assert not rain.suspended


def test_the_cli_leaves_the_collector_on_after_importing_the_app(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The collector is off while the app module is imported (its objects live as long as
    the process), and on again by the time the app runs."""
    seen: list[bool] = []

    def run_app(**_: object) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(app_module, "run_app", run_app)
    assert gc.isenabled()
    try:
        assert cli.main([]) == 0
    finally:
        gc.unfreeze()  # the CLI froze this test process's heap: give it back to the collector
    assert seen == [True]
    assert gc.isenabled()

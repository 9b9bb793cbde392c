"""The modal screens inside the real app: each opens on its key and closes with escape."""

from __future__ import annotations

from pathlib import Path

from smith_tui.app.screens.config_screen import ConfigScreen
from smith_tui.app.screens.help_screen import HelpScreen
from smith_tui.app.screens.history_screen import HistoryScreen
from smith_tui.app.screens.inspect_screen import InspectScreen
from smith_tui.app.screens.pager_screen import PagerScreen
from tests.app.app_harness import SIZE, app_runtime, isolate_environment, make_app, wait_until

KEYS = [
    ("alt+h", PagerScreen),
    ("alt+i", InspectScreen),
    ("ctrl+r", HistoryScreen),
    ("f2", ConfigScreen),
    ("f1", HelpScreen),
]


async def test_each_screen_opens_on_its_key_and_closes(tmp_path: Path, monkeypatch) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, api_url="http://127.0.0.1:9/v1")
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for key, screen_type in KEYS:
            await pilot.press(key)
            await wait_until(pilot, lambda t=screen_type: isinstance(app.screen, t), key, within=5)
            await pilot.press("escape")
            await wait_until(
                pilot, lambda: app.screen is app.main_screen, f"{key} closed", within=5
            )
    await runtime.aclose()

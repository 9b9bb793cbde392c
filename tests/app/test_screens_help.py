"""The help screen lists every key in effect and every command; the palette runs app actions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.command import CommandList, CommandPalette

from smith_tui.app.screens.help_screen import HelpScreen
from smith_tui.app.screens.palette import palette_entries
from smith_tui.engine.slash import COMMANDS
from tests.app.app_harness import screen_text, wait_until
from tests.support.screen_host import ScreenHost, offline_runtime


async def test_help_lists_configured_keys_and_every_command(tmp_path: Path) -> None:
    runtime = offline_runtime(
        tmp_path,
        config={
            "services": {
                "ui": {"keys": {"pager": "alt+p", "quit": "ctrl+x", "permission_mode": "ctrl+t"}}
            }
        },
    )
    async with ScreenHost(lambda: HelpScreen(runtime)).run_test(size=(110, 120)) as pilot:
        app = pilot.app
        await pilot.pause()
        text = screen_text(app)
        for key, what in (
            ("alt+p", "Open the transcript pager."),
            ("alt+i", "Open the inspect view"),
            ("ctrl+c", "Cancel the active turn"),
            ("ctrl+p", "Open the command palette."),
            ("ctrl+x", "Quit smith."),
            ("ctrl+t", "Switch to the next permission mode"),
        ):
            assert any(key in line and what in line for line in text.splitlines()), key
        assert "alt+h" not in text  # the configured key replaces the default
        assert "f4" not in text
        for name, description in COMMANDS.items():
            assert any(name in line and description in line for line in text.splitlines()), name
        assert "In Transcript pager" in text and "Find" in text
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]
    await runtime.aclose()


def _first_hit(app: Any) -> str:
    """The text of the palette's highlighted hit ("" while it has none)."""
    option = app.screen.query_one(CommandList).highlighted_option
    return str(option.hit.text) if option is not None else ""


async def test_palette_lists_smith_commands_and_runs_actions_by_name(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    async with ScreenHost(lambda: HelpScreen(runtime)).run_test(size=(110, 50)) as pilot:
        app = pilot.app
        await pilot.pause()
        # The palette opens and searches in workers: each step waits for what it needs
        # (a fixed 0.2 s pause was too short on a loaded machine).
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        titles = [entry.title for entry in palette_entries()]
        await wait_until(pilot, lambda: all(t in screen_text(app) for t in titles), "entries")
        text = screen_text(app)
        for entry in palette_entries():
            assert entry.title in text, entry.title
        assert "Theme" in text  # Textual's theme switcher stays

        await pilot.press(*"histo")
        await wait_until(pilot, lambda: _first_hit(app).startswith("History"), "History")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.actions, "the action")
        assert app.actions == ["open_history"]

        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"tank")
        await wait_until(pilot, lambda: "Tank" in _first_hit(app), "Tank")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.actions) == 2, "the second action")
        assert app.actions == ["open_history", "switch_role:orchestrator"]

    await runtime.aclose()


def test_palette_entries_name_app_actions() -> None:
    actions = [entry.action for entry in palette_entries()]
    assert actions[:6] == [
        "new_conversation",
        "open_history",
        "open_config",
        "open_pager",
        "open_inspect",
        "open_help",
    ]
    assert "switch_role('direct')" in actions and "switch_role('orchestrator')" in actions
    assert "switch_role('worker')" not in actions  # sub-agent roles are not user-facing
    assert actions[-1] == "quit"

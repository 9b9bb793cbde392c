"""F2 (issue 22): typed text goes to the field that shows it, Enter on a filtered row edits
that row, and an unset setting shows the value in effect with its source.

Pilot on the real config screen and a real runtime in tmp folders; snapshots at 80×24
and 160×45 of a filtered, edited row.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from smith_tui.app.screens.config_screen import ConfigScreen
from smith_tui.engine.runtime import Runtime
from tests.app.app_harness import wait_for_still_screen
from tests.support.screen_host import ScreenHost, offline_runtime

SIZES = [(80, 24), (160, 45)]


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    """A real runtime on tmp files, closed after the test."""
    opened = offline_runtime(tmp_path, config={"llm_config": {"api_url": "http://127.0.0.1:9/v1"}})
    try:
        yield opened
    finally:
        asyncio.run(opened.aclose())


def _cells(screen: ConfigScreen, path: str) -> list[str]:
    return [str(cell) for cell in screen.query_one(DataTable).get_row(path)]


async def _filter_and_edit(pilot: Pilot[Any]) -> None:
    """Type a filter on the table (no "/" first), Enter twice, type a value: not saved."""
    await pilot.pause()
    await pilot.press(*"stall timeout")  # "e" and "u" once were keys of the table
    await pilot.press("enter")  # filter → table, first match highlighted
    await pilot.press("enter")  # the row → its value box
    await pilot.press(*"30")  # the prefilled value is selected: typing replaces it


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
async def test_typed_text_goes_to_the_filter_and_enter_edits_the_filtered_row(
    runtime: Runtime, size: tuple[int, int]
) -> None:
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfigScreen)
        value_box = screen.query_one("#config-value", Input)
        await pilot.press(*"stall timeout")
        assert app.focused is screen.query_one("#config-filter", Input)
        assert screen.query_one("#config-filter", Input).value == "stall timeout"
        assert [row.path for row in screen.rows] == ["llm_config.stream_stall_timeout"]
        # Nothing typed reached the value box of the row highlighted before (api_url).
        assert runtime.config.effective["llm_config"]["api_url"] == "http://127.0.0.1:9/v1"
        await pilot.press("enter", "enter")
        assert app.focused is value_box and value_box.region.height > 0
        assert screen.query_one("#config-path", Input).value == "llm_config.stream_stall_timeout"
        await pilot.press(*"30", "enter")
        await pilot.pause()
        assert runtime.config.effective["llm_config"]["stream_stall_timeout"] == 30
        assert _cells(screen, "llm_config.stream_stall_timeout")[1:] == ["30", "persisted"]
        assert runtime.config.effective["llm_config"]["api_url"] == "http://127.0.0.1:9/v1"


async def test_unset_settings_show_the_value_in_effect_and_its_source(runtime: Runtime) -> None:
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZES[1]) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfigScreen)
        assert _cells(screen, "llm_config.recv_timeout")[1:] == ["120", "defaults"]
        # (the test config file sets this one)
        assert _cells(screen, "llm_config.stream_stall_timeout")[1:] == ["5", "user"]
        assert _cells(screen, "llm_config.connect_timeout")[1:] == ["10", "defaults"]
        assert _cells(screen, "tool_step_budget")[1:] == ["200", "defaults"]
        assert _cells(screen, "budget.turn_tokens")[1:] == ["no limit", "defaults"]
        assert _cells(screen, "active_role")[1:] == ["direct", "defaults"]
        # offline_runtime opens like the headless front end, whose own mode is yolo.
        assert _cells(screen, "permissions.mode")[1:] == [
            runtime.options.permission_mode,
            "app default",
        ]
        # Set, the layer's value shows; the value box of an unset row stays empty.
        runtime.set_config("llm_config.recv_timeout", "7")
        screen.refresh_rows()
        assert _cells(screen, "llm_config.recv_timeout")[1:] == ["7", "persisted"]
        await pilot.press(*"connect")
        await pilot.press("enter")
        assert screen.query_one("#config-value", Input).value == ""


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_filtered_edit_snapshot(snap_compare, runtime: Runtime, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _filter_and_edit(pilot)
        await wait_for_still_screen(pilot)

    app = ScreenHost(lambda: ConfigScreen(runtime))
    assert snap_compare(app, terminal_size=size, run_before=run_before)

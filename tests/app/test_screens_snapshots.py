"""Snapshot tests of every modal screen, on fixed data (no tmp paths, ids or clock times shown)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, OptionList

from smith_tui.app.screens.config_screen import ConfigScreen
from smith_tui.app.screens.help_screen import HelpScreen
from smith_tui.app.screens.history_screen import HistoryScreen
from smith_tui.app.screens.inspect_screen import InspectScreen
from smith_tui.app.screens.pager_screen import PagerScreen
from smith_tui.engine.runtime import Runtime
from tests.app.app_harness import wait_for_still_screen, wait_until
from tests.support.pilot import wait_for_history_hits
from tests.support.screen_host import ScreenHost, offline_runtime, seed_conversation

SNAP_SIZE = (110, 32)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    """A real runtime on tmp files, closed after the test."""
    opened = offline_runtime(tmp_path)
    try:
        yield opened
    finally:
        asyncio.run(opened.aclose())


def _then(*steps: Callable[[Pilot[Any]], Any]) -> Callable[[Pilot[Any]], Any]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        for step in steps:
            result = step(pilot)
            if asyncio.iscoroutine(result):
                await result
            await pilot.pause()
        await wait_for_still_screen(pilot)  # (the cursors do not blink: tests/conftest.py)

    return run_before


def test_config_screen(snap_compare, runtime: Runtime) -> None:
    runtime.set_config("tool_step_budget", "25")
    app = ScreenHost(lambda: ConfigScreen(runtime))
    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=_then())


def test_config_screen_validation_error(snap_compare, runtime: Runtime) -> None:
    def select_and_type(pilot: Pilot[Any]) -> Any:
        screen = pilot.app.screen
        table = screen.query_one(DataTable)
        table.move_cursor(row=[r.path for r in screen.rows].index("tool_step_budget"))

        async def type_value() -> None:
            # Each key waits for what the one before did: on a busy machine a key can
            # arrive before the focus moved (then "-2" would go to the filter).
            path_box = screen.query_one("#config-path", Input)
            value_box = screen.query_one("#config-value", Input)
            await wait_until(pilot, lambda: path_box.value == "tool_step_budget", "the row")
            await pilot.press("enter")
            await wait_until(pilot, lambda: value_box.has_focus, "the value box")
            await pilot.press(*"-2")
            await wait_until(pilot, lambda: value_box.value == "-2", "the typed value")
            await pilot.press("enter")
            error = screen.query_one("#config-error")
            await wait_until(pilot, lambda: error.has_class("-shown"), "the error")

        return type_value()

    app = ScreenHost(lambda: ConfigScreen(runtime))
    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=_then(select_and_type))


def _seed_with_snapshot(runtime: Runtime) -> None:
    conv = seed_conversation(runtime)
    runtime.store.snapshots.record(conv, "scripted-model", "You are Smith, a coding agent.", TOOLS)


def test_inspect_screen_messages(snap_compare, runtime: Runtime) -> None:
    _seed_with_snapshot(runtime)

    def pick_call(pilot: Pilot[Any]) -> None:
        pilot.app.screen.query_one("#inspect-list", OptionList).highlighted = 1

    app = ScreenHost(lambda: InspectScreen(runtime))
    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=_then(pick_call))


def test_inspect_screen_requests(snap_compare, runtime: Runtime) -> None:
    _seed_with_snapshot(runtime)
    app = ScreenHost(lambda: InspectScreen(runtime))
    assert snap_compare(app, terminal_size=SNAP_SIZE, press=["ctrl+t"], run_before=_then())


def test_confirm_over_inspect(snap_compare, runtime: Runtime) -> None:
    _seed_with_snapshot(runtime)

    def delete_call(pilot: Pilot[Any]) -> Any:
        pilot.app.screen.query_one("#inspect-list", OptionList).highlighted = 1
        return pilot.press("delete")

    app = ScreenHost(lambda: InspectScreen(runtime))
    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=_then(delete_call))


def test_history_screen(snap_compare, runtime: Runtime) -> None:
    store = runtime.store
    for title, prompt, tokens in (
        ("Fix the parser", "the parser breaks on tabs", (1200, 300)),
        (None, "write docs for the tokenizer module", (40, 2)),
        ("Release notes", "draft the release notes", (0, 0)),
    ):
        conv = store.conversations.create(runtime.project_id, title)
        store.conversations.append_messages(conv, [{"role": "user", "content": prompt}])
        turn = store.turns.start(conv, "direct")
        if tokens[0]:
            store.usage.record(conv, turn, "direct", "m", *tokens)
    runtime.conversations.load(conv)
    app = ScreenHost(lambda: HistoryScreen(runtime, time_format=lambda ts: "2025-01-02 03:04"))
    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=_then())


def test_history_screen_search(snap_compare, runtime: Runtime) -> None:
    store = runtime.store
    conv = store.conversations.create(runtime.project_id, "Fix the parser")
    store.conversations.append_messages(
        conv,
        [
            {"role": "user", "content": "the parser breaks on tabs"},
            {"role": "assistant", "content": "expanding tabs before tokenizing fixes it"},
        ],
    )

    async def search(pilot: Pilot[Any]) -> None:
        screen = pilot.app.screen
        screen.query_one("#history-search", Input).value = "tabs"
        await wait_for_history_hits(pilot, "tabs")

    app = ScreenHost(lambda: HistoryScreen(runtime, time_format=lambda ts: "2025-01-02 03:04"))
    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=_then(search))


def test_pager_screen_find(snap_compare, runtime: Runtime) -> None:
    seed_conversation(runtime)

    def find(pilot: Pilot[Any]) -> Any:
        return pilot.press("slash", *"readme", "enter")

    def to_text(pilot: Pilot[Any]) -> None:
        pilot.app.screen.query_one("#pager-text").focus()

    app = ScreenHost(lambda: PagerScreen(runtime))
    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=_then(find, to_text))


def test_help_screen(snap_compare, runtime: Runtime) -> None:
    app = ScreenHost(lambda: HelpScreen(runtime))
    assert snap_compare(app, terminal_size=(110, 48), run_before=_then())

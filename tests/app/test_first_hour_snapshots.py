"""Snapshots of what the first hour shows (issue 17) at 80x24 and 160x45: an ``edit``
call's collapsed ``+N −M`` line and its expanded red/green diff, and a prompt queued
behind a running turn."""

from __future__ import annotations

import json

import pytest

from smith_tui.tools.diffs import range_diff
from smith_tui.widgets.transcript.tool_call import ToolCallEntry
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    screen_text,
    wait_for_still_screen,
    wait_until,
)

OFFLINE_URL = "http://127.0.0.1:9/v1"
OLD = ["def area(r):", "    return 3.14 * r * r", "", "def main():", "    print(area(2))"]
NEW = ["    return math.pi * r ** 2"]


def _seeded(tmp_path, monkeypatch):
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, api_url=OFFLINE_URL, ephemeral={"default_model": "qwen-coder"})
    store = runtime.store
    conv = store.conversations.create(runtime.project_id, "Use math.pi")
    diff = range_diff("src/geometry.py", OLD, 1, 1, NEW)
    arguments = {"path": "src/geometry.py", "operation": "replace", "start_line": 2}
    call = {
        "id": "call_edit",
        "type": "function",
        "function": {"name": "edit", "arguments": json.dumps(arguments)},
    }
    store.conversations.append_messages(
        conv,
        [
            {"role": "user", "content": "Use math.pi in area()."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": "call_edit",
                "name": "edit",
                "content": "Edited src/geometry.py: replaced lines 2-2 (1) with 1 line(s)\n"
                "new hash: " + "0" * 64,
                "metadata": {"ok": True, "duration_s": 0.01, **diff.metadata()},
            },
            {"role": "assistant", "content": "Done: `area()` uses `math.pi` now."},
        ],
    )
    runtime.conversations.load(conv)
    return runtime


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
def test_edit_diff_expanded(snap_compare, tmp_path, monkeypatch, size) -> None:
    runtime = _seeded(tmp_path, monkeypatch)
    app = make_app(runtime)

    async def expand(pilot) -> None:
        await wait_until(pilot, lambda: app.main_screen.panes_ready, what="the panes")
        await wait_until(pilot, lambda: "+1 −1" in screen_text(app), what="the counts")
        entry = app.screen.query_one(ToolCallEntry)
        entry.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: "+++ b/src/geometry.py" in screen_text(app), what="diff")
        await wait_for_still_screen(pilot)

    try:
        assert snap_compare(app, terminal_size=size, run_before=expand)
    finally:
        runtime.store.close()

"""Snapshots of issue 22's words at 80x24 and 160x45: the line a resumed conversation opens
with (transcript and status line), the status line when the server sends nothing, and the
``/models`` picker marking the model in use. (The ``✗ exit N`` row and the sub-agent's
transcript are in test_tool_outcomes_snapshots.py.)

No clock reaches the screen: the resume's age is set two hours back, the status line's
clock is a manual one, the spinner is stepped once by hand, animations are off.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from smith_tui.app.screens.models_picker import models_picker
from smith_tui.app.screens.picker_screen import PickerScreen
from smith_tui.engine import events as ev
from smith_tui.widgets.status_line import StatusLine
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    screen_text,
    wait_until,
)

OFFLINE_URL = "http://127.0.0.1:9/v1"
SIZES = [(80, 24), (160, 45)]
IDS = ["80x24", "160x45"]


def _runtime(tmp_path: Any, monkeypatch: Any) -> Any:
    isolate_environment(monkeypatch, tmp_path)
    return app_runtime(tmp_path, api_url=OFFLINE_URL, ephemeral={"default_model": "qwen-coder"})


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_resume_line(snap_compare, tmp_path, monkeypatch, size) -> None:
    first = _runtime(tmp_path, monkeypatch)
    conversation = first.store.conversations.create(first.project_id, "fix the failing test")
    first.store.conversations.append_messages(
        conversation,
        [
            {"role": "user", "content": "The parser test fails; fix it."},
            {"role": "assistant", "content": "Fixed: `parse()` strips the newline first."},
        ],
    )
    first.persistence.set_active_conversation(conversation, first.project_id)
    first.store.close()
    runtime = app_runtime(
        tmp_path, api_url=OFFLINE_URL, ephemeral={"default_model": "qwen-coder"}
    )  # plain smith: auto-resume
    resumed = runtime.conversations.resumed
    assert resumed is not None and resumed.title == "fix the failing test"
    runtime.conversations.resumed = dataclasses.replace(
        resumed, last_active=time.time() - 2 * 3600 - 60
    )
    app = make_app(runtime)

    async def run(pilot: Any) -> None:
        await wait_until(pilot, lambda: app.main_screen.panes_ready, what="the panes")
        await wait_until(pilot, lambda: "/new starts fresh" in screen_text(app), "the line")

    try:
        assert snap_compare(app, terminal_size=size, run_before=run)
    finally:
        runtime.store.close()


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_stall_status(snap_compare, tmp_path, monkeypatch, size) -> None:
    runtime = _runtime(tmp_path, monkeypatch)
    runtime.conversations.new("Slow server")
    app = make_app(runtime)
    now = [1000.0]

    async def run(pilot: Any) -> None:
        await wait_until(pilot, lambda: app.main_screen.panes_ready, what="the panes")
        status = app.main_screen.query_one(StatusLine)
        status.clock = lambda: now[0]
        runtime.emit(ev.TurnStarted(turn_id="t1", conversation_id="c", prompt="Explain parse()"))
        runtime.emit(ev.StatusChanged(status="thinking", detail=""))
        # The events reach the line through the bridge: the quiet time counts from them.
        await wait_until(pilot, lambda: status.status == "thinking", what="the turn")
        await wait_until(pilot, lambda: status._quiet_since == now[0], what="the last event")
        now[0] += 16  # sixteen seconds without a byte
        status._tick()  # what the line's timer does every 0.1 s (off without animations)
        await wait_until(pilot, lambda: "no data from the server" in screen_text(app), "it")

    try:
        assert snap_compare(app, terminal_size=size, run_before=run)
    finally:
        runtime.store.close()


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_models_picker(snap_compare, tmp_path, monkeypatch, size) -> None:
    runtime = _runtime(tmp_path, monkeypatch)
    runtime.conversations.new("Pick a model")
    app = make_app(runtime)
    ids = ["llama-3.1-8b", "qwen-coder", "mistral-small"]
    rows = [
        "llama-3.1-8b  ctx 131072",
        "qwen-coder  ctx 32768  max out 8192",
        "mistral-small  ctx ?",
    ]

    async def run(pilot: Any) -> None:
        await wait_until(pilot, lambda: app.main_screen.panes_ready, what="the panes")
        # As the app opens it for /models' output (the server's catalog, here given).
        app.push_screen(models_picker(runtime, {"models": ids, "rows": rows}))
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), "the picker")
        await wait_until(pilot, lambda: "(in use)" in screen_text(app), "the mark")

    try:
        assert snap_compare(app, terminal_size=size, run_before=run)
    finally:
        runtime.store.close()

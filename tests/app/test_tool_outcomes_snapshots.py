"""Snapshots of the tool outcomes (issue 22) at 80x24 and 160x45: a failed command's row
(``✗ exit 1``) next to a running one streaming its last lines under its row, and a
sub-agent's own transcript opened from the dispatch tree.

Real engine events emitted through the runtime, real store rows for the child; pane clocks
are frozen so elapsed times are deterministic.
"""

from __future__ import annotations

from typing import Any

import pytest

from smith_tui.app import main_screen
from smith_tui.app.screens.child_transcript import ChildTranscriptScreen
from smith_tui.engine import events as ev
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    screen_text,
    wait_for_still_screen,
    wait_until,
)

OFFLINE_URL = "http://127.0.0.1:9/v1"
NOW = 1000.0
SIZES = [(80, 24), (160, 45)]


def _frozen_panes(original: Any) -> Any:
    def make(refresh_s: float) -> dict[str, Any]:
        panes = original(refresh_s)
        for pane in panes.values():
            if hasattr(pane, "clock"):
                pane.clock = lambda: NOW
        return panes

    return make


def _runtime(tmp_path: Any, monkeypatch: Any) -> Any:
    isolate_environment(monkeypatch, tmp_path)
    monkeypatch.setattr(main_screen, "make_panes", _frozen_panes(main_screen.make_panes))
    runtime = app_runtime(tmp_path, api_url=OFFLINE_URL, ephemeral={"default_model": "qwen-coder"})
    runtime.conversations.new("Failing tests")
    return runtime


def _tool_events() -> list[ev.Event]:
    turn = "turn-1"
    return [
        ev.TurnStarted(turn_id=turn, conversation_id="c", prompt="Run the tests"),
        ev.ToolCallStarted(
            turn_id=turn, call_id="a", name="bash", arguments='{"command": "pytest -q"}'
        ),
        ev.ToolCallFinished(
            turn_id=turn,
            call_id="a",
            name="bash",
            ok=True,
            duration_s=2.4,
            summary="exit code: 1",
            content="exit code: 1\nstdout:\n1 failed, 11 passed",
            metadata={"exit_code": 1, "outcome": "completed"},
        ),
        ev.ToolCallStarted(
            turn_id=turn,
            call_id="b",
            name="bash",
            arguments='{"command": "pytest -q tests/test_parse.py"}',
        ),
        ev.ToolOutputDelta(
            turn_id=turn,
            call_id="b",
            text="collected 12 items\ntests/test_parse.py ....\ntests/test_parse.py::test_race ",
        ),
        ev.StatusChanged(status="tool", detail="bash"),
    ]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_failed_and_running_tool_rows(snap_compare, tmp_path, monkeypatch, size) -> None:
    runtime = _runtime(tmp_path, monkeypatch)
    app = make_app(runtime)

    async def run(pilot) -> None:
        await wait_until(pilot, lambda: app.main_screen.panes_ready, what="the panes")
        for event in _tool_events():
            runtime.emit(event)
        await wait_until(pilot, lambda: "test_race" in screen_text(app), what="the live tail")
        await wait_until(pilot, lambda: "✗ exit 1" in screen_text(app), what="the failed row")
        await wait_for_still_screen(pilot)

    try:
        assert snap_compare(app, terminal_size=size, run_before=run)
    finally:
        runtime.store.close()


def _child_conversation(runtime: Any) -> str:
    store = runtime.store
    child = store.conversations.create(
        runtime.project_id,
        "Niobe: fix the race",
        parent_id=runtime.conversations.conversation_id,
        metadata={"job_id": "job-a", "role": "worker"},
    )
    store.conversations.append_messages(
        child,
        [
            {"role": "user", "content": "# Task\nfix the race in parse()"},
            {
                "role": "assistant",
                "content": "The temp file is shared; I run the test first.",
                "metadata": {"role": "worker"},
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "bash",
                            "arguments": '{"command": "pytest -q tests/test_parse.py"}',
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "name": "bash",
                "content": "exit code: 1\nstdout:\n1 failed",
                "metadata": {"ok": True, "duration_s": 1.2, "exit_code": 1},
            },
            {
                "role": "assistant",
                "content": "It fails as reported.",
                "metadata": {"role": "worker"},
            },
        ],
    )
    return child


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_child_transcript_screen(snap_compare, tmp_path, monkeypatch, size) -> None:
    runtime = _runtime(tmp_path, monkeypatch)
    runtime.conversations.ensure()
    child = _child_conversation(runtime)
    app = make_app(runtime)

    async def run(pilot) -> None:
        await wait_until(pilot, lambda: app.main_screen.panes_ready, what="the panes")
        for event in [
            ev.TurnStarted(
                turn_id="turn-1", conversation_id="c", prompt="Fix it", role="orchestrator"
            ),
            ev.DispatchStarted(
                turn_id="turn-1",
                target_role="worker",
                task="fix the race in parse()",
                role="orchestrator",
                job_id="job-a",
            ),
            ev.TurnStarted(
                turn_id="job-a-t1",
                conversation_id=child,
                prompt="# Task",
                role="worker",
                job_id="job-a",
            ),
        ]:
            runtime.emit(event)
        tree = app.main_screen.query_one("#dispatch")
        await wait_until(pilot, lambda: "job-a" in tree.jobs, what="the job")
        tree.select_job("job-a")
        await wait_until(pilot, lambda: isinstance(app.screen, ChildTranscriptScreen))
        await wait_until(pilot, lambda: "It fails as reported." in screen_text(app))
        await wait_for_still_screen(pilot)

    try:
        assert snap_compare(app, terminal_size=size, run_before=run)
    finally:
        runtime.store.close()

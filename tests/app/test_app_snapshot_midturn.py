"""Snapshots of the main screen in the middle of a turn, and of the first-run screen.

The turn is driven by real engine events emitted through the runtime (the same objects a
live turn emits); pane clocks are frozen so elapsed times are deterministic.
"""

from __future__ import annotations

from typing import Any

from smith_tui.app import main_screen
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


def _frozen_panes(original: Any) -> Any:
    def make(refresh_s: float) -> dict[str, Any]:
        panes = original(refresh_s)
        for pane in panes.values():
            if hasattr(pane, "clock"):
                pane.clock = lambda: NOW
        return panes

    return make


def _mid_turn_events() -> list[ev.Event]:
    turn = "turn-1"
    usage = {"input_tokens": 1200, "output_tokens": 300, "total_tokens": 1500}
    return [
        ev.TurnStarted(
            turn_id=turn,
            conversation_id="c",
            prompt="Fix the flaky parser test",
            role="orchestrator",
        ),
        ev.LLMRequestStarted(turn_id=turn, model="qwen-coder", role="orchestrator"),
        ev.ToolCallStarted(
            turn_id=turn,
            call_id="d1",
            name="dispatch",
            arguments='{"target_role": "explorer", "task": "find the parser tests"}',
            role="orchestrator",
        ),
        ev.DispatchStarted(
            turn_id=turn,
            target_role="explorer",
            task="find the parser tests",
            role="orchestrator",
            job_id="job-a",
        ),
        ev.DispatchStarted(
            turn_id=turn,
            target_role="worker",
            task="fix the race in parse()",
            role="orchestrator",
            job_id="job-b",
        ),
        ev.UsageUpdated(
            turn_id="job-a-t1",
            model="qwen-coder",
            delta=usage,
            totals={"explorer": usage},
            context_tokens=1500,
            context_window=32000,
            role="explorer",
            job_id="job-a",
        ),
        ev.DispatchFinished(
            target_role="explorer",
            status="ok",
            summary="tests/test_parse.py races on a shared temp file",
            result={"status": "ok", "summary": "tests/test_parse.py races on a shared temp file"},
            role="orchestrator",
            job_id="job-a",
        ),
        ev.ToolCallStarted(
            turn_id="job-b-t1",
            call_id="b1",
            name="bash",
            arguments='{"command": "pytest tests/test_parse.py -x"}',
            role="worker",
            job_id="job-b",
        ),
        ev.ToolOutputDelta(
            turn_id="job-b-t1",
            call_id="b1",
            text="collected 12 items\n",
            role="worker",
            job_id="job-b",
        ),
        ev.UsageUpdated(
            turn_id=turn,
            model="qwen-coder",
            delta=usage,
            totals={"orchestrator": usage, "explorer": usage},
            context_tokens=9000,
            context_window=32000,
            role="orchestrator",
        ),
        ev.StatusChanged(status="streaming", role="orchestrator"),
        ev.TextDelta(turn_id=turn, text="The explorer found the race. ", role="orchestrator"),
        ev.TextDelta(
            turn_id=turn,
            text="Niobe is **fixing** it now:\n\n- shared temp file\n",
            role="orchestrator",
        ),
    ]


def test_main_screen_mid_turn(snap_compare, tmp_path, monkeypatch) -> None:
    isolate_environment(monkeypatch, tmp_path)
    monkeypatch.setattr(main_screen, "make_panes", _frozen_panes(main_screen.make_panes))
    runtime = app_runtime(tmp_path, api_url=OFFLINE_URL, ephemeral={"default_model": "qwen-coder"})
    runtime.new_conversation("Flaky parser")
    app = make_app(runtime)

    async def run_turn(pilot) -> None:
        await wait_until(pilot, lambda: app.main_screen.panes_ready, what="the panes")
        for event in _mid_turn_events():
            runtime.emit(event)
        await wait_until(pilot, lambda: "Niobe is" in screen_text(app), what="the streamed text")
        await wait_until(
            pilot, lambda: "collected 12 items" in screen_text(app), what="the tool tail"
        )
        await wait_for_still_screen(pilot)

    try:
        assert snap_compare(app, terminal_size=(130, 38), run_before=run_turn)
    finally:
        runtime.store.close()


def test_first_run_screen(snap_compare, tmp_path, monkeypatch) -> None:
    isolate_environment(monkeypatch, tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("smith_tui.llm.server_probe.LOCAL_SERVERS", ())  # ask no real port
    runtime = app_runtime(tmp_path)  # no server configured
    # Keep the snapshot independent of the temporary folder's name.
    object.__setattr__(runtime.config, "user_config_path", "~/.config/smith/config.json")
    app = make_app(runtime)

    async def shown(pilot) -> None:
        await wait_until(
            pilot, lambda: "No server answered" in screen_text(app), what="the first-run text"
        )
        await wait_for_still_screen(pilot)

    try:
        assert snap_compare(app, terminal_size=(100, 30), run_before=shown)
    finally:
        runtime.store.close()

"""A deterministic snapshot of the main screen (pytest-textual-snapshot)."""

from __future__ import annotations

from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    screen_text,
    wait_for_still_screen,
    wait_until,
)

OFFLINE_URL = "http://127.0.0.1:9/v1"


def _seeded_runtime(tmp_path, monkeypatch):
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, api_url=OFFLINE_URL, ephemeral={"default_model": "qwen-coder"})
    store = runtime.store
    conv = store.conversations.create(runtime.project_id, "The spoon")
    call = {
        "id": "call_find",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "find . -name spoon"}'},
    }
    store.conversations.append_messages(
        conv,
        [
            {"role": "user", "content": "Where is the spoon?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_find", "name": "bash", "content": ""},
            {"role": "assistant", "content": "There is **no spoon**. Only the *code*."},
        ],
    )
    runtime.conversations.load(conv)
    runtime.conversations.todo = [
        {"content": "Look for the spoon", "status": "done"},
        {"content": "Bend it", "status": "in_progress"},
        {"content": "Tell Neo", "status": "pending"},
    ]
    return runtime


def test_main_screen_snapshot(snap_compare, tmp_path, monkeypatch) -> None:
    runtime = _seeded_runtime(tmp_path, monkeypatch)
    app = make_app(runtime)

    async def settle(pilot) -> None:
        await wait_until(pilot, lambda: app.main_screen.panes_ready, what="the panes")
        await wait_until(pilot, lambda: "Only the code" in screen_text(app), what="the transcript")
        await pilot.press(*"/mo")
        await wait_until(pilot, lambda: "/models" in screen_text(app), what="the completion menu")
        await wait_for_still_screen(pilot)

    try:
        assert snap_compare(app, terminal_size=(120, 36), run_before=settle)
    finally:
        runtime.store.close()

"""The status line shows the permission mode and the sandbox in the first frame the runtime
is in, together, and before a reopened conversation has loaded (issue 22). Real runtime,
real bwrap probe, Pilot."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from smith_tui.app.app import SmithApp
from smith_tui.widgets.status_line import StatusLine
from tests.app.app_harness import SIZE, app_runtime, isolate_environment, make_app, wait_until

SANDBOX_LABELS = ("sandboxed", "unsandboxed", "sandbox unavailable", "sandbox off")


def _shown(app: Any) -> str:
    return app.main_screen.query_one(StatusLine).render().plain


async def test_a_runtime_given_to_the_app_is_in_its_first_frame_with_mode_and_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, config={"permissions": {"mode": "auto-edit"}})
    try:
        app = make_app(runtime)
        async with app.run_test(size=SIZE):
            # No pause, no wait: what the first paint draws.
            status = app.main_screen.query_one(StatusLine)
            assert status.mode == "auto-edit"
            assert status.sandbox in SANDBOX_LABELS
            text = _shown(app)
            assert "mode: auto-edit" in text and status.sandbox in text
    finally:
        runtime.store.close()


async def test_mode_and_sandbox_do_not_wait_for_the_conversation_to_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(
        tmp_path, config={"sandbox": {"mode": "off"}, "permissions": {"mode": "read-only"}}
    )
    loading = threading.Event()
    loaded = threading.Event()

    def pick(opened: Any) -> None:  # a long conversation loading (--continue)
        loading.set()
        loaded.wait(10)

    try:
        app = SmithApp(opener=lambda: runtime, pick=pick, animations=False)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, loading.is_set, what="the conversation loading")
            await wait_until(pilot, lambda: "sandbox off" in _shown(app), "the sandbox")
            text = _shown(app)
            assert app.runtime is None  # still loading
            assert "mode: read-only" in text and "sandbox off" in text
            loaded.set()
            await wait_until(pilot, lambda: app.runtime is runtime, what="the runtime")
            assert "mode: read-only" in _shown(app)
    finally:
        loaded.set()
        runtime.store.close()

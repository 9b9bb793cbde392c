"""The status line shows the permission mode and the sandbox in the first frame the runtime
is in, together, and before a reopened conversation has loaded (issue 22). Real runtime,
real bwrap probe, Pilot; and the installed binary in tmux, whose first frame comes before
the runtime is open."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from smith_tui.app.app import SmithApp
from smith_tui.engine.runtime_config import ConfigOverrides
from smith_tui.store import Store
from smith_tui.widgets.status_line import StatusLine
from tests.app.app_harness import SIZE, app_runtime, isolate_environment, make_app, wait_until
from tests.support.tmux import SMITH, TmuxPane, tmux_env

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


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_real_binary_shows_mode_and_sandbox_in_its_first_frame(
    tmp_path: Path, llm_server: Any
) -> None:
    """The installed ``smith`` in tmux: the first captured screen that shows the prompt has
    the mode already (read before the runtime is open, app/early_status.py), from the config
    file, from a persisted ``/config set`` and from ``--permission-mode``, and the sandbox
    (bwrap probed in the same thread, or ``sandbox off``); once the runtime is open the line
    says the same."""
    cases = [
        # (config file, persisted /config set, flags, the mode shown, the sandbox shown)
        ({"permissions": {"mode": "auto-edit"}}, {}, [], "auto-edit", None),
        (
            {"permissions": {"mode": "yolo"}},
            {"permissions.mode": "plan", "sandbox.mode": "off"},
            [],
            "plan",
            "sandbox off",
        ),
        (
            {"permissions": {"mode": "yolo"}},
            {},
            ["--permission-mode", "read-only"],
            "read-only",
            None,
        ),
    ]
    for number, (config, persisted, flags, mode, sandbox) in enumerate(cases):
        folder = tmp_path / f"case{number}"
        (folder / "project").mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
        db = folder / "smith.db"
        if persisted:
            store = Store.open(db)
            try:
                overrides = ConfigOverrides(store.config, config_path=str(folder / "config.json"))
                for path, value in persisted.items():
                    overrides.set(path, value)  # what /config set does
            finally:
                store.close()
        config_file = str(folder / "config.json")
        words = [str(SMITH), "--api-url", llm_server.base_url, "--db", str(db)]
        command = " ".join([*words, "--config", config_file, *flags])
        pane = TmuxPane(command, folder / "project", tmux_env(folder), size=(160, 45))
        try:
            first = _first_screen_with_the_prompt(pane)
            line = _status_row(first)
            assert f"mode: {mode}" in line, first
            shown = next((label for label in _SANDBOX_WORDS if label in line), None)
            assert shown is not None, first  # the sandbox from the first frame too
            if sandbox is not None:
                assert shown == sandbox, first
            # The runtime's validated values agree (they replace the early ones).
            screen = pane._wait(
                lambda text: any(label in _status_row(text) for label in _SANDBOX_WORDS),
                "the runtime showed no sandbox",
                20,
            )
            settled = _status_row(screen)
            assert f"mode: {mode}" in settled, settled
            assert shown in settled, (first, settled)  # the early word was the right one
        finally:
            pane.kill()


# Longest first: "sandboxed" is in "unsandboxed".
_SANDBOX_WORDS = sorted(SANDBOX_LABELS, key=len, reverse=True)


def _first_screen_with_the_prompt(pane: TmuxPane, within: float = 20.0) -> str:
    """The first screen captured that shows the prompt and the footer, read as fast as
    tmux answers (the runtime's own values arrive a few hundred milliseconds later)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        screen = pane.text()
        if "Ask Smith" in screen and "Quit" in screen:
            return screen
    raise AssertionError(f"the prompt did not appear; the screen shows:\n{pane.text()}")


def _status_row(screen: str) -> str:
    return next((row for row in screen.splitlines() if "│  Smith" in row), "")

"""The app shows whether bash commands run sandboxed, and the one-time notice when they do not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from smith_tui.widgets.status_line import StatusLine
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    running,
    screen_text,
    wait_for_text,
)


async def test_status_line_and_notice_without_bwrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, api_url=llm_server.base_url)
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    monkeypatch.setenv("PATH", str(bin_dir))
    try:
        app = make_app(runtime)
        async with running(app) as pilot:
            runtime.start_session()
            text = await wait_for_text(pilot, "run unsandboxed")
            status_row = next(
                line for line in text.splitlines() if "unsandboxed" in line and "│" in line
            )
            assert "Smith" in status_row
            assert app.screen.query_one(StatusLine).sandbox == "unsandboxed"
            runtime.set_config("sandbox.mode", "off")
            await wait_for_text(pilot, "sandbox off")
            await pilot.pause(0.1)
            assert screen_text(app).count("run unsandboxed") == 1
    finally:
        runtime.store.close()

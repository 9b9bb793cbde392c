"""Snapshots of the permission question (fixed requests; no tmp paths, ids or times shown)."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from smith_tui.app.screens.permission_screen import PermissionScreen
from smith_tui.engine.permission_gate import PermissionReply, PermissionRequest
from tests.app.app_harness import wait_for_still_screen
from tests.support.screen_host import ScreenHost

SNAP_SIZE = (110, 32)

BASH = PermissionRequest(
    tool="bash",
    role="direct",
    job_id=None,
    subject="git status --short && pytest -q tests/unit",
    arguments={"command": "git status --short && pytest -q tests/unit"},
    preview="git status --short && pytest -q tests/unit",
    reason="ask mode asks before bash",
    grant="bash(git status*)",
)
EDIT = PermissionRequest(
    tool="edit",
    role="worker",
    job_id="job-1",
    subject="src/app.py",
    arguments={"path": "src/app.py"},
    preview=(
        "--- src/app.py\n+++ src/app.py\n@@ -1,3 +1,3 @@\n def main():\n"
        "-    return 1\n+    return 2\n \n"
    ),
    reason="ask mode asks before edit",
    grant="edit(src/app.py)",
)


async def _still(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await wait_for_still_screen(pilot)


def test_permission_question_for_a_command(snap_compare) -> None:
    app = ScreenHost(lambda: PermissionScreen(BASH))
    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=_still)


def test_permission_question_for_a_workers_edit_with_a_reason(snap_compare) -> None:
    async def deny_with_reason(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await pilot.press("n", *"keep 1")
        await _still(pilot)

    app = ScreenHost(lambda: PermissionScreen(EDIT))
    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=deny_with_reason)


async def test_keys_answer_the_question() -> None:
    for keys, expected in (
        (["y"], PermissionReply("once")),
        (["a"], PermissionReply("session")),
        (["escape"], PermissionReply("deny")),
        (["n", "y", "a", "enter"], PermissionReply("deny", "ya")),
    ):
        app = ScreenHost(lambda: PermissionScreen(BASH))
        async with app.run_test(size=SNAP_SIZE) as pilot:
            await pilot.pause()
            await pilot.press(*keys)
            await pilot.pause()
        assert app.results == [expected], keys

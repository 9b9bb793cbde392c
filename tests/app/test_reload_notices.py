"""After a restart the transcript has the notices it showed live: an automatic compaction's
line where it came, and the output of the slash commands typed before the first prompt,
between turns and after the last (issue 22, "a reloaded transcript is the transcript you
saw"). The same conversation is captured live and after a restart; the entries must match
but for the resume line. Real app, runtime, store and the scripted server, Pilot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine.prompt import RequestBudget, build_system_prompt
from smith_tui.engine.roles import resolve_role
from smith_tui.engine.window import WindowSettings
from smith_tui.widgets.transcript import Transcript
from smith_tui.widgets.transcript.entries import (
    AssistantEntry,
    NoticeEntry,
    ToolEntry,
    UserEntry,
)
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    running,
    submit,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply

NO_RESERVE = {"context_management": {"output_reserve_pct": 0}}


def _overhead(runtime: Any) -> int:
    """The fixed part of a direct-role request in tokens (prompt, tools, snapshot)."""
    return RequestBudget.of(
        build_system_prompt(resolve_role("direct"), runtime.compute_scope()),
        runtime.services.tool.llm_specs("direct"),
        10**6,
        None,
        WindowSettings(output_reserve_pct=0),
    ).fixed


def _shown(app: Any) -> list[tuple[str, str]]:
    """The main transcript's entries as (kind, words), the resume line left out."""
    found: list[tuple[str, str]] = []
    for entry in app.main_screen.query_one(Transcript).entries:
        if isinstance(entry, UserEntry):
            found.append(("user", entry.text[:40]))
        elif isinstance(entry, AssistantEntry):
            found.append(("assistant", entry.text))
        elif isinstance(entry, ToolEntry):
            found.append(("tool", entry.name))
        elif isinstance(entry, NoticeEntry) and not entry.text.startswith("Resumed "):
            found.append((f"notice {entry.style}", entry.text))
    return found


async def test_compaction_and_command_output_are_rebuilt_after_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, llm_server.base_url, config=NO_RESERVE)
    unit = _overhead(runtime) * 4  # characters weighing as much as the request overhead
    llm_server.catalog = {
        "object": "list",
        "data": [{"id": "scripted-model", "object": "model", "context_length": unit}],
    }
    llm_server.enqueue(
        text_reply("ok1"),
        text_reply("ok2"),
        text_reply("SUMMARY: A and B were long prompts."),
        text_reply("ok3"),
    )
    try:
        app = make_app(runtime)
        async with running(app, size=(120, 36)) as pilot:
            await submit(pilot, "/mode yolo")  # before the first prompt
            await wait_for_text(pilot, "permission mode: yolo")
            for tag in "AB":
                await submit(pilot, f"PROMPT-{tag} " + "w" * unit)
                await wait_until(pilot, lambda: not runtime.busy, f"turn {tag}")
            await submit(pilot, "/role direct")  # between turns
            await wait_for_text(pilot, "active role: direct")
            await submit(pilot, "PROMPT-C " + "w" * unit)
            await wait_until(pilot, lambda: not runtime.busy, "turn C")
            await wait_for_text(pilot, "Context compacted")
            await submit(pilot, "/frobnicate")  # after the last turn, an error
            await wait_for_text(pilot, "unknown command /frobnicate")
            await submit(pilot, "/help")  # opens a screen: not a transcript line
            await wait_until(pilot, lambda: app.screen is not app.main_screen, "the help")
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "help closed")
            live = _shown(app)
    finally:
        await runtime.aclose()
        runtime.store.close()

    kinds = [kind for kind, _ in live]
    assert kinds.count("user") == 3 and "notice error" in kinds
    compacted = [text for _, text in live if text.startswith("Context compacted")]
    assert len(compacted) == 1 and "context window filled up" in compacted[0]
    assert not any("/help" in text or "Commands:" in text for _, text in live)

    again = app_runtime(tmp_path, llm_server.base_url, config=NO_RESERVE)  # auto-resume
    try:
        app = make_app(again)
        async with running(app, size=(120, 36)) as pilot:
            await wait_for_text(pilot, "/new starts fresh")
            await wait_until(pilot, lambda: _shown(app) == live, "the same entries", within=5)
    finally:
        await again.aclose()
        again.store.close()

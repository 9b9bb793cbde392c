"""A command that moves to another conversation (/fork, /load, /new) shows its line once:
its output is not kept in the conversation it moved to, so the reload does not add it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.app_harness import isolated_runtime, make_app, running, submit, wait_for_text
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.pilot import screen_text, wait_until


async def test_switching_commands_show_their_line_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("answer one"))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app, size=(120, 40)) as pilot:
            await submit(pilot, "question one")
            await wait_for_text(pilot, "answer one")
            await wait_until(pilot, lambda: not runtime.busy, "idle")
            source = runtime.conversations.conversation_id
            for command, said in (("/fork", "now in the fork"), (f"/load {source}", "loaded")):
                await submit(pilot, command)
                await wait_for_text(pilot, said)
                await wait_until(pilot, lambda: "answer one" in screen_text(app), "the reload")
                lines = [line for line in screen_text(app).splitlines() if said in line]
                assert len(lines) == 1, lines
            notes = runtime.store.notes.list(source, prefix="command_output-")
            assert all("loaded conversation" not in n.content for n in notes)

"""What the reopen and F4 work of issue 26 relies on (real runtime, scripted server, Pilot).

A stored conversation goes into panes that have been laid out (entries mounted into a
transcript without a size were laid out twice, the frame between blank); the footer keeps
its keys when they would be the same; F4 shows the next mode in the status line before the
runtime's event reaches it, the toast after.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets._footer import FooterKey

from smith_tui.app.footer import SmithFooter
from smith_tui.widgets.status_line import StatusLine
from smith_tui.widgets.transcript import Transcript
from tests.app.app_harness import app_runtime, isolate_environment, make_app, running, wait_for_text
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.pilot import wait_until


async def test_a_reopened_conversation_goes_into_laid_out_panes(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    first = app_runtime(tmp_path, llm_server.base_url)
    try:
        llm_server.enqueue(text_reply("The stored answer, END-OF-IT."))
        await first.run_turn("a question")
    finally:
        await first.aclose()
        first.store.close()
    widths: list[int] = []
    load = Transcript.load_messages

    def recording(self: Transcript, messages: list[dict[str, Any]]) -> Any:
        widths.append(self.size.width)
        return load(self, messages)

    monkeypatch.setattr(Transcript, "load_messages", recording)
    runtime = app_runtime(tmp_path, llm_server.base_url)  # plain `smith`: it resumes
    try:
        async with running(make_app(runtime), size=(160, 45)) as pilot:
            await wait_for_text(pilot, "END-OF-IT")
            assert widths and widths[0] > 0, widths  # the pane had its size at the load
    finally:
        await runtime.aclose()
        runtime.store.close()


async def test_the_footer_keeps_its_keys_when_they_would_be_the_same(runtime: Any) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        footer = app.main_screen.query_one(SmithFooter)
        await wait_for_text(pilot, "Quit")
        before = list(footer.query(FooterKey))
        await footer.recompose()
        assert list(footer.query(FooterKey)) == before  # the same widgets, not rebuilt
        # Control: keys that change (another key for Quit) are composed again.
        app.set_keymap({**app.keymap, "smith.quit": "f10"})
        await wait_until(
            pilot,
            lambda: any(key.key == "f10" for key in footer.query(FooterKey)),
            what="the footer showing the new key",
        )
        assert not set(footer.query(FooterKey)) & set(before)


async def test_f4_shows_the_next_mode_at_once_and_the_toast_after(runtime: Any) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        runtime.start_session()
        status = app.main_screen.query_one(StatusLine)
        mode = runtime.permission_mode
        await wait_until(pilot, lambda: status.mode == mode, what="the mode")
        app.action_cycle_mode()
        # Set in the key's own handler: no bridge frame, no toast yet.
        after = runtime.permission_mode
        assert after != mode and status.mode == after
        assert not len(app._notifications)  # (Textual's own queue; the toast comes later)
        await wait_for_text(pilot, f"Permission mode: {after}")
        await wait_for_text(pilot, f"mode: {after}")

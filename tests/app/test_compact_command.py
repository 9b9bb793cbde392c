"""``/compact`` in the app (issue 22): it summarises all but the newest turns whatever the
window size, and its before → after is the context the usage pane shows, then the smaller
one; one message reads "1 older message". Real turns against the scripted server, Pilot."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine.compaction import SUMMARY_PREFIX
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import text_reply
from widgets.usage_pane import UsagePane

BIG_WINDOW = {
    "object": "list",
    "data": [{"id": "scripted-model", "object": "model", "context_length": 128_000}],
}
COMPACTED = re.compile(r"compacted: (.+?) summarised, the newest (\d+) kept as they are; "
                       r"context about ([\d,]+) → ([\d,]+) tokens")  # fmt: skip


async def _turn(pilot: Any, runtime: Any, text: str) -> None:
    await submit(pilot, text)
    await wait_until(pilot, lambda: not runtime.busy, what=f"the turn {text[:10]!r} to end")


def _compacted(app: Any) -> re.Match[str]:
    # The output row may wrap: read it without line breaks and borders.
    flat = " ".join(screen_text(app).replace("│", " ").split())
    found = COMPACTED.search(flat)
    assert found, flat
    return found


async def test_compact_summarises_all_but_the_newest_turns_on_a_big_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: Any
) -> None:
    llm_server.catalog = BIG_WINDOW
    # Four turns of about 7,500 tokens each: less than the 30 % of a 128k window an
    # automatic compaction keeps.
    replies = [text_reply(f"answer {n} " + "a" * 400) for n in range(1, 4)]
    last = text_reply("answer 4", usage={"prompt_tokens": 36_000, "completion_tokens": 50,
                                          "total_tokens": 36_050})  # fmt: skip
    llm_server.enqueue(*replies, last, text_reply("SUMMARY of turns one and two"))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app, size=(160, 45)) as pilot:
            for n in range(1, 5):
                await _turn(pilot, runtime, f"prompt {n} " + "w" * 30_000)
            pane = app.main_screen.query_one(UsagePane)
            await wait_until(pilot, lambda: pane.context_tokens == 36_050, what="the gauge")
            await submit(pilot, "/compact")
            await wait_for_text(pilot, "compacted:")
            found = _compacted(app)
        summarised, kept, before, after = found.groups()
        assert (summarised, kept) == ("4 older messages", "4")  # turns 1–2 gone, 3–4 kept
        assert int(before.replace(",", "")) == pane.context_tokens  # what the pane showed
        assert int(after.replace(",", "")) < 0.7 * pane.context_tokens
        summary_request = llm_server.chat_requests()[-1]
        sent = "\n".join(str(m.get("content")) for m in summary_request["messages"])
        assert "prompt 1" in sent and "prompt 2" in sent and "prompt 3" not in sent
        # The next request sees the summary and the newest two turns only.
        llm_server.enqueue(text_reply("after"))
        async with running(make_app(runtime)) as pilot:
            await _turn(pilot, runtime, "prompt 5")
        sent = "\n".join(str(m.get("content")) for m in llm_server.chat_requests()[-1]["messages"])
        assert SUMMARY_PREFIX in sent and "prompt 3" in sent and "prompt 1" not in sent


async def test_one_message_summarised_reads_singular(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: Any
) -> None:
    llm_server.catalog = BIG_WINDOW
    llm_server.enqueue(text_reply("the only answer"), text_reply("SUMMARY"))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app, size=(80, 24)) as pilot:
            await _turn(pilot, runtime, "just one prompt")
            await submit(pilot, "/compact")
            await wait_for_text(pilot, "compacted:")
            assert _compacted(app).group(1) == "1 older message"

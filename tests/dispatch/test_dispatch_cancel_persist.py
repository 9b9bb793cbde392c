"""Cancelling a parent cascades into its children; results are auto-persisted and recallable."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import time
from pathlib import Path

from smith_tui.engine import events as ev
from tests.dispatch.support import (
    assert_transcript_valid,
    child_conversation,
    child_requests,
    dispatch,
    parent_bodies,
    report,
    results,
    stored,
    tool_messages,
)
from tests.support.llm_server import ScriptedLLMServer, stall, text_reply, tool_call
from tests.support.runtime import open_runtime

FINDINGS = {
    "status": "ok",
    "summary": "The parser lives in src/parse.py and has no tests. " * 3,
    "findings": ["parse() is defined in src/parse.py", "tests/ has no parser tests"],
    "evidence": ["src/parse.py:12", "ls tests/"],
}
ELIDE = {"context_management": {"tool_output_keep_rounds": 0, "tool_output_elide_over_chars": 40}}


async def test_cancelling_the_parent_cancels_every_child(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    calls = [dispatch("worker", "slow edit"), dispatch("explorer", "slow search")]
    llm_server.enqueue(
        text_reply(tool_calls=calls),
        stall(after_events=1, hold_s=30),
        stall(after_events=1, hold_s=30),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    turn = asyncio.create_task(runtime.run_turn("go", role="orchestrator"))
    await llm_server.wait_for_chats_async(3, timeout=10)  # the parent and both children
    assert len(child_requests(llm_server)) == 2
    started = time.monotonic()
    assert runtime.cancel_turn("user pressed ctrl+c")
    result = await asyncio.wait_for(turn, timeout=5)
    assert time.monotonic() - started < 2.0
    assert result.stop_reason == "cancelled"

    got = results(runtime)
    assert [r["role"] for r in got] == ["worker", "explorer"]
    for res in got:
        assert res["status"] == "blocked" and res["cancelled"] is True
        assert "cancelled before it reported" in res["summary"]
        turn_row = runtime.store.turns.get(f"{res['job_id']}-t1")
        assert turn_row is not None and turn_row.stop_reason == "cancelled"
        assert_transcript_valid(stored(runtime, child_conversation(rec, res["job_id"])))
    assert all(m.metadata.get("cancelled") for m in tool_messages(runtime))
    assert_transcript_valid(stored(runtime))
    children_done = [e for e in rec.of(ev.TurnFinished) if e.job_id]
    assert sorted(e.stop_reason for e in children_done) == ["cancelled", "cancelled"]
    assert rec.of(ev.TurnFinished)[-1].stop_reason == "cancelled"
    assert len(llm_server.chat_requests()) == 3  # nobody called the model after the cancel
    await runtime.aclose()


async def test_results_are_recallable_after_elision(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("explorer", "map the parser")]),
        text_reply(tool_calls=[report(**FINDINGS)]),
        text_reply("The explorer mapped the parser."),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, config=ELIDE)
    first = await runtime.run_turn("where is the parser?", role="orchestrator")
    assert first.stop_reason == "completed"
    (res,) = results(runtime)
    key = f"dispatch/{res['job_id']}"
    (message,) = tool_messages(runtime)
    assert message.recall_key == key
    full = message.content
    assert json.loads(full)["findings"] == FINDINGS["findings"]

    # The next request already carries the placeholder naming the recall key.
    after = [m for m in parent_bodies(llm_server)[-1]["messages"] if m["role"] == "tool"]
    assert after[0]["content"] == (
        f'[elided {len(full)} chars of tool output; retrieve with recall(key="{key}")]'
    )
    assert "recall_key" not in after[0]

    # A further turn: the model follows the placeholder and gets the full report back.
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("recall", {"key": key})]),
        text_reply("Recalled it."),
    )
    second = await runtime.run_turn("remind me what the explorer found", role="orchestrator")
    assert second.stop_reason == "completed"
    turn2 = parent_bodies(llm_server)[-2]["messages"]
    assert any(m["role"] == "tool" and f'recall(key="{key}")' in m["content"] for m in turn2)
    recalled = tool_messages(runtime)[-1]
    assert recalled.name == "recall" and recalled.metadata["ok"]
    assert recalled.content == full
    assert json.loads(recalled.content)["evidence"] == FINDINGS["evidence"]
    await runtime.aclose()


async def test_a_failed_scratchpad_write_leaves_no_recall_key(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("explorer", "map the parser")]),
        text_reply(tool_calls=[report(**FINDINGS)]),
        text_reply("The explorer mapped the parser."),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url, config=ELIDE)
    # A second client of the same database file makes every dispatch write fail.
    with sqlite3.connect(tmp_path / "smith.db") as other:
        other.execute(
            "CREATE TRIGGER no_dispatch_notes BEFORE INSERT ON notes "
            "WHEN NEW.note_id LIKE 'scratchpad:dispatch/%' "
            "BEGIN SELECT RAISE(ABORT, 'disk quota exceeded'); END"
        )
    result = await runtime.run_turn("where is the parser?", role="orchestrator")
    assert result.stop_reason == "completed"

    (res,) = results(runtime)
    assert res["status"] == "ok"  # the dispatch itself still succeeded
    (message,) = tool_messages(runtime)
    assert message.recall_key is None
    note = runtime.store.notes.get(
        runtime.conversations.conversation_id, f"scratchpad:dispatch/{res['job_id']}"
    )
    assert note is None
    finished = next(e for e in rec.of(ev.ToolCallFinished) if e.name == "dispatch")
    assert "recall_key" not in finished.metadata
    assert "disk quota exceeded" in finished.metadata["persist_error"]
    after = [m for m in parent_bodies(llm_server)[-1]["messages"] if m["role"] == "tool"]
    assert re.fullmatch(r"\[elided \d+ chars of tool output\]", after[0]["content"])
    await runtime.aclose()


async def test_cancelling_one_job_leaves_the_parent_running(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("explorer", "slow search")]),
        stall(after_events=1, hold_s=30),
        text_reply("The explorer was stopped; carrying on."),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    turn = asyncio.create_task(runtime.run_turn("go", role="orchestrator"))
    await llm_server.wait_for_chats_async(2, timeout=10)
    (started,) = rec.of(ev.DispatchStarted)
    assert runtime.cancel_job(started.job_id)
    assert not runtime.cancel_job("job-unknown")
    result = await asyncio.wait_for(turn, timeout=15)
    assert result.stop_reason == "completed"
    assert result.text == "The explorer was stopped; carrying on."
    (res,) = results(runtime)
    assert res["status"] == "blocked" and res["cancelled"] is True
    assert runtime.jobs == {}
    await runtime.aclose()

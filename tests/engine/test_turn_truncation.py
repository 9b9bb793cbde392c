"""A model stream cut short (clean end, no finish_reason, no [DONE]) is never a finished answer.

Real runtime, real SQLite file, the scripted server over HTTP. Before anything was shown the
turn retries; after output it follows ``stream_retry_after_output`` like a dropped connection.
"""

from __future__ import annotations

from pathlib import Path

from smith_tui.engine import events as ev
from tests.support.llm_server import (
    ScriptedLLMServer,
    first_end_frame,
    text_reply,
    tool_call,
    truncate_after,
)
from tests.support.runtime import open_runtime


async def test_truncated_before_output_is_retried(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    # frame 0 is the role-only delta: the connection ends before any text
    llm_server.enqueue(truncate_after(1, text_reply("lost")), text_reply("complete answer"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "completed" and result.text == "complete answer"
    assert len(llm_server.chat_requests()) == 2
    (retry,) = rec.of(ev.RetryScheduled)
    assert retry.layer == "transport" and retry.reason.startswith(
        "the stream ended before the answer was complete"
    )
    assert not rec.of(ev.StreamReset)
    assert [e.content for e in rec.of(ev.AssistantMessage)] == ["complete answer"]
    await runtime.aclose()


async def test_truncated_after_output_is_an_error_not_a_finished_answer(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(truncate_after(4, text_reply("half an answer that stops", chunk_chars=3)))
    llm_server.enqueue(text_reply("not reached"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "error"
    assert (result.error.code, result.error.retryable) == ("stream_truncated", True)
    assert len(llm_server.chat_requests()) == 1  # output was shown: not retried by default
    assert "".join(e.text for e in rec.of(ev.TextDelta)) == "half an a"
    assert not rec.of(ev.AssistantMessage)  # never presented as the model's answer
    (finished,) = rec.of(ev.TurnFinished)
    assert finished.stop_reason == "error" and finished.error["code"] == "stream_truncated"
    assert rec.of(ev.StatusChanged)[-1].status == "error"
    last = runtime.conversations.messages[-1]
    assert last["content"] == "half an a"
    assert last["metadata"] == {"partial": True, "stop": "stream_truncated"}
    await runtime.aclose()


async def test_truncated_after_output_is_retried_when_enabled(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(truncate_after(4, text_reply("half an answer that stops", chunk_chars=3)))
    llm_server.enqueue(text_reply("complete answer"))
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"llm_config": {"stream_retry_after_output": True}}
    )
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "completed" and result.text == "complete answer"
    (reset,) = rec.of(ev.StreamReset)
    assert "stream_truncated" in reset.reason
    after = rec.events[rec.events.index(reset) :]
    assert "".join(e.text for e in after if isinstance(e, ev.TextDelta)) == "complete answer"
    assert [e.content for e in rec.of(ev.AssistantMessage)] == ["complete answer"]
    await runtime.aclose()


async def test_a_truncated_tool_call_is_never_run(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    # every argument arrived, only the finish chunk and [DONE] are missing: the call looks
    # whole, but the model never said it was done
    call = tool_call("bash", {"command": "touch made-by-a-cut-stream"}, id="call_cut")
    whole = text_reply(tool_calls=[call], chunk_chars=6)
    llm_server.enqueue(truncate_after(first_end_frame(whole), whole))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "error" and result.error.code == "stream_truncated"
    assert not rec.of(ev.ToolCallStarted) and not rec.of(ev.AssistantMessage)
    assert not (tmp_path / "repo" / "made-by-a-cut-stream").exists()
    assert all(not m.get("tool_calls") for m in runtime.conversations.messages)
    await runtime.aclose()

"""A stream that ends cleanly but early is a ``stream_truncated`` failure, never an answer.

"Complete" means the server said so: a ``[DONE]`` or a ``finish_reason`` on some
choice. Every recorded provider stream is complete as recorded and truncated when
cut just before its first end marker.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from smith_tui.llm import LLMClient, LLMError, StreamAssembler
from tests.llm.expected import EXPECTED
from tests.llm.helpers import Recorder, config, request
from tests.support.llm_script import (
    STREAMS_DIR,
    first_end_frame,
    raw_sse,
    replay_file,
    text_reply,
    tool_call,
    truncate_after,
)

COMPLETE_RECORDINGS = sorted(
    p.name
    for p in STREAMS_DIR.glob("*")
    if p.name.endswith((".sse", ".jsonl")) and EXPECTED[p.name].error is None
)


def _chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
    }


async def _truncated(server: Any, reply: Any) -> tuple[LLMError, Recorder]:
    server.enqueue(reply)
    rec = Recorder()
    async with LLMClient(config(server)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat_stream(request(), rec.handlers())
    err = info.value
    assert (err.kind, err.code, err.retryable, err.origin) == (
        "transport",
        "stream_truncated",
        True,
        "stream",
    )
    assert rec.errors == [err]
    assert rec.done == []
    return err, rec


@pytest.mark.parametrize("transfer", ["chunked", "close"])
async def test_text_cut_short_is_truncated_and_the_pieces_still_reach_the_handlers(
    llm_server: Any, transfer: str
) -> None:
    base = text_reply("The answer is forty-two, and here is why.", chunk_chars=5)
    err, rec = await _truncated(llm_server, truncate_after(5, base, transfer=transfer))
    assert "".join(rec.text) == "The answer is forty-"
    assert err.data == {"chunks": 5}
    assert "no finish_reason and no [DONE]" in err.message


async def test_empty_body_is_truncated(llm_server: Any) -> None:
    err, rec = await _truncated(llm_server, truncate_after(0))
    assert err.data == {"chunks": 0}
    assert rec.text == []


async def test_tool_call_cut_mid_arguments_is_truncated(llm_server: Any) -> None:
    call = tool_call("bash", {"command": "rm -rf build && make all"}, id="call_a")
    base = text_reply(tool_calls=[call], chunk_chars=6)
    _, rec = await _truncated(llm_server, truncate_after(4, base))
    streamed = "".join(d.arguments for d in rec.tools)
    assert streamed and streamed != call.arguments  # half the arguments were seen, no more


async def test_non_streaming_request_answered_by_a_cut_stream(llm_server: Any) -> None:
    llm_server.enqueue(truncate_after(3, text_reply("a whole sentence here", chunk_chars=4)))
    async with LLMClient(config(llm_server)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat(request())
    assert (info.value.code, info.value.retryable) == ("stream_truncated", True)


async def test_done_without_finish_reason_is_complete(llm_server: Any) -> None:
    # the Kimi K2 (OpenRouter/Novita) and Snowflake form
    llm_server.enqueue(raw_sse([_chunk({"content": "hi"})], include_done=True))
    async with LLMClient(config(llm_server)) as client:
        resp = await client.chat_stream(request())
    assert (resp.message.content, resp.finish_reason) == ("hi", None)


async def test_finish_reason_without_done_is_complete(llm_server: Any) -> None:
    # the JSON-lines recordings' form
    llm_server.enqueue(text_reply("fine", include_done=False))
    async with LLMClient(config(llm_server)) as client:
        resp = await client.chat_stream(request())
    assert (resp.message.content, resp.finish_reason) == ("fine", "stop")


async def test_finish_reason_on_another_choice_is_complete(llm_server: Any) -> None:
    frames = [_chunk({"content": "zero"}), _chunk({"content": "one"}, "stop", index=1)]
    llm_server.enqueue(raw_sse(frames))
    async with LLMClient(config(llm_server)) as client:
        resp = await client.chat_stream(request())
    assert resp.message.content == "zero"
    assert resp.finish_reason is None  # choice 0's own reason never came


def test_assembler_complete_flag() -> None:
    asm = StreamAssembler()
    asm.feed(_chunk({"content": "x"}))
    assert not asm.complete
    asm.feed(_chunk({}, "length"))
    assert asm.complete and not asm.done
    asm = StreamAssembler()
    asm.feed_event(None, "[DONE]")
    assert asm.complete and asm.done


@pytest.mark.parametrize("name", COMPLETE_RECORDINGS)
async def test_every_recording_cut_before_its_end_marker_is_truncated(
    llm_server: Any, name: str
) -> None:
    whole = replay_file(name)
    cut = first_end_frame(whole)
    assert cut is not None, "a complete recording has an end marker"
    err, _ = await _truncated(llm_server, truncate_after(cut, whole))
    kept = whole.copy(events=whole.events[:cut]).payloads()
    assert err.data == {"chunks": sum(1 for payload in kept if payload.lstrip().startswith("{"))}
    assert json.dumps(err.to_dict())  # JSON-friendly for events and persistence


def test_truncate_after_refuses_to_keep_an_end_marker() -> None:
    reply = text_reply("short")
    end = first_end_frame(reply)
    assert end is not None and reply.events[end].count(b'"finish_reason":"stop"') == 1
    truncate_after(end, reply)
    with pytest.raises(ValueError, match="cut earlier"):
        truncate_after(end + 1, reply)

"""Stall detection, cancel tokens and asyncio task cancellation."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.llm import LLMClient, LLMError
from tests.llm.helpers import Recorder, config, request
from tests.support.llm_script import KEEP_ALIVE, raw_sse, stall, text_reply


class PollOnly:
    """A cancel object with is_cancelled() only (no wait())."""

    def __init__(self) -> None:
        self.flag = False

    def is_cancelled(self) -> bool:
        return self.flag


async def test_stall_is_reported(llm_server: Any) -> None:
    llm_server.enqueue(stall(after_events=3, hold_s=20))
    rec = Recorder()
    started = time.monotonic()
    async with LLMClient(config(llm_server, stream_stall_timeout=0.5)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat_stream(request(), rec.handlers())
    elapsed = time.monotonic() - started
    err = info.value
    assert (err.kind, err.code, err.retryable) == ("transport", "stream_stalled", True)
    assert 0.5 <= elapsed < 2.0
    assert rec.errors == [err]
    assert rec.text  # some text came before the stall


async def test_stall_before_headers(llm_server: Any) -> None:
    llm_server.enqueue(stall(send_headers=False, hold_s=20))
    async with LLMClient(config(llm_server, stream_stall_timeout=0.5)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat_stream(request())
    assert info.value.code == "stream_stalled"


async def test_heartbeats_keep_a_slow_stream_alive(llm_server: Any) -> None:
    # 1.6 s of nothing but keep-alive comments every 0.2 s, then the answer
    beats = [KEEP_ALIVE] * 8
    chunk = {"choices": [{"index": 0, "delta": {"content": "awake"}, "finish_reason": "stop"}]}
    llm_server.enqueue(raw_sse([*beats, chunk], include_done=True, event_delay_s=0.2))
    async with LLMClient(config(llm_server, stream_stall_timeout=0.5)) as client:
        resp = await client.chat_stream(request())
    assert resp.message.content == "awake"


@pytest.mark.parametrize("token_kind", ["CancelToken", "poll-only"])
@pytest.mark.parametrize("where", ["mid-stream stall", "before headers"])
async def test_cancel_returns_within_a_second(llm_server: Any, token_kind: str, where: str) -> None:
    if where == "before headers":
        llm_server.enqueue(stall(send_headers=False, hold_s=30))
    else:
        llm_server.enqueue(stall(after_events=3, hold_s=30))
    token: Any = CancelToken.new_root() if token_kind == "CancelToken" else PollOnly()

    def fire() -> None:
        if isinstance(token, CancelToken):
            token.cancel("user")
        else:
            token.flag = True

    rec = Recorder()
    async with LLMClient(config(llm_server, stream_stall_timeout=60, recv_timeout=60)) as client:
        loop = asyncio.get_running_loop()
        fired_at: list[float] = []
        loop.call_later(0.3, lambda: (fired_at.append(time.monotonic()), fire()))
        with pytest.raises(LLMError) as info:
            await client.chat_stream(request(cancel=token), rec.handlers())
        latency = time.monotonic() - fired_at[0]
        assert latency < 1.0
        assert (info.value.kind, info.value.code, info.value.retryable) == (
            "cancelled",
            "cancelled",
            False,
        )
        assert rec.errors == [info.value] and rec.done == []
        # the task is usable afterwards: no stray cancellation left behind
        await asyncio.sleep(0.05)
        llm_server.enqueue("after cancel")
        resp = await client.chat_stream(request())
        assert resp.message.content == "after cancel"


async def test_cancelled_before_start_sends_nothing(llm_server: Any) -> None:
    token = CancelToken.new_root()
    token.cancel()
    async with LLMClient(config(llm_server)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat_stream(request(cancel=token))
        assert info.value.code == "cancelled"
        with pytest.raises(LLMError):
            await client.chat(request(cancel=token))
    assert llm_server.requests == []


async def test_cancel_non_streaming(llm_server: Any) -> None:
    llm_server.enqueue(text_reply("slow", delay_s=10))
    token = CancelToken.new_root()
    async with LLMClient(config(llm_server)) as client:
        asyncio.get_running_loop().call_later(0.2, token.cancel)
        started = time.monotonic()
        with pytest.raises(LLMError) as info:
            await client.chat(request(cancel=token))
    assert info.value.code == "cancelled"
    assert time.monotonic() - started < 1.2


async def test_asyncio_task_cancellation_propagates_and_closes(llm_server: Any) -> None:
    llm_server.enqueue(stall(after_events=3, hold_s=30))
    rec = Recorder()
    first_text = asyncio.Event()
    handlers = {**rec.handlers(), "on_text": lambda t: (rec.text.append(t), first_text.set())}
    async with LLMClient(config(llm_server, stream_stall_timeout=60)) as client:
        task = asyncio.create_task(client.chat_stream(request(), handlers))
        await asyncio.wait_for(first_text.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert rec.errors == [] and rec.done == []
        llm_server.enqueue("next")
        resp = await client.chat_stream(request())
    assert resp.message.content == "next"


async def test_outer_timeout_is_not_swallowed(llm_server: Any) -> None:
    """asyncio.timeout() around a stalled call still raises TimeoutError (not an LLMError)."""
    llm_server.enqueue(stall(after_events=2, hold_s=30))
    async with LLMClient(config(llm_server, stream_stall_timeout=60)) as client:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await client.chat_stream(request())


async def test_async_handlers_are_awaited(llm_server: Any) -> None:
    llm_server.enqueue(
        text_reply(
            "hello async world",
            reasoning="think",
            usage={"prompt_tokens": 3, "completion_tokens": 4},
        )
    )
    rec = Recorder()
    async with LLMClient(config(llm_server)) as client:
        resp = await client.chat_stream(request(), rec.async_handlers())
    assert "".join(rec.text) == "hello async world"
    assert "".join(rec.reasoning) == "think"
    assert rec.usage[-1].total_tokens == 7
    assert rec.done == [resp]


async def test_handler_exception_propagates_unchanged(llm_server: Any) -> None:
    llm_server.enqueue("boom")

    def bad(_: str) -> None:
        raise RuntimeError("handler bug")

    async with LLMClient(config(llm_server)) as client:
        with pytest.raises(RuntimeError, match="handler bug"):
            await client.chat_stream(request(), {"on_text": bad})

"""Every error code, its kind and retryable flag, over real HTTP."""

from __future__ import annotations

import json
import logging
import time
from email.utils import formatdate
from typing import Any

import pytest

from smith_tui.llm import LLMClient, LLMConfig, LLMError, Secret
from tests.llm.helpers import Recorder, config, request
from tests.support.llm_script import (
    disconnect_after,
    event_error,
    http_error,
    in_stream_error,
    malformed_json_event,
    raw_sse,
    stall,
    text_reply,
)
from tests.support.ports import refusing_port


async def stream_error(server: Any, reply: Any, **cfg: Any) -> LLMError:
    server.enqueue(reply)
    rec = Recorder()
    async with LLMClient(config(server, **cfg)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat_stream(request(), rec.handlers())
    assert rec.errors == [info.value]
    assert rec.done == []
    return info.value


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (408, True),
        (409, True),
        (422, False),
        (425, True),
        (429, True),
        (500, True),
        (502, True),
        (503, True),
    ],
)
async def test_http_status_codes(llm_server: Any, status: int, retryable: bool) -> None:
    err = await stream_error(
        llm_server, http_error(status, {"error": {"message": "nope", "code": "x"}})
    )
    assert err.code == f"http_{status}"
    assert err.kind == "http"
    assert err.retryable is retryable
    assert "nope" in err.message
    assert err.data["status"] == status
    assert err.data["provider_code"] == "x"


async def test_http_error_non_streaming_and_plain_text_body(llm_server: Any) -> None:
    llm_server.enqueue(http_error(502, "Bad gateway from the proxy"))
    async with LLMClient(config(llm_server)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat(request())
    assert info.value.code == "http_502"
    assert "Bad gateway from the proxy" in info.value.message


async def test_retry_after_seconds_and_date(llm_server: Any) -> None:
    err = await stream_error(llm_server, http_error(429, retry_after=7))
    assert err.retry_after == 7.0
    assert err.to_dict()["retry_after"] == 7.0
    date = formatdate(time.time() + 30, usegmt=True)
    err = await stream_error(llm_server, http_error(503, retry_after=date))
    assert 20 <= err.retry_after <= 31


async def test_in_stream_error_payload(llm_server: Any) -> None:
    err = await stream_error(
        llm_server, in_stream_error("Token limit reached", 400, text="partial")
    )
    assert (err.kind, err.code, err.retryable) == ("provider", "stream_error", False)
    assert "Token limit reached" in err.message and "400" in err.message
    err = await stream_error(llm_server, in_stream_error("upstream overloaded", 502))
    assert err.retryable is True
    assert err.data["provider_code"] == 502


async def test_event_error(llm_server: Any) -> None:
    err = await stream_error(llm_server, event_error("validation failed", "tool_use_failed"))
    assert (err.kind, err.code, err.retryable) == ("provider", "stream_error", False)
    assert err.data["event"] == "error"
    assert err.data["provider_code"] == "tool_use_failed"
    err = await stream_error(llm_server, raw_sse(["event: error\ndata: something broke\n\n"]))
    assert err.code == "stream_error" and "something broke" in err.message


async def test_error_in_non_streaming_200_body(llm_server: Any) -> None:
    llm_server.enqueue(
        http_error(
            200,
            {"error": {"message": "model overloaded", "code": 529}},
            content_type="application/json",
        )
    )
    async with LLMClient(config(llm_server)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat(request())
    assert (info.value.code, info.value.retryable) == ("provider_error", True)


async def test_invalid_json(llm_server: Any) -> None:
    err = await stream_error(llm_server, malformed_json_event())
    assert (err.kind, err.code, err.retryable) == ("protocol", "invalid_json", False)
    assert "{not json" in err.message


async def test_connect_failed() -> None:
    with refusing_port() as port:
        async with LLMClient(LLMConfig(api_url=f"http://127.0.0.1:{port}")) as client:
            with pytest.raises(LLMError) as info:
                await client.chat_stream(request())
    assert (info.value.kind, info.value.code, info.value.retryable) == (
        "transport",
        "connect_failed",
        True,
    )


async def test_read_timeout_is_timeout(llm_server: Any) -> None:
    err = await stream_error(
        llm_server, stall(after_events=2, hold_s=5), recv_timeout=0.3, stream_stall_timeout=30
    )
    assert (err.kind, err.code, err.retryable) == ("transport", "timeout", True)
    err = await stream_error(
        llm_server, stall(send_headers=False, hold_s=5), recv_timeout=0.3, stream_stall_timeout=30
    )
    assert err.code == "timeout"


async def test_non_streaming_deadline(llm_server: Any) -> None:
    llm_server.enqueue(text_reply("late", delay_s=3))
    started = time.monotonic()
    async with LLMClient(config(llm_server, timeout=0.4)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat(request())
    assert time.monotonic() - started < 1.5
    assert (info.value.code, info.value.retryable) == ("timeout", True)


async def test_disconnect_mid_stream(llm_server: Any) -> None:
    err = await stream_error(llm_server, disconnect_after(4))
    assert (err.kind, err.code, err.retryable) == ("transport", "disconnected", True)
    err = await stream_error(llm_server, disconnect_after(4, reset=True))
    assert err.code in ("read_error", "disconnected")
    assert err.retryable is True


async def test_disconnect_after_done_is_success(llm_server: Any) -> None:
    reply = text_reply("complete answer")
    llm_server.enqueue(disconnect_after(len(reply.events), reply))
    async with LLMClient(config(llm_server)) as client:
        resp = await client.chat_stream(request())
    assert resp.message.content == "complete answer"


def test_bad_config_is_a_clear_error() -> None:
    for bad, text in [
        ({"api_url": ""}, "api_url"),
        ({"api_url": "ftp://x"}, "http:// or https://"),
        ({"api_url": "http://x", "timeout": 0}, "timeout must be a positive number"),
        ({"api_url": "http://x", "recv_timeout": "soon"}, "recv_timeout"),
        ({"api_url": "http://x", "extra_headers": {"X": 1}}, "extra_headers"),
        ({"timeout": 5}, "missing api_url"),
    ]:
        with pytest.raises(LLMError) as info:
            LLMClient(bad)
        assert info.value.code == "config_invalid", bad
        assert text in info.value.message


async def test_bad_request_shapes(llm_server: Any) -> None:
    async with LLMClient(config(llm_server)) as client:
        for bad, text in [
            ({"model": "", "messages": [{"role": "user", "content": "x"}]}, "model"),
            ({"messages": [{"role": "user", "content": "x"}]}, "missing 'model'"),
            (
                {
                    "model": "m",
                    "messages": [{"role": "user", "content": "x"}],
                    "temperature": "hot",
                },
                "temperature",
            ),
            (
                {
                    "model": "m",
                    "messages": [{"role": "user", "content": "x"}],
                    "max_new_tokens": -1,
                },
                "max_new_tokens",
            ),
            (
                {
                    "model": "m",
                    "messages": [{"role": "user", "content": "x"}],
                    "extra": {"stream": False},
                },
                "extra may not set",
            ),
            (
                {"model": "m", "messages": [{"role": "user", "content": object()}]},
                "not JSON-serialisable",
            ),
        ]:
            rec = Recorder()
            with pytest.raises(LLMError) as info:
                await client.chat_stream(bad, rec.handlers())
            assert info.value.kind == "schema", bad
            assert text in info.value.message
            assert rec.errors == [info.value]
    assert llm_server.requests == []


KEY = "sk-test-SECRET-4f8a9c2e7d"


async def test_api_key_never_leaks(llm_server: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    cfg = config(llm_server, api_key=KEY)
    echo = {
        "error": {
            "message": f"Incorrect API key provided: {KEY}",
            "code": "invalid_api_key",
            "key": KEY,
        }
    }
    llm_server.enqueue(
        http_error(401, echo),
        in_stream_error(f"key {KEY} is over quota", 429),
        raw_sse([f"event: error\ndata: bad key Bearer {KEY}\n\n"]),
    )
    errors = []
    async with LLMClient(cfg) as client:
        for _ in range(3):
            with pytest.raises(LLMError) as info:
                await client.chat_stream(request())
            errors.append(info.value)
        assert KEY not in repr(client)
    # the key did go out in the header
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert [e.code for e in errors] == ["http_401", "stream_error", "stream_error"]
    for err in errors:
        for text in (str(err), repr(err), err.message, json.dumps(err.to_dict(), default=str)):
            assert KEY not in text
        assert "***" in err.message
    for text in (repr(cfg), str(cfg), repr(cfg.api_key), str(Secret(KEY))):
        assert KEY not in text
    assert KEY not in caplog.text


def test_mapping_config_key_is_wrapped() -> None:
    client = LLMClient({"api_url": "http://127.0.0.1:9/v1", "api_key": KEY, "retry_max_retries": 2})
    assert isinstance(client.config.api_key, Secret)
    assert client.config.api_key.reveal() == KEY
    assert client.build_headers()["Authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(client.config)


async def test_invalid_response_shapes(llm_server: Any) -> None:
    llm_server.enqueue(
        http_error(200, {"id": "x", "object": "chat.completion"}),
        http_error(200, "not json at all", content_type="application/json"),
    )
    async with LLMClient(config(llm_server)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat(request())
        assert (info.value.kind, info.value.code) == ("protocol", "invalid_response")
        with pytest.raises(LLMError) as info:
            await client.chat(request())
        assert info.value.code == "invalid_json"

"""URL normalisation, headers and the request body as the server receives it."""

from __future__ import annotations

from typing import Any

import pytest

import smith_tui.llm as llm
from smith_tui.llm import (
    ChatRequest,
    LLMClient,
    LLMConfig,
    build_chat_request,
    build_endpoint,
    normalize_api_url,
    serialize_request_body,
)
from tests.llm.helpers import config, request
from tests.support.llm_script import http_error, text_reply, tool_call


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"),
        ("http://127.0.0.1:8080/v1//", "http://127.0.0.1:8080/v1"),
        ("  https://openrouter.ai/api  ", "https://openrouter.ai/api/v1"),
        ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"),
        ("https://open.bigmodel.cn/api/paas/v4/", "https://open.bigmodel.cn/api/paas/v4"),
        (
            "https://generativelanguage.googleapis.com/v1beta/openai/",
            "https://generativelanguage.googleapis.com/v1beta/openai",
        ),
        ("http://h:1/v1/chat/completions", "http://h:1/v1"),
        ("http://h:1/proxy", "http://h:1/proxy/v1"),
    ],
)
def test_normalize_api_url(given: str, expected: str) -> None:
    assert normalize_api_url(given) == expected
    assert LLMClient(LLMConfig(api_url=given)).base_url == expected


def test_build_endpoint() -> None:
    assert build_endpoint("http://h:1") == "http://h:1/v1/chat/completions"
    assert build_endpoint("http://h:1/v1/", "models") == "http://h:1/v1/models"


def test_headers() -> None:
    client = LLMClient(LLMConfig(api_url="http://h", extra_headers={"X-Title": "smith"}))
    headers = client.build_headers(stream=True)
    assert "Authorization" not in headers
    assert headers["Accept"] == "text/event-stream"
    assert headers["X-Title"] == "smith"
    assert headers["Content-Type"] == "application/json"


def test_body_building() -> None:
    req = ChatRequest(
        model="m",
        messages=[{"role": "user", "content": "x"}],
        tools=[{"type": "function", "function": {"name": "t", "parameters": {}}}],
        tool_choice="auto",
        temperature=0.2,
        max_new_tokens=50,
        extra={"top_p": 0.9},
    )
    body = build_chat_request(req, stream=True)
    assert body["max_tokens"] == 50 and "max_new_tokens" not in body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["tool_choice"] == "auto" and body["top_p"] == 0.9
    plain = build_chat_request(req, stream=False)
    assert plain["stream"] is False and "stream_options" not in plain
    dropped = build_chat_request({**req.__dict__, "extra": {"stream_options": None}}, stream=True)
    assert "stream_options" not in dropped
    assert serialize_request_body({"a": "é"}) == '{"a":"é"}'.encode()


def test_dict_request_with_max_tokens_and_unknown_keys() -> None:
    body = build_chat_request(
        {"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 9, "seed": 1}
    )
    assert body["max_tokens"] == 9 and body["seed"] == 1


async def test_server_receives_the_body(llm_server: Any) -> None:
    llm_server.enqueue("one", "two")
    async with LLMClient(config(llm_server, api_key="k-123456")) as client:
        await client.chat_stream(request(temperature=0.5, max_new_tokens=7))
        await client.chat(request())
    streamed, plain = llm_server.chat_requests()
    assert streamed["model"] == "m"
    assert streamed["messages"] == [{"role": "user", "content": "hi"}]
    assert streamed["temperature"] == 0.5 and streamed["max_tokens"] == 7
    assert streamed["stream_options"] == {"include_usage": True}
    assert plain["stream"] is False and "stream_options" not in plain
    first = llm_server.requests[0]
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer k-123456"
    assert first.headers["accept"] == "text/event-stream"


async def test_non_streaming_chat(llm_server: Any) -> None:
    call = tool_call("read_file", {"path": "a.txt"}, id="call_a")
    llm_server.enqueue(
        text_reply(
            "Reading.",
            reasoning="plan",
            tool_calls=[call],
            usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        )
    )
    async with LLMClient(config(llm_server)) as client:
        resp = await client.chat(request())
    assert resp.message.content == "Reading."
    assert resp.reasoning == "plan"
    assert [(t.id, t.name, t.parsed_arguments()) for t in resp.tool_calls] == [
        ("call_a", "read_file", {"path": "a.txt"})
    ]
    assert resp.finish_reason == "tool_calls"
    assert resp.usage is not None and resp.usage.total_tokens == 15
    assert resp.raw["object"] == "chat.completion"
    wire = resp.to_wire_message()
    assert wire == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path":"a.txt"}'},
            }
        ],
    }
    assert resp.to_wire_message(include_reasoning=True)["reasoning_content"] == "plan"


async def test_stream_request_answered_with_json(llm_server: Any) -> None:
    """A server that ignores stream=true and sends one JSON body still works."""
    completion = text_reply("whole body").completion
    llm_server.enqueue(http_error(200, completion))
    texts: list[str] = []
    async with LLMClient(config(llm_server)) as client:
        resp = await client.chat_stream(request(), {"on_text": texts.append})
    assert resp.message.content == "whole body"
    assert texts == ["whole body"]


async def test_module_level_functions(llm_server: Any) -> None:
    llm_server.enqueue("a", "b")
    cfg = {"api_url": llm_server.url}  # without /v1: normalised
    resp = await llm.chat(cfg, request())
    assert resp.message.content == "a"
    got: list[str] = []
    resp = await llm.chat_stream(cfg, request(), {"on_text": got.append})
    assert "".join(got) == "b"
    client = llm.new(cfg)
    assert isinstance(client, LLMClient)
    await client.aclose()


async def test_stream_with_n_gt_1_request_via_extra(llm_server: Any) -> None:
    llm_server.enqueue("x")
    async with LLMClient(config(llm_server)) as client:
        await client.chat_stream(request(extra={"n": 3, "stream_options": None}))
    body = llm_server.chat_requests()[0]
    assert body["n"] == 3 and "stream_options" not in body

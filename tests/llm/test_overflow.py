"""Context-length refusals of real providers become ``context_overflow``, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from smith_tui.llm import CONTEXT_OVERFLOW, LLMClient, LLMError
from tests.llm.helpers import Recorder, config, request
from tests.support.llm_script import event_error, http_error, in_stream_error

TOO_LONG_ASK = "Please reduce the length of the messages or completion."


async def stream_error(server: Any, reply: Any) -> LLMError:
    server.enqueue(reply)
    async with LLMClient(config(server)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat_stream(request(), Recorder().handlers())
    return info.value


@pytest.mark.parametrize(
    ("status", "body"),
    [
        pytest.param(
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens. However, "
                    "your messages resulted in 131072 tokens. " + TOO_LONG_ASK,
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
            id="openai",
        ),
        pytest.param(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 215000 tokens > 200000 maximum",
                },
            },
            id="anthropic-compatible",
        ),
        pytest.param(
            400,
            {
                "object": "error",
                "message": "This model's maximum context length is 32768 tokens. However, you "
                "requested 40000 tokens (39000 in the messages, 1000 in the completion). "
                + TOO_LONG_ASK,
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
            id="vllm",
        ),
        pytest.param(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 5000,
                    "n_ctx": 4096,
                }
            },
            id="llama.cpp",
        ),
        pytest.param(
            400,
            {
                "error": {
                    "message": "This endpoint's maximum context length is 200000 tokens. "
                    "However, you requested about 250000 tokens. Please reduce the length.",
                    "code": 400,
                }
            },
            id="openrouter",
        ),
        pytest.param(
            400,
            {
                "error": {
                    "message": TOO_LONG_ASK,
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
            id="groq",
        ),
        pytest.param(413, "prompt is too long for this model", id="plain-text-413"),
    ],
)
async def test_http_context_length_refusals(llm_server: Any, status: int, body: Any) -> None:
    err = await stream_error(llm_server, http_error(status, body))
    assert (err.kind, err.code, err.retryable) == ("http", CONTEXT_OVERFLOW, False)
    assert err.data["status"] == status
    assert f"HTTP {status}" in err.message


async def test_in_stream_context_length_refusals(llm_server: Any) -> None:
    # OpenRouter: a 200 stream whose chunk carries the error
    message = "This endpoint's maximum context length is 8192 tokens. However, you requested 9000"
    err = await stream_error(llm_server, in_stream_error(message, 400))
    assert (err.kind, err.code, err.retryable) == ("provider", CONTEXT_OVERFLOW, False)
    # Groq: an `event: error` frame
    err = await stream_error(llm_server, event_error(TOO_LONG_ASK, "context_length_exceeded"))
    assert (err.code, err.retryable) == (CONTEXT_OVERFLOW, False)


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        # Groq's tokens-per-minute limit also says "too large": a rate limit, not an overflow
        (
            413,
            {
                "error": {
                    "message": "Request too large for model `llama3-70b` on tokens per minute "
                    "(TPM): Limit 6000, Requested 9000, please reduce your message size.",
                    "type": "tokens",
                    "code": "rate_limit_exceeded",
                }
            },
            "http_413",
        ),
        (400, {"error": {"message": "messages: missing content", "code": "x"}}, "http_400"),
        # an overflow wording on a status that is not a refusal of the request keeps its code
        (500, {"error": {"message": "maximum context length is 4096 tokens"}}, "http_500"),
    ],
)
async def test_other_errors_keep_their_code(
    llm_server: Any, status: int, body: Any, code: str
) -> None:
    err = await stream_error(llm_server, http_error(status, body))
    assert err.code == code

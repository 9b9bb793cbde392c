"""The server check (``smith doctor``'s probes) over real HTTP to the scripted server, which
replays the recorded provider streams byte for byte."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from smith_tui.llm import LLMClient, LLMConfig
from smith_tui.llm.server_check import LIMIT_TOKENS, PROBE_TOOL, ServerCheck, check_server
from tests.support.llm_server import (
    STREAMS_DIR,
    ScriptedLLMServer,
    Usage,
    http_error,
    replay_file,
    text_reply,
    tool_call,
)

_ECHO = tool_call(PROBE_TOOL, {"word": "ping"})


async def _check(server: ScriptedLLMServer, *, configured: Sequence[str] = ()) -> ServerCheck:
    async with LLMClient(LLMConfig(api_url=server.base_url)) as client:
        return await check_server(client, server.base_url, configured=configured)


def _recorded(prefix: str) -> str:
    return str(next(STREAMS_DIR.glob(f"{prefix}_*")))


@pytest.mark.parametrize(
    ("prefix", "fields", "usage_chunks", "calls"),
    [
        ("02", (), 1, True),
        ("04", ("reasoning", "reasoning_details"), 1, False),
        ("09", ("reasoning_content",), 1, False),
        ("12", ("reasoning",), 1, True),
        ("15", ("reasoning_details",), 1, False),
        ("16", ("<think> in content",), 1, False),
        ("20", ("harmony channels in content",), 1, False),
        ("23", (), 0, True),
        ("25", (), 11, False),
    ],
)
async def test_recorded_streams_show_their_fields(
    prefix: str, fields: tuple[str, ...], usage_chunks: int, calls: bool
) -> None:
    with ScriptedLLMServer() as server:
        server.enqueue(replay_file(_recorded(prefix)), text_reply("1 2 3", finish_reason="length"))
        found = await _check(server)
    probe = found.tool_probe
    assert found.tool_error is None and probe is not None
    assert probe.streamed
    assert set(probe.reasoning_fields) == set(fields)
    assert probe.usage_chunks == usage_chunks
    assert bool(probe.tool_calls) is calls
    # A recorded call is for the recorder's own tool, never the probe's: not a pass.
    assert not found.tool_call_works
    assert found.max_tokens_honoured is True


async def test_an_openai_like_server_passes_every_probe_and_gets_the_requests_it_should() -> None:
    with ScriptedLLMServer() as server:
        server.enqueue(
            text_reply(tool_calls=[_ECHO], usage=Usage(30, 9)),
            text_reply("1 2 3 4 5", finish_reason="length", usage=Usage(20, LIMIT_TOKENS)),
        )
        found = await _check(server)
        tool_body, limit_body = server.chat_requests()
    assert (found.model, found.model_source) == ("scripted-model", "first listed")
    assert found.tool_call_works and found.tool_probe is not None
    assert found.tool_probe.usage_in_stream
    assert found.max_tokens_honoured is True
    assert [t["function"]["name"] for t in tool_body["tools"]] == [PROBE_TOOL]
    assert tool_body["stream"] is True
    assert tool_body["stream_options"] == {"include_usage": True}
    assert limit_body["max_tokens"] == LIMIT_TOKENS and "tools" not in limit_body


async def test_a_server_that_ignores_max_tokens_and_sends_no_usage_is_seen_as_such() -> None:
    with ScriptedLLMServer() as server:
        server.enqueue(
            text_reply(tool_calls=[_ECHO]),
            text_reply(" ".join(str(n) for n in range(1, 401)), finish_reason="stop"),
        )
        found = await _check(server)
    assert found.tool_probe is not None and not found.tool_probe.usage_in_stream
    assert found.max_tokens_honoured is False


async def test_a_server_without_tools_fails_the_tool_probe_with_its_own_words() -> None:
    with ScriptedLLMServer() as server:
        server.enqueue(
            http_error(400, {"error": {"message": "tools are not supported by this model"}}),
            text_reply("1 2", finish_reason="length"),
        )
        found = await _check(server)
    assert found.tool_error is not None and "tools are not supported" in found.tool_error
    assert not found.tool_call_works


async def test_configured_model_is_preferred_when_listed_and_models_error_is_kept() -> None:
    catalog = {"data": [{"id": "a"}, {"id": "b"}]}
    with ScriptedLLMServer(catalog=catalog) as server:
        server.enqueue(text_reply(tool_calls=[_ECHO]), text_reply("1", finish_reason="length"))
        found = await _check(server, configured=["zz", "b"])
    assert (found.model, found.model_source) == ("b", "configured")
    with ScriptedLLMServer(catalog_status=503) as server:
        found = await _check(server)
    assert found.models_error and found.model is None and found.tool_probe is None

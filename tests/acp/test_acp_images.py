"""Image prompts through `smith acp` (Python SDK client, scripted server): an image block
becomes a Chat-Completions image content part (a base64 data URL) after the prompt's text,
in this request and in the history of the next; a model the catalog lists without image
input, a type the servers do not take and data that is not base64 are refused, saying why,
and nothing is sent to the model."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest
from acp import image_block, text_block

from tests.acp.test_acp_agent import EditorClient, _error_of, agent
from tests.acp.test_acp_sessions import CATALOG
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import make_git_repo


def tiny_png() -> bytes:
    """A real 1x1 PNG (signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


PNG = base64.b64encode(tiny_png()).decode()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "repo")


def _prompts(request: dict) -> list[dict]:
    """The user messages of a request (the engine's state snapshot left out)."""
    return [
        m
        for m in request["messages"]
        if m["role"] == "user" and not str(m["content"]).startswith("[state snapshot]")
    ]


def _last_user(request: dict) -> dict:
    return _prompts(request)[-1]


async def test_image_prompt_goes_as_a_content_part_and_is_refused_without_image_input(
    tmp_path: Path, repo: Path
) -> None:
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("a green pixel"), text_reply("still green"))
        client = EditorClient()
        async with agent(tmp_path, repo, server, client) as conn:
            session = await conn.new_session(cwd=str(repo), mcp_servers=[])
            sid = session.session_id
            await conn.set_config_option(config_id="model", session_id=sid, value="vision-model")
            done = await conn.prompt(
                session_id=sid,
                prompt=[text_block("what is this?"), image_block(PNG, "image/png")],
            )
            assert done.stop_reason == "end_turn"
            await conn.prompt(session_id=sid, prompt=[text_block("and now?")])

            await conn.set_config_option(config_id="model", session_id=sid, value="text-model")
            refused = await _error_of(
                conn.prompt(
                    session_id=sid, prompt=[text_block("this?"), image_block(PNG, "image/png")]
                )
            )
            await conn.set_config_option(config_id="model", session_id=sid, value="vision-model")
            tiff = await _error_of(
                conn.prompt(session_id=sid, prompt=[image_block(PNG, "image/tiff")])
            )
            garbage = await _error_of(
                conn.prompt(session_id=sid, prompt=[image_block("not base64!", "image/png")])
            )
        requests = server.chat_requests()

    url = f"data:image/png;base64,{PNG}"
    image_turn = _last_user(requests[0])
    assert image_turn["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": url}},
    ]
    assert requests[0]["model"] == "vision-model"
    # The next request resends the image with its prompt (it is part of the history).
    history = _prompts(requests[1])
    assert {"type": "image_url", "image_url": {"url": url}} in history[0]["content"]
    assert _last_user(requests[1])["content"] == "and now?"
    # The refusals said why, and nothing more went to the server.
    assert len(requests) == 2
    assert "the model text-model does not take images" in json.dumps(refused)
    assert "images of type 'image/tiff' are not taken" in json.dumps(tiff)
    assert "not valid base64" in json.dumps(garbage)


async def test_a_model_the_catalog_says_nothing_about_is_refused_images(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    """Control for the test above: the default catalog lists its model without modalities,
    and the same image prompt is refused (fail closed), naming the model."""
    client = EditorClient()
    async with agent(tmp_path, repo, llm_server, client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        refused = await _error_of(
            conn.prompt(
                session_id=session.session_id,
                prompt=[text_block("see"), image_block(PNG, "image/png")],
            )
        )
    assert "the model scripted-model does not take images" in json.dumps(refused)
    assert llm_server.chat_requests() == []

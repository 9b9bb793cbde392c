"""The max output the catalog gives for the selected model goes out as ``max_tokens``.

Real runtime, the scripted server over HTTP serving both ``GET /models`` and the chat.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.dispatch.support import child_bodies, dispatch, parent_bodies, report
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import open_runtime


def catalog(**entry: Any) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": "scripted-model", "object": "model", **entry}]}


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        # OpenRouter: what the routed provider accepts
        ({"top_provider": {"context_length": 200000, "max_completion_tokens": 64000}}, 64000),
        ({"max_output_tokens": 8192, "context_window": 131072}, 8192),
        ({"max_completion_tokens": 2048}, 2048),
    ],
)
async def test_catalog_max_output_is_sent_as_max_tokens(
    tmp_path: Path, llm_server: ScriptedLLMServer, entry: dict[str, Any], expected: int
) -> None:
    llm_server.catalog = catalog(**entry)
    llm_server.enqueue(text_reply("ok"))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "completed"
    assert runtime.last_selection.max_output_tokens == expected
    (body,) = llm_server.chat_requests()
    assert body["max_tokens"] == expected
    assert "max_new_tokens" not in body
    await runtime.aclose()


async def test_no_max_tokens_when_the_catalog_has_none(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.catalog = catalog(context_length=32768)
    llm_server.enqueue(text_reply("ok"))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    await runtime.run_turn("hi")
    (body,) = llm_server.chat_requests()
    assert "max_tokens" not in body  # the server's own default applies
    await runtime.aclose()


async def test_a_dispatched_child_sends_max_tokens_too(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.catalog = catalog(top_provider={"max_completion_tokens": 3000})
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("explorer", "Find how the tests are run")]),
        text_reply(
            tool_calls=[report(status="ok", summary="pytest", findings="pytest", evidence=["x:1"])]
        ),
        text_reply("done"),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("look around", role="orchestrator")
    assert result.stop_reason == "completed"
    bodies = parent_bodies(llm_server) + child_bodies(llm_server)
    assert len(bodies) == 3
    assert [b["max_tokens"] for b in bodies] == [3000, 3000, 3000]
    await runtime.aclose()

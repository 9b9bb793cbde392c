"""What a stored transcript looks like on the wire: reasoning is kept, never sent back.

The rule (smith_tui.engine.prompt): ``reasoning``, ``reasoning_content`` and
``reasoning_details`` stay in the stored transcript only. DeepSeek refuses a request whose
history holds ``reasoning_content``; OpenRouter and the others accept a history without
reasoning. Checked over the scripted server with recorded provider streams.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.persistence import message_dict
from smith_tui.llm.types import Role, WireFunction, WireMessage, WireToolCall
from tests.support.llm_server import ScriptedLLMServer, replay_file, text_reply, tool_call
from tests.support.runtime import open_runtime
from tests.support.strict import strict_problems

REASONING_KEYS = {"reasoning", "reasoning_content", "reasoning_details"}


def _assistants(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


def _stored(runtime) -> list[dict[str, Any]]:
    stored = runtime.store.conversations.list_messages(runtime.conversations.conversation_id)
    return [message_dict(m) for m in stored]


async def test_openrouter_reasoning_details_are_kept_but_not_sent_back(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(replay_file("04"), text_reply("second answer"))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    first = await runtime.run_turn("think about it")
    assert first.stop_reason == "completed", first.error
    stored = [m for m in _stored(runtime) if m["role"] == "assistant"]
    assert stored[0]["reasoning"]
    details = stored[0]["metadata"]["reasoning_details"]
    assert details and details[0]["type"] == "reasoning.text"

    second = await runtime.run_turn("and now?")
    assert second.stop_reason == "completed", second.error
    body = llm_server.chat_requests()[1]
    [echoed] = _assistants(body)
    assert echoed == {"role": "assistant", "content": stored[0]["content"]}
    assert strict_problems(body["messages"]) == []
    await runtime.aclose()


async def test_deepseek_reasoning_content_is_not_sent_back_within_a_tool_round(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    # reasoning_content, then a tool call (to a tool smith does not have: it answers
    # with an error), then the follow-up request of the same turn.
    llm_server.enqueue(replay_file("10"), text_reply("done"))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("what is the weather?")
    assert result.stop_reason == "completed", result.error
    stored = [m for m in _stored(runtime) if m["role"] == "assistant"]
    assert stored[0]["reasoning"] and stored[0]["tool_calls"]

    body = llm_server.chat_requests()[1]
    [echoed] = _assistants(body)
    assert not echoed.keys() & REASONING_KEYS
    assert set(echoed) == {"role", "content", "tool_calls"}
    assert echoed["tool_calls"][0]["id"] == stored[0]["tool_calls"][0]["id"]
    assert body["messages"][-2]["role"] == "tool"
    assert strict_problems(body["messages"]) == []
    await runtime.aclose()


async def test_request_is_system_transcript_then_snapshot_in_wire_form(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(reasoning="let me look", tool_calls=[tool_call("bash", {"command": "echo hi"})]),
        text_reply("hi it said"),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("run echo")
    assert result.stop_reason == "completed", result.error
    messages = llm_server.chat_requests()[1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[-1]["content"].startswith("[state snapshot]")
    assert messages[2]["content"] == ""
    tool = messages[3]
    assert set(tool) == {"role", "tool_call_id", "name", "content"}  # no metadata, no recall_key
    assert "hi" in tool["content"]
    # The stored transcript keeps what the wire leaves out.
    stored = _stored(runtime)
    assert stored[1]["reasoning"] == "let me look"
    assert stored[2]["metadata"]["ok"] is True
    await runtime.aclose()


def _keys(typed: Any) -> set[str]:
    return set(typed.__required_keys__ | typed.__optional_keys__)


async def test_the_message_types_name_every_key_that_crosses(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    # A round with reasoning and a tool call, then an answer: every message kind there is.
    llm_server.enqueue(
        text_reply(reasoning="let me look", tool_calls=[tool_call("bash", {"command": "echo hi"})]),
        text_reply("hi it said"),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("run echo")
    assert result.stop_reason == "completed", result.error
    roles = set(get_args(Role))
    # What the engine, the store and the app pass around: TranscriptMessage.
    for message in [*runtime.conversations.messages, *_stored(runtime)]:
        assert set(message) <= _keys(TranscriptMessage), message
        assert message["role"] in roles
    # What goes out: WireMessage, its tool calls WireToolCall.
    requests = llm_server.chat_requests()
    sent = [m for body in requests for m in body["messages"]]
    assert len(requests) == 2 and {m["role"] for m in sent} == {
        "system",
        "user",
        "assistant",
        "tool",
    }
    for message in sent:
        assert set(message) <= _keys(WireMessage), message
        for call in message.get("tool_calls") or ():
            assert set(call) == _keys(WireToolCall)
            assert set(call["function"]) == _keys(WireFunction)
    await runtime.aclose()

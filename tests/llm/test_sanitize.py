"""Transcript rules enforced before any byte is sent."""

from __future__ import annotations

from typing import Any

import pytest

from smith_tui.llm import LLMClient, LLMError, sanitize_messages
from tests.llm.helpers import config, request


def call(call_id: Any, name: str = "read", arguments: Any = '{"p": 1}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def result(call_id: str, content: Any = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


USER = {"role": "user", "content": "go"}


def raises(messages: Any, kind: str, code: str, text: str) -> LLMError:
    with pytest.raises(LLMError) as info:
        sanitize_messages(messages)
    err = info.value
    assert (err.kind, err.code) == (kind, code)
    assert text in err.message
    assert err.retryable is False
    return err


def test_valid_transcript_passes_and_is_copied() -> None:
    msgs = [
        USER,
        assistant(call("a"), call("b")),
        result("b"),
        result("a"),
        {"role": "assistant", "content": "done"},
    ]
    out = sanitize_messages(msgs)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool", "assistant"]
    assert out[1]["tool_calls"][0]["id"] == "a"
    assert out is not msgs and out[1] is not msgs[1]


def test_assistant_tool_call_needs_an_id() -> None:
    raises([USER, assistant(call(None)), result("x")], "schema", "schema_invalid", "has no id")
    raises([USER, assistant(call("")), result("x")], "schema", "schema_invalid", "has no id")


def test_assistant_tool_call_needs_a_name() -> None:
    raises(
        [USER, assistant(call("a", name="")), result("a")],
        "schema",
        "schema_invalid",
        "no function name",
    )


def test_tool_result_must_reference_a_known_call() -> None:
    raises(
        [USER, assistant(call("a")), result("zzz")],
        "protocol",
        "protocol_invalid",
        "matches no earlier tool call",
    )
    raises([USER, result("a")], "protocol", "protocol_invalid", "matches no earlier tool call")


def test_tool_result_needs_tool_call_id() -> None:
    raises(
        [USER, assistant(call("a")), {"role": "tool", "content": "x"}],
        "schema",
        "schema_invalid",
        "without tool_call_id",
    )


def test_duplicate_ids_are_rejected() -> None:
    raises(
        [USER, assistant(call("a"), call("a")), result("a")],
        "protocol",
        "protocol_invalid",
        "reuses tool call id 'a'",
    )
    later = [USER, assistant(call("a")), result("a"), assistant(call("a")), result("a")]
    raises(later, "protocol", "protocol_invalid", "reuses tool call id 'a'")


def test_answering_twice_is_rejected() -> None:
    raises(
        [USER, assistant(call("a")), result("a"), result("a")],
        "protocol",
        "protocol_invalid",
        "already answered",
    )


def test_dangling_call_before_next_message_is_rejected() -> None:
    err = raises(
        [USER, assistant(call("a"), call("b")), result("a"), {"role": "user", "content": "?"}],
        "protocol",
        "protocol_invalid",
        "unanswered tool call(s) ['b']",
    )
    assert err.data["pending"] == ["b"]


def test_trailing_unanswered_call_is_rejected() -> None:
    raises(
        [USER, assistant(call("a"))],
        "protocol",
        "protocol_invalid",
        "ends with unanswered tool call(s) ['a']",
    )


def test_tool_content_is_stringified() -> None:
    msgs = [
        USER,
        assistant(call("a"), call("b"), call("c"), call("d"), call("e")),
        result("a", {"ok": True, "n": "é"}),
        result("b", [1, 2]),
        result("c", None),
        result("d", [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]),
        result("e", 42),
    ]
    out = sanitize_messages(msgs)
    assert [m["content"] for m in out[2:]] == ['{"ok": true, "n": "é"}', "[1, 2]", "", "xy", "42"]


def test_arguments_are_normalised() -> None:
    out = sanitize_messages(
        [
            USER,
            assistant(call("a", arguments={"x": 1}), call("b", arguments="")),
            result("a"),
            result("b"),
        ]
    )
    args = [c["function"]["arguments"] for c in out[1]["tool_calls"]]
    assert args == ['{"x": 1}', "{}"]


@pytest.mark.parametrize(
    ("messages", "text"),
    [
        ([], "must not be empty"),
        ("hello", "must be a list"),
        ([42], "must be an object with a role"),
        ([{"role": "robot", "content": "x"}], "has role 'robot'"),
        ([USER, {"role": "assistant", "tool_calls": "nope"}], "tool_calls must be a list"),
    ],
)
def test_shape_errors(messages: Any, text: str) -> None:
    raises(messages, "schema", "schema_invalid", text)


async def test_invalid_transcript_never_reaches_the_server(llm_server: Any) -> None:
    async with LLMClient(config(llm_server)) as client:
        with pytest.raises(LLMError) as info:
            await client.chat_stream(request(messages=[USER, assistant(call("a"))]))
        assert info.value.code == "protocol_invalid"
        with pytest.raises(LLMError):
            await client.chat(request(messages=[USER, assistant(call(""))]))
    assert llm_server.requests == []

"""Tool payload helpers and the tool-call merge rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from smith_tui.llm import (
    ChatResponse,
    LLMError,
    ToolCall,
    ToolCallState,
    build_tool_result_message,
    build_tool_schema,
    extract_stream_tool_calls,
    extract_tool_call,
    extract_tool_calls,
    merge_stream_delta,
)


@dataclass
class Spec:
    name: str
    description: str
    input_schema: dict[str, Any]


def test_build_tool_schema_from_mapping_and_object() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    want = {
        "type": "function",
        "function": {"name": "read", "description": "Read a file", "parameters": schema},
    }
    assert (
        build_tool_schema({"name": "read", "description": "Read a file", "input_schema": schema})
        == want
    )
    assert build_tool_schema(Spec("read", "Read a file", schema)) == want


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        ({"description": "x", "input_schema": {}}, "non-empty string name"),
        ({"name": "t", "input_schema": "nope"}, "input_schema must be"),
        ({"name": "t", "description": 5, "input_schema": {}}, "description must be"),
    ],
)
def test_build_tool_schema_rejects_bad_specs(spec: dict[str, Any], text: str) -> None:
    with pytest.raises(LLMError) as info:
        build_tool_schema(spec)
    assert info.value.kind == "schema" and text in info.value.message


def test_extract_tool_calls_from_wire_message() -> None:
    msg = {
        "role": "assistant",
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "x", "arguments": '{"k":1}'}},
            {"id": "b", "type": "function", "function": {"name": "y", "arguments": {"k": 2}}},
        ],
    }
    calls = extract_tool_calls(msg)
    assert calls == [ToolCall("a", "x", '{"k":1}'), ToolCall("b", "y", '{"k": 2}')]
    assert extract_tool_call(msg) == calls[0]
    assert extract_tool_call({"role": "assistant", "content": "hi"}) is None


def test_result_message_and_id_mapping() -> None:
    call = ToolCall(id="call_9", name="x", arguments="")
    assert call.call_id == "call_9"
    assert build_tool_result_message(call.call_id, {"ok": 1}) == {
        "role": "tool",
        "tool_call_id": "call_9",
        "content": '{"ok": 1}',
    }
    assert build_tool_result_message("c", "text")["content"] == "text"
    with pytest.raises(LLMError):
        build_tool_result_message("", "x")


def test_parsed_arguments() -> None:
    assert ToolCall("a", "x", "").parsed_arguments() == {}
    assert ToolCall("a", "x", '{"a": [1]}').parsed_arguments() == {"a": [1]}
    for bad in ('{"a": ', "[1, 2]"):
        with pytest.raises(LLMError) as info:
            ToolCall("a", "x", bad).parsed_arguments()
        assert info.value.code == "invalid_arguments"


def test_extract_stream_tool_calls() -> None:
    delta = {"tool_calls": [{"index": 0, "function": {"arguments": "{"}}]}
    assert extract_stream_tool_calls(delta) == delta["tool_calls"]
    chunk = {"choices": [{"index": 0, "delta": delta}]}
    assert extract_stream_tool_calls(chunk) == delta["tool_calls"]
    assert extract_stream_tool_calls({"content": "x"}) == []


def frag(index: Any = None, id: Any = None, name: Any = None, args: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if index is not None:
        out["index"] = index
    if id is not None:
        out["id"] = id
    fn = {}
    if name is not None:
        fn["name"] = name
    if args is not None:
        fn["arguments"] = args
    if fn:
        out["function"] = fn
    return out


def test_merge_rules() -> None:
    state = merge_stream_delta(None, [frag(0, "id1", "read", "")])
    merge_stream_delta(state, [frag(0, "id1", "read", '{"p"')])  # repeated id and name
    merge_stream_delta(state, [frag(0, "", None, ': "a"}')])  # empty id must not overwrite
    merge_stream_delta(state, [frag(1, None, "grep", None)])  # no arguments key at all
    merge_stream_delta(state, [frag(1, None, None, "{}")])
    calls = state.finish()
    assert calls == [ToolCall("id1", "read", '{"p": "a"}'), ToolCall("call_1", "grep", "{}")]


def test_same_index_new_id_starts_a_new_call() -> None:
    state = ToolCallState()
    state.merge([frag(0, "a", "x", "{}")])
    state.merge([frag(0, "b", "y", "{}")])
    assert [(c.id, c.name) for c in state.finish()] == [("a", "x"), ("b", "y")]


def test_an_id_repeated_in_one_reply_becomes_unique() -> None:
    state = ToolCallState()
    state.merge([frag(0, "dup", "x", "{}"), frag(1, "dup", "y", "{}"), frag(2, "dup_1", "z", "{}")])
    assert [(c.id, c.name) for c in state.finish()] == [
        ("dup", "x"),
        ("dup_2", "y"),
        ("dup_1", "z"),
    ]


def test_missing_index_matches_by_id_or_continues() -> None:
    state = ToolCallState()
    state.merge([frag(None, "a", "x", '{"q":')])
    state.merge([frag(None, None, None, "1}")])
    state.merge([frag(None, "b", "y", "{}")])
    assert [(c.id, c.arguments) for c in state.finish()] == [("a", '{"q":1}'), ("b", "{}")]


def test_minted_ids_do_not_collide() -> None:
    state = ToolCallState()
    state.merge([frag(0, None, "x", "{}"), frag(1, "call_0", "y", "{}")])
    assert [c.id for c in state.finish()] == ["call_0_1", "call_0"]


def test_deltas_report_progress() -> None:
    state = ToolCallState()
    out = state.merge([frag(3, "z", "x", ""), frag(3, None, None, "{}"), frag(3, "z", "x", "")])
    assert [(d.index, d.id, d.name, d.arguments) for d in out] == [
        (0, "z", "x", ""),
        (0, "z", "x", "{}"),
    ]


def test_response_views_flag_nameless_calls() -> None:
    from smith_tui.llm import ChatMessage

    resp = ChatResponse(
        ChatMessage(content="", tool_calls=[ToolCall("a", "x", "{}"), ToolCall("b", "", "{}")])
    )
    assert [c.id for c in resp.valid_tool_calls] == ["a"]
    assert [c.id for c in resp.invalid_tool_calls] == ["b"]
    wire = resp.to_wire_message()
    assert wire["content"] is None and len(wire["tool_calls"]) == 2

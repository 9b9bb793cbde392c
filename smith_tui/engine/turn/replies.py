"""The transcript's messages of a round: the assistant's reply and the tools' results.

The loop records :func:`assistant_message` before the reply's tools start and one
:func:`tool_message` per call once they all answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from smith_tui.engine.messages import TranscriptMessage
from smith_tui.llm import (
    ChatResponse,
    ToolCall,
    WireToolCall,
    build_tool_result_message,
)
from smith_tui.llm.nesting import load_json
from smith_tui.tools.spec import ToolResult


def assistant_message(response: ChatResponse) -> TranscriptMessage:
    """The assistant message of ``response`` as the transcript keeps it.

    The wire part comes from the client (:meth:`ChatResponse.to_wire_message`, without
    reasoning); the content stays a string even when the model only called tools, the
    reasoning text and details are kept locally (never sent back, see
    :mod:`smith_tui.engine.prompt`), and broken tool-call arguments are replaced (see
    :func:`_transcript_calls`).
    """
    # A new dict of the client's; the local keys are added below.
    message = cast(TranscriptMessage, response.to_wire_message(include_reasoning=False))
    message["content"] = response.content or ""
    metadata: dict[str, Any] = {}
    if message.get("tool_calls"):
        message["tool_calls"], broken = _transcript_calls(message["tool_calls"])
        if broken:
            metadata["raw_arguments"] = broken
    if response.reasoning:
        message["reasoning"] = response.reasoning
    if response.reasoning_details:
        metadata["reasoning_details"] = response.reasoning_details
    if metadata:
        message["metadata"] = metadata
    return message


def tool_message(call: ToolCall, result: ToolResult) -> TranscriptMessage:
    """The tool message that answers ``call`` with ``result``, as the transcript keeps it
    (the client's result message, with the tool's name and our metadata)."""
    message = cast(TranscriptMessage, build_tool_result_message(call.id, result.content))
    message["name"] = result.name
    message["metadata"] = {
        "ok": result.ok,
        "duration_s": round(result.duration_s, 3),
        "mutation_state": result.mutation_state,
        **({"cancelled": True} if result.cancelled else {}),
    }
    exit_code = result.metadata.get("exit_code")
    if isinstance(exit_code, int) and not isinstance(exit_code, bool):
        message["metadata"]["exit_code"] = exit_code  # a reloaded row still shows ✗ exit 1
    recall_key = result.metadata.get("recall_key")
    if recall_key:
        message["recall_key"] = recall_key
    return message


def unique_call_ids(
    calls: list[ToolCall], transcript: Sequence[Mapping[str, Any]]
) -> list[ToolCall]:
    """Rename a call whose id an earlier message already used (some servers start their ids
    from zero in every reply): a transcript that repeats an id is refused by every request
    after it."""
    if not calls:
        return calls
    used = {
        call.get("id")
        for message in transcript
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or ()
    }
    for call in calls:
        base = call.id
        suffix = 0
        while call.id in used:
            suffix += 1
            call.id = f"{base}_{suffix}"
        used.add(call.id)
    return calls


def _transcript_calls(
    calls: list[WireToolCall],
) -> tuple[list[WireToolCall], dict[str, str]]:
    """The calls as the transcript keeps them, and the raw arguments of the broken ones.

    Arguments that are not a JSON object (cut-off or malformed JSON from the model, or
    nested too deeply to decode safely: :func:`~smith_tui.llm.nesting.load_json`) are
    kept as ``"{}"``: strict providers refuse a request whose history holds them. The tool
    still ran with the raw text and answered with the parse error, and the raw text stays
    in the message metadata.
    """
    kept: list[WireToolCall] = []
    broken: dict[str, str] = {}
    for call in calls:
        arguments = call["function"]["arguments"]
        try:
            valid = isinstance(load_json(arguments or "{}"), dict)
        except (TypeError, ValueError):
            valid = False
        if valid:
            kept.append(call)
            continue
        broken[call["id"]] = arguments
        kept.append({**call, "function": {**call["function"], "arguments": "{}"}})
    return kept, broken


def handoff_text(results: Sequence[ToolResult]) -> str:
    """The text a hand-off turn ends with: the sub-agent's summary (or the error)."""
    first = results[0] if results else None
    if first is None:
        return ""
    dispatch = first.metadata.get("dispatch") if first.metadata else None
    if isinstance(dispatch, dict) and dispatch.get("summary"):
        return str(dispatch["summary"])
    return first.error or first.content

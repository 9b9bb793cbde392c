"""Finding tool calls that never got a result (a crash mid-turn) and planning their repair."""

import json
from typing import Any

from smith_tui.store.records import Message

TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"
ARGUMENTS_SHOWN = 2000
"""How many characters of a call's arguments a synthetic result repeats."""


def _call_name(call: dict[str, Any]) -> str:
    function = call.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    if isinstance(name, str):
        return name
    name = call.get("name")
    return name if isinstance(name, str) else "tool"


def _call_arguments(call: dict[str, Any]) -> str:
    function = call.get("function")
    raw = function.get("arguments") if isinstance(function, dict) else call.get("arguments")
    if raw is None:
        return ""
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)


def synthetic_result_text(call_id: str, name: str, arguments: str = "") -> str:
    """The content of a synthetic tool message, starting with the sentinel.

    It says what is known: which tool, with which arguments (cut after
    `ARGUMENTS_SHOWN` characters), and that it may have had effects.
    """
    shown = arguments.strip()
    if len(shown) > ARGUMENTS_SHOWN:
        shown = f"{shown[:ARGUMENTS_SHOWN]}… ({len(shown) - ARGUMENTS_SHOWN} more characters)"
    called = f"the {name} call {call_id}" + (f" with arguments {shown}" if shown else "")
    return (
        f"{TOOL_OUTCOME_UNKNOWN}: no result was recorded for {called}; "
        "the session ended while it ran or before it started. It may have had effects "
        "(in part or in full): check the current state before relying on it or repeating it."
    )


def plan_orphan_repair(messages: list[Message], now: float) -> list[tuple[int, list[Message]]]:
    """Return `(insert_position, synthetic_messages)` pairs, in ascending position order.

    `messages` is a whole conversation in position order. A tool call counts as answered
    when any tool message carries its id, so synthetic results make a second run a no-op.
    """
    answered = {m.tool_call_id for m in messages if m.role == "tool" and m.tool_call_id}
    plan: list[tuple[int, list[Message]]] = []
    for index, message in enumerate(messages):
        if message.role != "assistant" or not message.tool_calls:
            continue
        orphans = [
            call
            for call in message.tool_calls
            if isinstance(call, dict) and call.get("id") and call["id"] not in answered
        ]
        if not orphans:
            continue
        last = index
        while last + 1 < len(messages) and messages[last + 1].role == "tool":
            last += 1
        synthetic = [
            Message(
                id=0,
                conversation_id=message.conversation_id,
                position=0,
                role="tool",
                content=synthetic_result_text(call["id"], _call_name(call), _call_arguments(call)),
                created_at=now,
                tool_call_id=call["id"],
                name=_call_name(call),
                turn_id=message.turn_id,
                round=message.round,
                metadata={"synthetic": True},
            )
            for call in orphans
        ]
        answered.update(call["id"] for call in orphans)
        plan.append((messages[last].position + 1, synthetic))
    return plan
